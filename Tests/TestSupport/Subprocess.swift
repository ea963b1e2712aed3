public import Foundation
import Synchronization

/// What a finished command printed and returned.
public struct CommandResult: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String
    /// Standard output without the trailing newline.
    public var output: String { stdout.trimmingCharacters(in: .newlines) }
}

private let launchLock = NSLock()

/// Processes whose owners are gone but whose children have not exited yet. Foundation's
/// `Process` must outlive its child on Linux: one released while its child still runs is
/// used after free when the child exits, corrupting memory anywhere in the test process.
private let survivors = Locked<[Process]>([])
private let reaperStarted = Locked(false)

/// Lets Foundation free a `Process` whose child has exited. On Linux a launched `Process`
/// retains itself through the run-loop source it creates, and lets go only in
/// `waitUntilExit()`; one that is never waited for leaks, with the pipes it was given: two
/// descriptors per command (50 launches of `/bin/true` left 100 open). The audio pass
/// reached 1,500 descriptors, and `Process.run`, which adds a close action for every
/// descriptor up to the highest open one, crashed in its memcpy. Returns at once: the child
/// has exited, so there is nothing to wait for.
func release(_ process: Process) {
    precondition(!process.isRunning, "release(_:) is for processes whose child has exited")
    process.waitUntilExit()
}

/// Keeps `process` alive until its child has exited, then releases it.
public func keepUntilExit(_ process: Process) {
    guard process.isRunning else { return release(process) }
    survivors.withLock { $0.append(process) }
    let start = reaperStarted.withLock { started -> Bool in
        defer { started = true }
        return !started
    }
    guard start else { return }
    Thread.detachNewThread {
        while true {
            Thread.sleep(forTimeInterval: 0.2)
            survivors.withLock {
                $0.removeAll { process in
                    guard !process.isRunning else { return false }
                    release(process)
                    return true
                }
            }
        }
    }
}

/// A process for `executable` (found on PATH unless absolute) with piped output and error
/// and no input.
func makeProcess(_ executable: String, _ arguments: [String], environment: [String: String]?) -> (Process, Pipe, Pipe) {
    let process = Process()
    let absolute = executable.hasPrefix("/")
    process.executableURL = URL(fileURLWithPath: absolute ? executable : "/usr/bin/env")
    process.arguments = absolute ? arguments : [executable] + arguments
    if let environment { process.environment = environment }
    let outPipe = Pipe()
    let errPipe = Pipe()
    process.standardOutput = outPipe
    process.standardError = errPipe
    process.standardInput = FileHandle.nullDevice
    return (process, outPipe, errPipe)
}

/// Starts `process`. Foundation's `Process.run()` is not safe to call from several threads
/// at once on Linux (it crashed in memcpy under parallel tests), so launches take turns.
public func launch(_ process: Process) throws {
    try launchLock.withLock { try process.run() }
}

/// How `process`'s child ended, as Foundation's `terminationStatus` says it (the exit code,
/// or the signal's number); nil while it runs.
///
/// Read from the kernel with `waitid(…, WNOWAIT)`, which leaves the child for Foundation to
/// reap (see ``Child/exitStatus``). Where Foundation has reaped it meanwhile (`ECHILD`), its
/// own status follows at once: `terminationStatus` traps until then.
func exitStatus(of process: Process) -> Int32? {
    kernelExitStatus(of: process, flags: WNOHANG)
}

/// Blocks until `process`'s child ends; how it ended, as ``exitStatus(of:)`` says.
func waitForExitStatus(of process: Process) -> Int32 {
    // Without WNOHANG, waitid returns only once the child has exited.
    kernelExitStatus(of: process, flags: 0)!
}

private func kernelExitStatus(of process: Process, flags: Int32) -> Int32? {
    let pid = process.processIdentifier
    while true {
        if !process.isRunning { return process.terminationStatus }
        var info = siginfo_t()
        let result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT | flags)
        if result == -1, errno == EINTR { continue }
        if result == -1 {
            // Reaped by Foundation, which is about to say so.
            usleep(100)
            continue
        }
        // WNOHANG and still running: no child reported.
        guard info._sifields._sigchld.si_pid == pid else { return nil }
        // The exit code (CLD_EXITED), or the signal's number (CLD_KILLED, CLD_DUMPED).
        return info._sifields._sigchld.si_status
    }
}

/// Runs a command to completion (killing it after `timeout` seconds).
public func run(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil, timeout: Double = 15
) async throws -> CommandResult {
    let child = try Child(executable, arguments, environment: environment)
    let status = try await child.wait(timeout: timeout)
    return CommandResult(status: status, stdout: child.stdout, stderr: child.stderr)
}

