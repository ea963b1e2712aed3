#if canImport(Glibc)
import Glibc
#endif

/// Starts a detached thread running `body`, named `name` (as `top -H` and /proc show it).
package func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
    final class Box { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
    let body = { @Sendable in
        // /proc/thread-self/comm takes the name (15 bytes at most).
        if let file = fopen("/proc/thread-self/comm", "w") {
            fputs(String(name.prefix(15)), file)
            fclose(file)
        }
        body()
    }
    var thread = pthread_t()
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    let result = pthread_create(&thread, nil, { argument in
        Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue().body()
        return nil
    }, box)
    precondition(result == 0, "cannot start the \(name) thread: \(String(cString: strerror(result)))")
    pthread_detach(thread)
}

/// Monotonic seconds.
@inline(__always)
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// A counting semaphore (POSIX), for waking threads. `signal` is safe on the render
/// thread: it neither allocates nor blocks.
final class Semaphore: @unchecked Sendable {
    private let sem: UnsafeMutablePointer<sem_t>
    init() {
        sem = .allocate(capacity: 1)
        sem_init(sem, 0, 0)
    }
    deinit {
        sem_destroy(sem)
        sem.deallocate()
    }
    func signal() { sem_post(sem) }
    func wait() { while sem_wait(sem) != 0 && errno == EINTR {} }
    /// Waits up to `seconds`; returns false on timeout.
    func wait(seconds: Double) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanos = Int(deadline.tv_nsec) + Int(seconds * 1e9)
        deadline.tv_sec += nanos / 1_000_000_000
        deadline.tv_nsec = nanos % 1_000_000_000
        while true {
            if sem_timedwait(sem, &deadline) == 0 { return true }
            if errno != EINTR { return false }
        }
    }
}
