import AudioEngine
import Dispatch
import SessionPolicy
import Synchronization

/// The arbiter's trace, one line per event it applies with what the policy decided:
/// `earshot daemon --trace`, and an `earshot` that hosts the arbiter with
/// `EARSHOT_ARBITER_TRACE=1`.
enum ArbiterTrace {
    /// An event log for `Arbiter.Configuration.eventLog` that writes each line to standard
    /// error on a queue of its own. The arbiter calls it on the bus thread under its lock:
    /// only the time is taken there; the line is made and written on the queue (the bus
    /// thread must not wait on a pipe).
    ///
    /// While standard error is not read (a terminal stopped with Ctrl-S, a pipe nobody
    /// drains), the queue holds at most ``backlog`` lines; the events after that are
    /// counted, not kept, and the next line queued once there is room says how many were
    /// dropped before it. The events come from other processes (registrations, players'
    /// statuses), so the backlog would otherwise grow with whatever they send.
    static func line() -> @Sendable (SessionPolicy.Event, [SessionPolicy.Decision]) -> Void {
        let queue = DispatchQueue(label: "earshot-trace")
        let start = ContinuousClock.now
        // Lines handed to the queue and not yet written; events not traced for lack of room.
        let pending = Atomic<Int>(0)
        let dropped = Atomic<Int>(0)
        return { event, decisions in
            let elapsed = ContinuousClock.now - start
            guard pending.add(1, ordering: .relaxed).newValue <= backlog else {
                pending.subtract(1, ordering: .relaxed)
                dropped.add(1, ordering: .relaxed)
                return
            }
            // The events dropped since the last line queued came just before this one.
            let lost = dropped.exchange(0, ordering: .relaxed)
            queue.async {
                defer { pending.subtract(1, ordering: .relaxed) }
                if lost > 0 {
                    note("(\(lost) trace line\(lost == 1 ? "" : "s") dropped: standard error was not read for a while)")
                }
                let time = "+\((elapsed / .seconds(1)).fixed(3)) s"
                let outcome = decisions.isEmpty ? "nothing" : decisions.map { "\($0)" }.joined(separator: ", ")
                // Swift's own rendering of the values, without the module's name on every type.
                note("\(time)  \(event)  ->  \(outcome)".replacing("SessionPolicy.", with: ""))
            }
        }
    }

    /// How many lines may wait for standard error.
    static let backlog = 1000
}
