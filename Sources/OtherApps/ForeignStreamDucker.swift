import Platform
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Carries out a ``ForeignDuckRamp`` on the sound server: its reads and compare-and-sets go
/// through a ``PlaybackStreamWatcher``'s libpulse connection without waiting, their answers
/// and the ramp's pauses come back on the owner's thread, and its saves go to the owner
/// (which keeps them in its state file, before the first set of a stream).
///
/// The owner says what it wants with ``update(_:)``, after every decision and every change
/// of the streams, on its one thread (the arbiter's bus thread); `runSoon` and `runAfter`
/// must run their work on that thread too.
package final class ForeignStreamDucker: Sendable {
    private let watcher: PlaybackStreamWatcher
    private let ramp = Mutex(ForeignDuckRamp())
    private let now: @Sendable () -> UInt64
    private let runSoon: @Sendable (@escaping @Sendable () -> Void) -> Void
    private let runAfter: @Sendable (Duration, @escaping @Sendable () -> Void) -> Void
    private let save: @Sendable ([ForeignDuckRamp.Record]) -> Void

    /// A ducker of `watcher`'s streams. `now`: the owner's clock (nanoseconds); `runSoon`
    /// and `runAfter`: run work on the owner's thread, at once or after a delay on that
    /// clock; `save`: keep the ducked streams for the next arbiter (called on that thread).
    package init(watcher: PlaybackStreamWatcher, now: @escaping @Sendable () -> UInt64,
                 runSoon: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
                 runAfter: @escaping @Sendable (Duration, @escaping @Sendable () -> Void) -> Void,
                 save: @escaping @Sendable ([ForeignDuckRamp.Record]) -> Void) {
        self.watcher = watcher
        self.now = now
        self.runSoon = runSoon
        self.runAfter = runAfter
        self.save = save
    }

    /// Takes over the streams a previous arbiter ducked (its state file).
    package func adopt(_ records: [ForeignDuckRamp.Record]) {
        ramp.withLock { $0.adopt(records) }
    }

    /// Brings the streams' volumes in line with `situation` (owner's thread).
    package func update(_ situation: ForeignDuckRamp.Situation) {
        let now = self.now()
        perform(ramp.withLock { $0.update(situation, now: now) })
    }

    /// What the state file should hold of the streams (all with a ladder).
    package var records: [ForeignDuckRamp.Record] { ramp.withLock { $0.saved } }

    /// The processes whose streams are lowered now, as far as the ducker knows.
    package var loweredProcesses: Set<Int64> {
        ramp.withLock { Set($0.ducked.values.filter(\.isLowered).map(\.pid)) }
    }

    /// Changes nothing more: what is ducked stays so, for the next arbiter.
    package func stop() {
        ramp.withLock { $0.stop() }
    }

    /// The process is exiting: puts every ducked stream back at once, then saves that
    /// nothing is ducked. Waits for the sound server at most `timeout`; without every
    /// answer by then, the state file stays for the next arbiter.
    package func restoreAtExit(timeout: Duration) {
        let sets = ramp.withLock { $0.stopToRestore() }
        guard !sets.isEmpty else { return }
        let pending = Atomic<Int>(sets.count)
        for case .set(let index, let expected, let volume, _) in sets {
            watcher.updateVolume(of: index, decide: { expected.contains($0) ? volume : nil }) { _ in
                pending.subtract(1, ordering: .releasing)
            }
        }
        let deadline = MonotonicClock.nanoseconds() + timeout.wholeNanoseconds
        while pending.load(ordering: .acquiring) > 0 && MonotonicClock.nanoseconds() < deadline {
            usleep(1000)  // the process is exiting: a bounded wait for a few replies
        }
        guard pending.load(ordering: .acquiring) == 0 else { return }
        perform(ramp.withLock { $0.restored() })
    }

    private func perform(_ actions: [ForeignDuckRamp.Action]) {
        for action in actions {
            switch action {
            case .save(let records):
                save(records)
            case .read(let index):
                watcher.updateVolume(of: index, decide: { _ in nil }) { [weak self] result in
                    self?.runSoon { [weak self] in self?.answered { $0.volumeRead(index, result, now: $1) } }
                }
            case .set(let index, let expected, let volume, let rung):
                watcher.updateVolume(of: index, decide: { expected.contains($0) ? volume : nil }) { [weak self] result in
                    self?.runSoon { [weak self] in self?.answered { $0.stepped(index, to: rung, result, now: $1) } }
                }
            case .wake(let at):
                let current = now()
                let delay = at > current ? at - current : 0
                runAfter(.nanoseconds(Int64(clamping: delay))) { [weak self] in
                    self?.answered { $0.woke(now: $1) }
                }
            }
        }
    }

    /// Applies an answer or a wake to the ramp (owner's thread) and does what follows.
    private func answered(_ event: (inout ForeignDuckRamp, UInt64) -> [ForeignDuckRamp.Action]) {
        let now = self.now()
        perform(ramp.withLock { event(&$0, now) })
    }
}
