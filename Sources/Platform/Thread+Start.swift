#if canImport(Glibc)
import Glibc
#endif

/// The system refused a thread (`pthread_create`'s error: `EAGAIN` when the process or
/// user is out of threads or memory).
package struct ThreadStartError: Error, CustomStringConvertible {
    /// The thread's name.
    package let name: String
    /// `pthread_create`'s error number.
    package let code: Int32

    package var description: String { "cannot start the \(name) thread: \(String(cString: strerror(code)))" }
}

/// Starts a detached thread running `body`, named `name` (as `top -H`, `ps -L` and
/// `/proc/PID/task/*/comm` show it; 15 bytes at most). Throws when the system refuses.
package func startThreadIfPossible(name: String, _ body: @escaping @Sendable () -> Void) throws(ThreadStartError) {
    /// Carries the body through `pthread_create`'s `void *`.
    final class Start: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(_ name: String, _ body: @escaping @Sendable () -> Void) { (self.name, self.body) = (name, body) }
    }
    var thread = pthread_t()
    let start = Unmanaged.passRetained(Start(name, body)).toOpaque()
    let result = pthread_create(&thread, nil, { argument in
        let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
        // /proc/thread-self/comm names the calling thread.
        if let file = fopen("/proc/thread-self/comm", "w") {
            fputs(String(start.name.utf8.prefix(15)) ?? "earshot", file)
            fclose(file)
        }
        start.body()
        return nil
    }, start)
    guard result == 0 else {
        Unmanaged<Start>.fromOpaque(start).release()
        throw ThreadStartError(name: name, code: result)
    }
    pthread_detach(thread)
}

/// Starts a detached thread as ``startThreadIfPossible(name:_:)`` does, and stops the
/// process with the reason if the system refuses (for threads a component cannot work
/// without: the engine's, the bus's).
package func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
    do {
        try startThreadIfPossible(name: name, body)
    } catch {
        preconditionFailure(error.description)
    }
}

/// Lowers the calling thread's CPU priority: its nice value goes `steps` above what it was
/// (at most 19), so that when it competes for a core with the process's other threads (the
/// bus thread above all) they are scheduled first; it still runs whenever a core is free.
/// On Linux the nice value is the thread's own (`who` 0 of `PRIO_PROCESS` is the calling
/// thread), and threads it starts inherit it. It cannot be raised back without privileges:
/// only for threads of one purpose, never for pooled ones. Nothing happens if the system
/// refuses.
package func lowerCurrentThreadPriority(by steps: Int32) {
    errno = 0
    let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    guard errno == 0 else { return }
    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, min(19, nice + steps))
}