/// A running child process whose output is collected as it arrives.
public final class Child: Sendable {
    private let process: Process
    private let out = OutputBuffer()
    private let err = OutputBuffer()

    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        let (process, outPipe, errPipe) = makeProcess(executable, arguments, environment: environment)
        self.process = process
        try launch(process)
        // Each pipe is read by a thread of its own with blocking reads until its end. (With
        // readability handlers, clearing a handler from the handler and from deinit raced
        // inside Foundation and corrupted memory.)
        outDescriptor = outPipe.fileHandleForReading.fileDescriptor
        for (pipe, buffer) in [(outPipe, out), (errPipe, err)] {
            let handle = pipe.fileHandleForReading
            Thread.detachNewThread {
                while true {
                    buffer.setReading(true)
                    let data = handle.availableData
                    buffer.setReading(false)
                    if data.isEmpty { break }
                    buffer.append(data)
                }
                try? handle.close()
                buffer.finish()
            }
        }
    }

    public var pid: Int32 { process.processIdentifier }
    public var stdout: String { out.text }
    private let outDescriptor: Int32

    /// Standard output with everything the child has written so far: waits (at most 1 s)
    /// until the pipe holds nothing unread and the reader thread is back in its read. For
    /// a child that prints a line and then answers a call: the answer can reach the test
    /// before the reader thread has taken the line from the pipe (`earshot publish`'s
    /// "volume 0.00" was missing once, read right after the Set returned).
    public var settledStdout: String {
        func idle() -> Bool {
            var unread: Int32 = 0
            return out.isReading && ioctl(outDescriptor, UInt(FIONREAD), &unread) == 0 && unread == 0
        }
        let deadline = Date().addingTimeInterval(1)
        while Date() < deadline, !out.isFinished {
            // Twice, 0.5 ms apart, with nothing appended between: a read that had just
            // returned (flag still set, pipe empty, data not yet appended) shows as a change.
            let count = out.count
            if idle() {
                usleep(500)
                if idle(), out.count == count { break }
            }
            usleep(200)
        }
        return out.text
    }
    public var stderr: String { err.text }
    /// Whether it still runs, as the kernel says: Foundation's `Process.isRunning` stays true
    /// until Foundation has reaped the child, which can lag its exit by a minute (``exitStatus``).
    public var isRunning: Bool { process.isRunning && exitStatus == nil }

    /// How it ended, once it has (``TestSupport/exitStatus(of:)``, from the kernel); nil
    /// while it runs.
    ///
    /// Not from Foundation alone: Foundation learns of an exit from the end of a socket the
    /// child inherits, and waits for it with a blocking `waitpid` on one manager thread. Seen in
    /// the session suites under load:
    /// - that thread blocked in `waitpid` for a child that still ran;
    /// - an `earshot play` that had exited stayed unreaped for over 40 s, the thread idle
    ///   (its socket's end never came).
    /// Every child's exit then looked like a hang.
    public var exitStatus: Int32? { TestSupport.exitStatus(of: process) }

    /// Sends a signal (SIGTERM by default).
    public func kill(_ signal: Int32 = SIGTERM) {
        if process.isRunning { Foundation.kill(process.processIdentifier, signal) }
    }

    /// What each thread of process `pid` is doing, for a failure that says it did not exit:
    /// name, state and kernel wait channel (`/proc/PID/task/*`), then gdb's backtraces of
    /// every thread where gdb is installed (CI may not have it; the kernel's part is there
    /// anyway).
    static func threadReport(_ pid: Int32) -> String {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var lines = tasks.sorted().map { tid -> String in
            func read(_ name: String) -> String {
                ((try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/\(name)", encoding: .utf8)) ?? "?")
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let state = read("stat").split(separator: ")").last?.split(separator: " ").first.map(String.init) ?? "?"
            return "  \(tid) \(read("comm")) state \(state) in \(read("wchan"))"
        }
        // A zombie is waited for no longer (``exitStatus``); should one be reported, the test
        // process's threads say why Foundation has not reaped it.
        let zombie = lines.count == 1 && lines[0].contains(" state Z ")
        if zombie {
            lines.append("  (a zombie: it exited, and Foundation's Process has not reaped it yet; where the test process waits:)")
        }
        // A zombie's own stack is gone; the test process's (Foundation's manager thread,
        // which reaps children) is what says why it is not reaped.
        let traces = backtraces(of: zombie ? getpid() : pid)
        lines.append(traces)
        // The children the test process waits for (`wait4 (pid=N`), by command line.
        for match in traces.matches(of: /wait4 \(pid=([0-9]+)/) {
            let waited = String(match.1)
            let command = (try? String(contentsOfFile: "/proc/\(waited)/cmdline", encoding: .utf8))?
                .replacingOccurrences(of: "\0", with: " ") ?? "gone"
            lines.append("  the test process waits for \(waited): \(command)")
        }
        return lines.joined(separator: "\n")
    }

    /// gdb's backtraces of every thread of `pid`, where gdb is installed (CI may not have
    /// it); empty otherwise.
    static func backtraces(of pid: Int32) -> String {
        guard let gdb = ["/usr/bin/gdb", "/usr/local/bin/gdb"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return "" }
        let debugger = Process()
        // coreutils' timeout: a gdb that cannot attach must not hang the test.
        debugger.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        debugger.arguments = ["10", gdb, "-p", "\(pid)", "-batch", "-nx", "-ex", "thread apply all bt 10"]
        let output = Pipe()
        debugger.standardOutput = output
        debugger.standardError = FileHandle.nullDevice
        guard (try? launch(debugger)) != nil else { return "" }
        // Its output ends when it does. Not `waitUntilExit()`: that waits for Foundation's
        // manager thread, which may be the very thing stuck.
        let text = output.fileHandleForReading.readDataToEndOfFile()
        keepUntilExit(debugger)
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether every thread of process `pid` is in the kernel's exit (`PF_EXITING` in the
    /// flags of `/proc/PID/task/*/stat`): the program has ended (its `exit` ran, its status
    /// is decided), and the kernel is tearing the process down.
    static func isExiting(_ pid: Int32) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        guard !tasks.isEmpty else { return false }
        return tasks.allSatisfy { tid in
            // After the command's closing parenthesis: state, ppid, pgrp, session, tty, tpgid, flags.
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/stat", encoding: .utf8),
                  let fields = stat.split(separator: ")").last?.split(separator: " "), fields.count > 6,
                  let flags = UInt64(fields[6]) else { return false }
            return flags & 0x4 != 0  // PF_EXITING
        }
    }

    /// How long the kernel may take to tear down a process whose program has ended, past the
    /// timeout (see ``wait(timeout:)``).
    static let exitTeardownAllowance = 60.0

    /// Waits for exit; kills with SIGKILL and throws after `timeout` seconds. The failure
    /// says what each of its threads was doing (``threadReport(_:)``).
    ///
    /// The timeout is the program's: a child whose threads are all in the kernel's exit
    /// (``isExiting(_:)``) at the deadline has ended, and is waited for while the kernel frees
    /// it. Under load that took seconds: `earshot play` had printed "played 1 item in 3.1 s"
    /// and exited, and 10 s after its start its last thread was still in `exit_mmap`
    /// (state D in `unlink_file_vma_batch_process`, waiting for a file mapping's lock), its
    /// main thread a zombie: reported as "did not exit within 10.0 s" (issue 31, item 5).
    @discardableResult
    public func wait(timeout: Double = 15) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning {
            if Date() > deadline {
                if Date() < deadline.addingTimeInterval(Child.exitTeardownAllowance), Child.isExiting(process.processIdentifier) {
                    try await Task.sleep(for: .milliseconds(5))
                    continue
                }
                let threads = Child.threadReport(process.processIdentifier)
                kill(SIGKILL)
                throw TestFailure("\(process.executableURL?.lastPathComponent ?? "child") did not exit within \(timeout) s; output: \(stdout) \(stderr)\nits threads:\n\(threads)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        // Collect whatever the child wrote: the reader threads finish at the pipes' end,
        // which comes once the child (and anything it left holding the pipes) is gone.
        let drained = Date().addingTimeInterval(5)
        while !(out.isFinished && err.isFinished), Date() < drained {
            try await Task.sleep(for: .milliseconds(2))
        }
        return waitForExitStatus(of: process)
    }

    /// Waits until standard output contains `text`; throws after `timeout` seconds.
    public func waitForOutput(_ text: String, timeout: Double = 10) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !stdout.contains(text) {
            if Date() > deadline || (!process.isRunning && !stdout.contains(text)) {
                throw TestFailure("waited for “\(text)”; stdout: \(stdout) stderr: \(stderr)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    deinit {
        // The reader threads end when the pipes do, that is when the child is gone.
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        keepUntilExit(process)
    }
}

/// Polls `condition` until it holds; throws after `timeout` seconds with `what`.
public func eventually(
    _ what: String, timeout: Double = 5, _ condition: @Sendable () async throws -> Bool
) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try await condition() { return }
        if Date() > deadline { throw TestFailure("timed out waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Bytes collected from a pipe's readability handler.
final class OutputBuffer: Sendable {
    private let data = Mutex(Data())
    private let finished = Mutex(false)
    /// The reader thread is in its blocking read: whatever it read before is appended.
    private let reading = Mutex(false)
    func setReading(_ value: Bool) { reading.withLock { $0 = value } }
    var isReading: Bool { reading.withLock { $0 } }
    func append(_ more: Data) { data.withLock { $0.append(more) } }
    /// The pipe reached its end.
    func finish() { finished.withLock { $0 = true } }
    var isFinished: Bool { finished.withLock { $0 } }
    var count: Int { data.withLock { $0.count } }
    var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }
}

/// A value shared between a test and the handlers it installs.
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    public init(_ value: Value) { mutex = Mutex(value) }
    public var value: Value { mutex.withLock { $0 } }
    public func withLock<R>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}
