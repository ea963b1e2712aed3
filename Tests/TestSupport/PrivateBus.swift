import Foundation

/// A dbus-daemon of its own, started from `dbus/test-session.conf`, stopped on deinit.
public final class PrivateBus: Sendable {
    /// The address to connect to, `unix:path=…`.
    public let address: String
    private let process: Process

    public init() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--config-file=\(Paths.packageRoot)/dbus/test-session.conf", "--nofork", "--print-address=1"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data([0x0A]) { break }
            line.append(byte)
        }
        guard let address = String(data: line, encoding: .utf8), address.hasPrefix("unix:") else {
            process.terminate()
            throw TestFailure("dbus-daemon did not print its address")
        }
        self.address = address
        self.process = process
    }

    /// The environment for a client of this bus.
    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        env["NO_COLOR"] = "1"
        return env
    }

    /// Stops the daemon. (Foundation reaps it; `waitUntilExit` can deadlock on a
    /// Swift concurrency thread, so nothing waits here.)
    deinit { process.terminate() }
}

public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

public enum Paths {
    /// The package's root folder, found from this file's location.
    public static let packageRoot: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }()

    /// The built `earshot` tool (`EARSHOT_BIN` overrides).
    public static var earshot: String {
        if let path = ProcessInfo.processInfo.environment["EARSHOT_BIN"] { return path }
        return packageRoot + "/.build/debug/earshot"
    }
}
