import Foundation

/// A dbus-daemon of its own, started from `dbus/test-session.conf`.
///
/// The daemon runs under a small shell watchdog that kills it when its standard input
/// closes: on deinit, and also when the test process dies without running deinits.
/// (Children of the test runner inherit an ignored SIGTERM, so SIGTERM alone does not
/// stop them.) It listens in a folder of its own, which the watchdog removes with the
/// socket: a daemon killed with SIGKILL leaves its socket file, and the config's
/// `unix:tmpdir=/tmp` left thousands in /tmp over a day of test runs.
public final class PrivateBus: Sendable {
    /// The address to connect to, `unix:path=…`.
    public let address: String
    private let lifeline: FileHandle
    private let process: Process

    public init() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", """
            dir=$(mktemp -d "${TMPDIR:-/tmp}/earshot-bus.XXXXXX") || exit 1
            dbus-daemon --config-file="$1" --address="unix:dir=$dir" --nofork --print-address=1 &
            pid=$!
            trap 'kill -9 $pid; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
            cat >/dev/null
            """, "sh", "\(Paths.packageRoot)/dbus/test-session.conf"]
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try launch(process)
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data([0x0A]) { break }
            line.append(byte)
        }
        guard let address = String(data: line, encoding: .utf8), address.hasPrefix("unix:") else {
            try? input.fileHandleForWriting.close()
            keepUntilExit(process)
            throw TestFailure("dbus-daemon did not print its address")
        }
        self.address = address
        self.lifeline = input.fileHandleForWriting
        self.process = process
    }

    /// The environment for a client of this bus.
    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        env["NO_COLOR"] = "1"
        return env
    }

    /// Stops the daemon by closing the watchdog's input.
    deinit {
        try? lifeline.close()
        keepUntilExit(process)
    }
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

    /// The built `earshot-ios-ports` (iOS code ported by its import block; see `Ports/`).
    public static var iosPorts: String { packageRoot + "/.build/debug/earshot-ios-ports" }

    /// The optimized `earshot`, for tests whose real-time work the debug build cannot do in
    /// time (mixing 768,000 frames a second): `EARSHOT_RELEASE_BIN`, else the installed
    /// system's build that scripts/test makes before its real-time passes
    /// (`scripts/install --build-only`), else `swift build -c release`'s; nil when none is built.
    public static var releaseEarshot: String? {
        if let path = ProcessInfo.processInfo.environment["EARSHOT_RELEASE_BIN"] { return path }
        return [packageRoot + "/.build/install/release/earshot", packageRoot + "/.build/release/earshot"]
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
