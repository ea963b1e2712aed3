import Foundation

// Helpers shared by the audio harness: a synchronous command runner (pactl answers in a few
// milliseconds, and `PulseAudioServer` offers synchronous methods), a watchdog that ties a
// daemon's life to a pipe, and temporary folders removed when the test process exits.

/// Runs a command to completion synchronously, killing it with SIGKILL after `timeout` seconds.
/// For a thread that must not wait for the cooperative pool (see `run` for tasks).
public func runSync(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil, timeout: Double = 10
) throws -> CommandResult {
    let (process, outPipe, errPipe) = makeProcess(executable, arguments, environment: environment)
    try launch(process)
    // Read both pipes to their end on other threads, so that a chatty child cannot block
    // on a full pipe while we wait for it.
    let out = Locked(Data())
    let err = Locked(Data())
    let group = DispatchGroup()
    let outHandle = outPipe.fileHandleForReading
    let errHandle = errPipe.fileHandleForReading
    DispatchQueue.global().async(group: group) {
        let data = outHandle.readDataToEndOfFile()
        try? outHandle.close()
        out.withLock { $0 = data }
    }
    DispatchQueue.global().async(group: group) {
        let data = errHandle.readDataToEndOfFile()
        try? errHandle.close()
        err.withLock { $0 = data }
    }
    if group.wait(timeout: .now() + timeout) == .timedOut {
        kill(process.processIdentifier, SIGKILL)
        keepUntilExit(process)
        _ = group.wait(timeout: .now() + 2)
        throw TestFailure("\(executable) \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
    }
    // From the kernel: Foundation's reaping can lag the exit by a minute (`Child.exitStatus`).
    // Its pipes have ended, so it has exited or is about to.
    let status = waitForExitStatus(of: process)
    keepUntilExit(process)
    return CommandResult(
        status: status,
        stdout: String(decoding: out.value, as: UTF8.self),
        stderr: String(decoding: err.value, as: UTF8.self))
}

/// A child started under a small shell watchdog: `command` runs in the background, and the
/// watchdog kills it with SIGKILL (and reaps it) as soon as its standard input closes — on
/// `stop()`, on deinit, and when the test process dies without running deinits. Children of
/// the Swift test runner inherit an ignored SIGTERM, so SIGTERM alone would not stop them.
final class Watchdog: Sendable {
    private let process: Process
    private let lifeline: FileHandle
    /// The process id of the command (use `exec` in it, so that this is the program's).
    let childPID: Int32

    /// `command` is a shell command line; `arguments` become `$1`, `$2`, … in it.
    init(_ command: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", """
            exec 3>&1 >/dev/null
            \(command) 3>&- &
            pid=$!
            trap 'kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
            echo $pid >&3
            exec 3>&-
            cat >/dev/null
            """, "sh"] + arguments
        if let environment { process.environment = environment }
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try launch(process)
        self.process = process
        self.lifeline = input.fileHandleForWriting
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data([0x0A]) { break }
            line.append(byte)
        }
        try? output.fileHandleForReading.close()
        guard let pid = Int32(String(decoding: line, as: UTF8.self)) else {
            try? input.fileHandleForWriting.close()
            throw TestFailure("the watchdog for “\(command)” did not start")
        }
        self.childPID = pid
    }

    /// Whether the watchdog (and so possibly its child) is still running.
    var isRunning: Bool { process.isRunning }

    /// Kills the child and waits (up to `timeout` seconds) until it has been reaped.
    func stop(timeout: Double = 3) {
        try? lifeline.close()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(500) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        keepUntilExit(process)
    }

    deinit { stop() }
}

/// Temporary folders, removed when the test process exits normally.
enum TemporaryDirectories {
    private static let created = Locked<[String]>([])
    private static let cleanupAtExit: Void = { atexit { TemporaryDirectories.removeAll() } }()

    /// Makes a new folder `/tmp/PREFIX.XXXXXX` (short, so that socket paths stay well under
    /// the 108-byte limit).
    static func make(_ prefix: String) throws -> String {
        var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
        let path: String? = template.withUnsafeMutableBufferPointer { buffer in
            guard let result = mkdtemp(buffer.baseAddress!) else { return nil }
            return String(cString: result)
        }
        guard let path else { throw TestFailure("mkdtemp failed for \(prefix): errno \(errno)") }
        _ = cleanupAtExit
        created.withLock { $0.append(path) }
        return path
    }

    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
        created.withLock { $0.removeAll { $0 == path } }
    }

    private static func removeAll() {
        for path in created.value { try? FileManager.default.removeItem(atPath: path) }
    }
}
