import Platform

/// The ducking of other apps' streams as a reconciler, without I/O: each event (the
/// streams or the wanted gain changed, a volume read or set came back, a pause of a ramp
/// ended) goes in once, and out come what to do about it, in order: the streams to save,
/// the volumes to read, the compare-and-sets to queue, and when to come back for the
/// ramp's next step. ``ForeignStreamDucker`` carries them out.
///
/// While ``Situation/gain`` is set, every playing stream of another app (not an event
/// sound, not an exempt process's) is lowered in ``steps`` steps equal in dB
/// (``ForeignStreamDuck``), ``interval`` apart; streams that start meanwhile are lowered
/// too. When the gain goes, each is ramped back to exactly the volume it had, unless its
/// volume is no longer the one the arbiter set: then the user changed it, and the user's
/// volume stands.
///
/// The server remembers the volume last set on a stream of a restore group and starts the
/// group's next stream at it (PulseAudio's module-stream-restore, WirePlumber's
/// restore-stream): while an app is ducked, its new stream comes in ducked. Such a stream
/// takes the ladder of the duck it came in at (``ForeignDuckMemory``): it is not ducked
/// again, and it is restored to the volume the app had before the duck. The memory outlives
/// the group's last ducked stream when that stream goes while ducked (the server still
/// holds the ducked volume): a stream of the group that starts at it later is taken in the
/// same way, during the duck or after it (then it is put back at once).
package struct ForeignDuckRamp: Sendable {
    /// The steps of a ramp.
    package static let steps = 5
    /// The pause between two steps.
    package static let interval: Duration = .milliseconds(40)

    /// What the owner knows of the sound server and wants of it.
    package struct Situation: Sendable, Hashable {
        /// The server's playback streams, by sink-input index.
        package var streams: [UInt32: PlaybackStream]
        /// The gain (linear, of their volume before) other apps' streams should have;
        /// `nil` when none is ducked.
        package var gain: Float?
        /// Processes whose streams are never ducked (the Earshot sessions').
        package var exempt: Set<Int64>
        /// Streams taken over from the state file wait (the sessions have not registered
        /// again yet).
        package var holdAdopted: Bool

        /// A situation with these streams and this gain.
        package init(streams: [UInt32: PlaybackStream], gain: Float?, exempt: Set<Int64> = [], holdAdopted: Bool = false) {
            self.streams = streams
            self.gain = gain
            self.exempt = exempt
            self.holdAdopted = holdAdopted
        }
    }

    /// A ducked stream as the state file keeps it.
    package struct Record: Sendable, Hashable {
        /// Its sink-input index.
        package var index: UInt32
        /// Its process.
        package var pid: Int64
        /// Its volume before, then the volumes the arbiter may set on it.
        package var ladder: [[UInt32]]

        /// The record of stream `index` of `pid`.
        package init(index: UInt32, pid: Int64, ladder: [[UInt32]]) {
            self.index = index
            self.pid = pid
            self.ladder = ladder
        }
    }

    /// One thing to do, in the order given.
    package enum Action: Sendable, Hashable {
        /// Keep these streams (all those with a ladder) for the next arbiter, before any
        /// set that follows.
        case save([Record])
        /// Read the stream's volume and change nothing; the answer goes to
        /// ``volumeRead(_:_:now:)``.
        case read(UInt32)
        /// If the stream's volume is one of `expected`, set `volume` (the ladder's
        /// `rung`); the answer goes to ``stepped(_:to:_:now:)``.
        case set(UInt32, expected: Set<[UInt32]>, volume: [UInt32], rung: Int)
        /// Call ``woke(now:)`` at this tick (or later) for the ramp's next steps.
        case wake(at: UInt64)
    }

    /// The streams whose volume the arbiter changes, by sink-input index.
    package private(set) var ducked: [UInt32: DuckedStream] = [:]
    /// The ladders set on other apps' streams, by the server's restore group.
    package private(set) var memory = ForeignDuckMemory()
    /// What was last saved.
    package private(set) var saved: [Record] = []
    /// The last situation; nothing is done before the first.
    package private(set) var situation: Situation?
    /// No more volume changes: stopped, or the process is exiting.
    package private(set) var stopped = false
    /// The wake asked for and not yet passed.
    private var wake: UInt64?

    /// Nothing ducked, nothing known.
    package init() {}

    /// The streams a previous arbiter left ducked (its state file): on an unknown rung of
    /// their ladder, put back once the situation lets them.
    package mutating func adopt(_ records: [Record]) {
        for record in records where !record.ladder.isEmpty {
            ducked[record.index] = DuckedStream(pid: record.pid, ladder: record.ladder, position: nil, adopted: true)
        }
        saved = Self.records(ducked)
    }

    /// The situation changed (or the owner checks again): new streams to duck are read,
    /// gone ones forgotten, and each other one stepped towards its wanted rung.
    package mutating func update(_ situation: Situation, now: UInt64) -> [Action] {
        guard !stopped else { return [] }
        self.situation = situation
        return reconcile(now: now, admitting: true)
    }

    /// The answer to a ``Action/read(_:)``: the stream's volume before, from which its
    /// ladder is made (or, when the server started it at a volume set on a stream of its
    /// restore group, that duck's ladder, on the rung it came in at).
    package mutating func volumeRead(_ index: UInt32, _ result: PlaybackStreamWatcher.VolumeUpdate, now: UInt64) -> [Action] {
        guard !stopped, var entry = ducked[index], entry.phase == .reading else { return [] }
        guard case .kept(let before) = result else {
            ducked[index] = nil
            return reconcile(now: now, admitting: false)
        }
        let gain = situation?.gain
        if let group = entry.group, let inherited = memory.inherited(by: before, in: group) {
            entry.ladder = inherited.ladder
            entry.position = inherited.rung
        } else if let gain {
            entry.ladder = [before] + ForeignStreamDuck(original: before).rampSteps(to: gain, steps: Self.steps)
            entry.position = 0
            if let group = entry.group { memory.remember(entry.ladder, for: group) }
        } else {
            // Not ducking, and its volume is its own: the server holds no ducked volume
            // for its group any more.
            ducked[index] = nil
            if let group = entry.group { forgetIfIdle(group) }
            return reconcile(now: now, admitting: false)
        }
        entry.target = gain != nil ? entry.top : 0
        entry.phase = .idle
        ducked[index] = entry
        return reconcile(now: now, admitting: false)
    }

    /// The answer to a ``Action/set(_:expected:volume:rung:)`` towards `rung`.
    package mutating func stepped(_ index: UInt32, to rung: Int, _ result: PlaybackStreamWatcher.VolumeUpdate, now: UInt64) -> [Action] {
        guard !stopped, var entry = ducked[index], entry.phase == .setting(rung: rung) else { return [] }
        switch result {
        case .set:
            entry.position = rung
            if rung == entry.target {
                entry.phase = .idle
                ducked[index] = rung == 0 ? nil : entry
                if rung == 0, let group = entry.group { forgetIfIdle(group) }
            } else {
                entry.phase = .resting(until: now + Self.interval.wholeNanoseconds)
                ducked[index] = entry
            }
        case .kept(let current):
            if let group = entry.group, let inherited = memory.inherited(by: current, in: group) {
                // The server put the volume it remembers for the group (a restore that came
                // after the arbiter read the stream): the stream is on that duck.
                entry.ladder = inherited.ladder
                entry.position = inherited.rung
                entry.phase = .idle
                ducked[index] = entry
            } else {
                // Not the volume the arbiter set: the user's stands.
                ducked[index] = nil
                if let group = entry.group { forgetIfIdle(group) }
            }
        case .failed:
            ducked[index] = nil  // gone
        }
        return reconcile(now: now, admitting: false)
    }

    /// A ``Action/wake(at:)`` came: the streams whose pause is over take their next step.
    package mutating func woke(now: UInt64) -> [Action] {
        if let wake, wake <= now { self.wake = nil }
        guard !stopped else { return [] }
        return reconcile(now: now, admitting: false)
    }

    /// Stops every change: what is ducked stays so, for the next arbiter.
    package mutating func stop() {
        stopped = true
    }

    /// Stops, and returns the sets that put every ducked stream back at once (the process
    /// is exiting): each at its volume before, if it still has a volume the arbiter may
    /// have set.
    package mutating func stopToRestore() -> [Action] {
        guard !stopped else { return [] }
        stopped = true
        return ducked.sorted { $0.key < $1.key }.compactMap { index, entry in
            guard let original = entry.ladder.first else { return nil }
            return .set(index, expected: Set(entry.ladder), volume: original, rung: 0)
        }
    }

    /// Every set of ``stopToRestore()`` was answered: nothing is ducked any more.
    package mutating func restored() -> [Action] {
        ducked = [:]
        saved = []
        return [.save([])]
    }

    // MARK: The pass

    /// One pass over the streams: forgets the gone, sets each one's target, admits new
    /// streams (on a situation change only: a read that failed is not retried before the
    /// next), and steps the idle ones; then the save, the reads and sets, and the wake.
    private mutating func reconcile(now: UInt64, admitting: Bool) -> [Action] {
        guard let situation else { return [] }
        var reads: [Action] = [], sets: [Action] = []
        for (index, entry) in ducked.sorted(by: { $0.key < $1.key }) {
            guard let stream = situation.streams[index], stream.pid == entry.pid else {
                ducked[index] = nil  // gone: nothing to restore
                continue
            }
            if entry.group == nil, let group = stream.group {
                ducked[index]?.group = group
                if entry.adopted { memory.remember(entry.ladder, for: group) }
            }
            var rested = false
            if case .resting(let until) = entry.phase, until <= now {
                ducked[index]?.phase = .idle
                rested = true
            }
            let held = entry.ladder.isEmpty || (entry.adopted && situation.holdAdopted)
            if !held {
                ducked[index]?.target = situation.gain != nil && !situation.exempt.contains(entry.pid) ? entry.top : 0
            }
            if let current = ducked[index], !held || rested,
               current.position != current.target || current.target == 0,
               let set = step(index) {
                sets.append(set)
            }
        }
        // While ducking, every other app's stream; after, those of a group whose server
        // may still hold a ducked volume (their read tells).
        if admitting {
            for (index, stream) in situation.streams.sorted(by: { $0.key < $1.key })
            where ducked[index] == nil && stream.isSounding && stream.volumeWritable && !situation.exempt.contains(stream.pid)
                && (situation.gain != nil || stream.group.map { memory.remembers($0) } == true) {
                ducked[index] = DuckedStream(pid: stream.pid, ladder: [], position: nil, phase: .reading, group: stream.group)
                reads.append(.read(index))
            }
        }
        var actions: [Action] = []
        let records = Self.records(ducked)
        if records != saved {
            saved = records
            actions.append(.save(records))
        }
        actions += reads + sets
        let due = ducked.values.compactMap { entry -> UInt64? in
            if case .resting(let until) = entry.phase { until } else { nil }
        }.min()
        if let due, wake.map({ due < $0 }) ?? true {
            wake = due
            actions.append(.wake(at: due))
        }
        return actions
    }

    /// The set that moves an idle stream one rung towards its target (from an unknown
    /// rung, straight there), if its volume is still one the arbiter set; a stream back on
    /// rung 0 is forgotten.
    private mutating func step(_ index: UInt32) -> Action? {
        guard var entry = ducked[index], entry.phase == .idle, !entry.ladder.isEmpty else { return nil }
        if entry.position == entry.target {
            if entry.target == 0 {
                ducked[index] = nil
                if let group = entry.group { forgetIfIdle(group) }
            }
            return nil
        }
        let next: Int
        let expected: Set<[UInt32]>
        if let position = entry.position {
            next = position + (entry.target > position ? 1 : -1)
            expected = [entry.ladder[position]]
        } else {
            next = entry.target
            expected = Set(entry.ladder)
        }
        entry.phase = .setting(rung: next)
        ducked[index] = entry
        return .set(index, expected: expected, volume: entry.ladder[next], rung: next)
    }

    /// Forgets what was set on `group`'s streams once none of them is ducked any more: the
    /// server's volume for the group is then one the arbiter put back, or the user's. (A
    /// stream that went while ducked leaves it remembered: the server still holds the ducked
    /// volume.)
    private mutating func forgetIfIdle(_ group: String) {
        if !ducked.values.contains(where: { $0.group == group }) { memory.forget(group) }
    }

    private static func records(_ ducked: [UInt32: DuckedStream]) -> [Record] {
        ducked.sorted { $0.key < $1.key }.compactMap { index, entry in
            entry.ladder.isEmpty ? nil : Record(index: index, pid: entry.pid, ladder: entry.ladder)
        }
    }
}
