@testable import Arbiter
import DBus
import Synchronization

/// A clock for the arbiter that moves only when the test says (``advance(by:)``): the
/// silence timeout, the re-registration and restore windows and the throttles fall due
/// when the test has moved past them, and not a nanosecond before, however loaded the
/// machine. Each timer runs on its connection's bus thread, as the system clock's do.
final class ManualArbiterClock: ArbiterClock {
    private struct Timer {
        let deadline: UInt64
        let connection: DBusConnection
        let work: @Sendable () -> Void
    }
    private struct State {
        /// Starts far from 0, as a monotonic clock does.
        var now: UInt64 = 1_000_000_000_000
        var nextID: UInt64 = 1
        var timers: [UInt64: Timer] = [:]
    }
    private let state = Mutex(State())

    func now() -> UInt64 { state.withLock { $0.now } }

    func schedule(after delay: Duration, on connection: DBusConnection, _ work: @escaping @Sendable () -> Void) -> UInt64 {
        state.withLock { s in
            defer { s.nextID += 1 }
            s.timers[s.nextID] = Timer(deadline: s.now + delay.wholeNanoseconds, connection: connection, work: work)
            return s.nextID
        }
    }

    func cancel(_ token: UInt64, on connection: DBusConnection) {
        _ = state.withLock { $0.timers.removeValue(forKey: token) }
    }

    /// Moves the clock on by `delay`, running the timers that fall due on the way in the
    /// order of their deadlines (the time reads each one's deadline while it runs), each
    /// on its bus thread; returns once they have run. A timer that one of them sets runs
    /// too if it falls due within `delay`.
    func advance(by delay: Duration) async {
        let end = state.withLock { $0.now } + delay.wholeNanoseconds
        while true {
            let due = state.withLock { s -> (UInt64, Timer)? in
                guard let (id, timer) = s.timers.filter({ $0.value.deadline <= end })
                    .min(by: { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }) else {
                    s.now = max(s.now, end)
                    return nil
                }
                s.now = max(s.now, timer.deadline)
                return (id, timer)
            }
            guard let (id, timer) = due else { return }
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                // Taken on the bus thread: a cancel that got there first wins, as on the bus loop.
                _ = timer.connection.schedule(after: .zero) { [self] in
                    let work = self.state.withLock { $0.timers.removeValue(forKey: id)?.work }
                    work?()
                    done.resume()
                }
            }
        }
    }
}

extension Arbiter {
    /// How many silence timers run.
    var silenceTimers: Int { state.withLock { $0.silenceTimers.count } }
}
