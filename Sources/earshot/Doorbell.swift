import Synchronization

/// A one-shot event that tasks await without polling: ``ring()`` once, and every task
/// suspended in ``wait()`` (or that calls it later) resumes.
///
/// Waiting costs nothing while nothing happens: the waiter is a suspended continuation,
/// not a task that wakes every few milliseconds to look at a flag.
final class Doorbell: Sendable {
    private struct State: ~Copyable {
        var rung = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    init() {}

    /// Whether ``ring()`` has been called.
    var rung: Bool { state.withLock { $0.rung } }

    /// Rings: wakes every waiter, now and later. Ringing again does nothing.
    func ring() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            guard !s.rung else { return [] }
            s.rung = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the bell has rung.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let already = state.withLock { s -> Bool in
                if s.rung { return true }
                s.waiters.append(continuation)
                return false
            }
            if already { continuation.resume() }
        }
    }
}
