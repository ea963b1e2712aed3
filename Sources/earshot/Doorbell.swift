import Synchronization

/// A one-shot event that tasks await without polling: ``ring()`` once, and every task
/// suspended in ``wait()`` (or that calls it later) resumes.
///
/// Waiting costs nothing while nothing happens: the waiter is a suspended continuation,
/// not a task that wakes every few milliseconds to look at a flag.
final class Doorbell: Sendable {
    private struct State: ~Copyable {
        var rung = false
        var nextWaiter: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
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
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the bell has rung.
    func wait() async { await wait(limit: nil) }

    /// Returns once the bell has rung or `limit` has passed, whichever comes first.
    func wait(upTo limit: Duration) async { await wait(limit: limit) }

    private func wait(limit: Duration?) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let id = state.withLock { s -> UInt64? in
                if s.rung { return nil }
                defer { s.nextWaiter += 1 }
                s.waiters[s.nextWaiter] = continuation
                return s.nextWaiter
            }
            guard let id else { return continuation.resume() }
            guard let limit else { return }
            // Whichever resumes the waiter first removes it, so it resumes once.
            Task { [self] in
                try? await Task.sleep(for: limit)
                state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
            }
        }
    }
}
