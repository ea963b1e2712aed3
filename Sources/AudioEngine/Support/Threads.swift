#if canImport(Glibc)
import Glibc
#endif

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
