import DBus
import OtherApps
import Platform
import SessionPolicy
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One of another app's streams whose volume the arbiter lowered (or is lowering, or
/// putting back).
struct DuckedStream: Sendable {
    /// Its process: the stream at this index belongs to it.
    let pid: Int64
    /// Its volume before (`ladder[0]`), then the volumes of the ramp down, the last one
    /// fully ducked. Empty while its volume before is being read.
    var ladder: [[UInt32]]
    /// The rung it has (set by the arbiter), or `nil` when unknown: an entry taken over
    /// from the state file may be on any rung.
    var position: Int?
    /// The rung it should have: the last while ducked, 0 to restore.
    var target = 0
    /// A read or set of its volume is under way, or the pause before the next step of
    /// its ramp.
    var inFlight = false
    /// Taken over from the state file (a previous arbiter ducked it).
    var adopted = false
    /// The server's restore group of the stream (``PlaybackStream/group``).
    var group: String?

    var top: Int { max(ladder.count - 1, 0) }
}

/// Ducking other apps: while a session ducks others (``SessionPolicy/foreignStreamGain``),
/// every playing stream of another app (not an event sound, not an Earshot process's) is
/// lowered through the sound server in a few steps equal in dB (``ForeignStreamDuck``);
/// streams that start meanwhile are lowered too. When the ducking ends each is ramped back
/// to exactly the volume it had, unless its volume is no longer the one the arbiter set:
/// then the user changed it, and the user's volume stands.
///
/// The server remembers the volume last set on a stream of a restore group and starts the
/// group's next stream at it (PulseAudio's module-stream-restore, WirePlumber's
/// restore-stream): while an app is ducked, its new stream comes in ducked. Such a stream
/// takes the ladder of the duck it came in at (``ForeignDuckMemory``): it is not ducked
/// again, and it is restored to the volume the app had before the duck. The memory outlives
/// the group's last ducked stream when that stream goes while ducked (the server still
/// holds the ducked volume): a stream of the group that starts at it later is taken in the
/// same way, during the duck or after it (then it is put back at once).
///
/// Every read and set goes through the ``PlaybackStreamWatcher``'s libpulse connection,
/// without waiting: each step is a compare-and-set queued there, and its result comes back
/// to the bus thread. Before the first set, the stream's volume before and the volumes of
/// its ramp go to ``ArbiterStateFile``; an arbiter that starts takes the file's
/// streams over, and puts back those still at a volume the previous one set (unless a
/// session that registers again still ducks).
extension Arbiter {
    static let duckRampSteps = 5
    static let duckRampInterval: Duration = .milliseconds(40)

    /// Reads the state file a previous arbiter left: its streams are restored, and the
    /// players it paused resumed, once the sessions have registered again (or after
    /// ``restoreWindow``), unless a session still ducks or holds them. Called once, at start.
    func adoptForeignVolumes() {
        guard let file = volumeStateFile, state.withLock({ $0.streamWatcher != nil }) else { return }
        let contents: ArbiterStateFile.Contents
        do {
            contents = try file.read()
        } catch {
            Arbiter.log("\(error)")
            return
        }
        state.withLock { s in
            for stream in contents.streams {
                s.ducked[stream.index] = DuckedStream(pid: stream.pid, ladder: [stream.original] + stream.set, position: nil, adopted: true)
            }
            for player in contents.players ?? [] { s.adoptedPauses[player.player] = SessionID(player.pausedBy) }
            s.savedPauses = s.adoptedPauses
        }
    }

    /// The players paused for a session, to keep in the state file: the policy's, and those
    /// taken over from the file and not yet known.
    private static func pauses(_ s: State) -> [String: SessionID] {
        var pauses = s.adoptedPauses
        for player in s.policy.foreignPlayers.values {
            if let by = player.pausedBy { pauses[player.id] = by }
        }
        return pauses
    }

    /// Whether `stream` is one the arbiter ducks: another app's, playing, not an event sound.
    private static func duckable(_ stream: PlaybackStream, earshot: Set<Int64>) -> Bool {
        stream.isSounding && stream.volumeWritable && !earshot.contains(stream.pid)
    }

    /// Brings other apps' stream volumes in line with the policy (bus thread): after every
    /// decision and every change of the streams.
    func reconcileForeignVolumes() {
        guard let watcher = state.withLock({ $0.streamWatcher }) else { return }
        let now = tick
        let (read, advance, changed) = state.withLock { s -> ([UInt32], [UInt32], Bool) in
            // Until the Earshot processes are known, their streams could look like others'.
            guard s.othersReady, s.streamsKnown, !s.volumesStopped else { return ([], [], false) }
            let gain = s.policy.foreignStreamGain
            let earshot = Set(s.policy.sessions.keys.compactMap { s.processes[$0] } + s.earshotPeers.values).filter { $0 > 0 }
            let peersBack = s.earshotPeersRegistered(besides: connection.uniqueName)
            let holdAdopted = !peersBack && now < s.othersReadyTick + Arbiter.restoreWindow.wholeNanoseconds
            var read: [UInt32] = [], advance: [UInt32] = [], changed = false
            for (index, entry) in s.ducked.sorted(by: { $0.key < $1.key }) {
                guard let stream = s.streams[index], stream.pid == entry.pid else {
                    s.ducked[index] = nil  // gone: nothing to restore
                    changed = true
                    continue
                }
                if entry.group == nil, let group = stream.group {
                    s.ducked[index]?.group = group
                    if entry.adopted { s.duckMemory.remember(entry.ladder, for: group) }
                }
                if entry.ladder.isEmpty || (entry.adopted && holdAdopted) { continue }
                let wanted = gain != nil && !earshot.contains(entry.pid) ? entry.top : 0
                s.ducked[index]?.target = wanted
                if !entry.inFlight && (entry.position != wanted || wanted == 0) { advance.append(index) }
            }
            // While ducking, every other app's stream; after, those of a group whose server
            // may still hold a ducked volume (their read tells).
            for (index, stream) in s.streams.sorted(by: { $0.key < $1.key })
            where s.ducked[index] == nil && Arbiter.duckable(stream, earshot: earshot)
                && (gain != nil || stream.group.map { s.duckMemory.remembers($0) } == true) {
                s.ducked[index] = DuckedStream(pid: stream.pid, ladder: [], position: nil, inFlight: true, group: stream.group)
                read.append(index)
            }
            return (read, advance, changed)
        }
        let (adoptions, pausesChanged) = state.withLock { s -> ([SessionPolicy.Event], Bool) in
            guard s.othersReady, !s.volumesStopped else { return ([], false) }
            var events: [SessionPolicy.Event] = []
            let peersBack = s.earshotPeersRegistered(besides: connection.uniqueName)
            let window = Arbiter.restoreWindow.wholeNanoseconds
            if peersBack || now >= s.othersReadyTick + window {
                for (player, by) in s.adoptedPauses.sorted(by: { $0.key < $1.key }) {
                    if s.policy.foreignPlayers[player] != nil {
                        events.append(.adoptForeignPause(player: player, pausedBy: by))
                        s.adoptedPauses[player] = nil
                    } else if now >= s.othersReadyTick + 2 * window {
                        s.adoptedPauses[player] = nil  // gone, or never another app's player
                    }
                }
            }
            return (events, Arbiter.pauses(s) != s.savedPauses)
        }
        if changed || pausesChanged { saveForeignVolumes() }
        for event in adoptions { handle(event) }
        for index in read {
            watcher.updateVolume(of: index, decide: { _ in nil }) { [weak self] result in
                self?.onBusThread { $0.originalRead(index, result) }
            }
        }
        for index in advance { stepForeignVolume(index) }
    }

    private func onBusThread(_ work: @escaping @Sendable (Arbiter) -> Void) {
        _ = connection.schedule(after: .zero) { [weak self] in
            guard let self else { return }
            work(self)
        }
    }

    /// The volume of a stream about to be ducked (or, after the ducking, of a stream that
    /// may have come in at a ducked volume): its ladder is made and saved before the first
    /// set. A volume the arbiter set on a stream of the same restore group is not the
    /// stream's own: it takes that duck's ladder, on the rung it came in at.
    private func originalRead(_ index: UInt32, _ result: PlaybackStreamWatcher.VolumeUpdate) {
        let ready = state.withLock { s -> Bool in
            guard var entry = s.ducked[index], entry.ladder.isEmpty else { return false }
            guard case .kept(let before) = result, !s.volumesStopped else {
                s.ducked[index] = nil
                return false
            }
            let gain = s.policy.foreignStreamGain
            if let group = entry.group, let inherited = s.duckMemory.inherited(by: before, in: group) {
                entry.ladder = inherited.ladder
                entry.position = inherited.rung
            } else if let gain {
                let duck = ForeignStreamDuck(original: before)
                entry.ladder = [before] + duck.rampSteps(to: gain, steps: Arbiter.duckRampSteps)
                entry.position = 0
                if let group = entry.group { s.duckMemory.remember(entry.ladder, for: group) }
            } else {
                // Not ducking, and its volume is its own: the server holds no ducked volume
                // for its group any more.
                s.ducked[index] = nil
                if let group = entry.group { Arbiter.forgetIfIdle(group, &s) }
                return false
            }
            entry.target = gain != nil ? entry.top : 0
            entry.inFlight = false
            s.ducked[index] = entry
            return true
        }
        guard ready else { return }
        saveForeignVolumes()
        stepForeignVolume(index)
    }

    /// Moves a stream one rung towards its target (from an unknown rung, straight there),
    /// if its volume is still one the arbiter set.
    private func stepForeignVolume(_ index: UInt32) {
        guard let watcher = state.withLock({ $0.streamWatcher }) else { return }
        var removed = false
        let step = state.withLock { s -> (accepted: Set<[UInt32]>, next: Int, volume: [UInt32])? in
            guard var entry = s.ducked[index], !entry.inFlight, !entry.ladder.isEmpty, !s.volumesStopped else { return nil }
            if entry.position == entry.target {
                if entry.target == 0 {
                    s.ducked[index] = nil
                    if let group = entry.group { Arbiter.forgetIfIdle(group, &s) }
                    removed = true
                }
                return nil
            }
            let next: Int
            let accepted: Set<[UInt32]>
            if let position = entry.position {
                next = position + (entry.target > position ? 1 : -1)
                accepted = [entry.ladder[position]]
            } else {
                next = entry.target
                accepted = Set(entry.ladder)
            }
            entry.inFlight = true
            s.ducked[index] = entry
            return (accepted, next, entry.ladder[next])
        }
        if removed { saveForeignVolumes() }
        guard let step else { return }
        watcher.updateVolume(of: index, decide: { step.accepted.contains($0) ? step.volume : nil }) { [weak self] result in
            self?.onBusThread { $0.stepped(index, to: step.next, result) }
        }
    }

    private func stepped(_ index: UInt32, to rung: Int, _ result: PlaybackStreamWatcher.VolumeUpdate) {
        let (more, finished, rebased) = state.withLock { s -> (Bool, Bool, Bool) in
            guard var entry = s.ducked[index] else { return (false, false, false) }
            guard case .set = result else {
                if case .kept(let current) = result, let group = entry.group,
                   let inherited = s.duckMemory.inherited(by: current, in: group) {
                    // The server put the volume it remembers for the group (a restore that
                    // came after the arbiter read the stream): the stream is on that duck.
                    entry.ladder = inherited.ladder
                    entry.position = inherited.rung
                    entry.inFlight = false
                    s.ducked[index] = entry
                    return (false, true, true)
                }
                // Not the volume the arbiter set (the user's stands), or gone.
                s.ducked[index] = nil
                if case .kept = result, let group = entry.group { Arbiter.forgetIfIdle(group, &s) }
                return (false, true, false)
            }
            entry.position = rung
            if rung == entry.target {
                entry.inFlight = false
                s.ducked[index] = rung == 0 ? nil : entry
                if rung == 0, let group = entry.group { Arbiter.forgetIfIdle(group, &s) }
                return (false, rung == 0, false)
            }
            // Still "in flight" until the next step: a reconcile meanwhile must not step early.
            s.ducked[index] = entry
            return (true, false, false)
        }
        if finished { saveForeignVolumes() }
        if rebased { stepForeignVolume(index) }
        if more {
            _ = clock.schedule(after: Arbiter.duckRampInterval, on: connection) { [weak self] in
                guard let self else { return }
                self.state.withLock { $0.ducked[index]?.inFlight = false }
                self.stepForeignVolume(index)
            }
        }
    }

    /// Forgets what was set on `group`'s streams once none of them is ducked any more: the
    /// server's volume for the group is then one the arbiter put back, or the user's. (A
    /// stream that went while ducked leaves it remembered: the server still holds the ducked
    /// volume.)
    private static func forgetIfIdle(_ group: String, _ s: inout State) {
        if !s.ducked.values.contains(where: { $0.group == group }) { s.duckMemory.forget(group) }
    }

    /// Writes the ducked streams and the paused players to the state file (bus thread).
    private func saveForeignVolumes() {
        guard let file = volumeStateFile else { return }
        let contents = state.withLock { s in
            let pauses = Arbiter.pauses(s)
            s.savedPauses = pauses
            return ArbiterStateFile.Contents(
                streams: s.ducked.sorted { $0.key < $1.key }.compactMap { index, entry -> ArbiterStateFile.Stream? in
                    guard let original = entry.ladder.first else { return nil }
                    return ArbiterStateFile.Stream(index: index, pid: entry.pid, original: original, set: Array(entry.ladder.dropFirst()))
                },
                players: pauses.sorted { $0.key < $1.key }.map { .init(player: $0.key, pausedBy: $0.value.rawValue) })
        }
        do {
            try file.write(contents)
        } catch {
            Arbiter.log("\(error)")
        }
    }

    /// The process is exiting: puts back at once every stream this arbiter ducked, unless a
    /// session of another process still ducks (it registers with the next host, which takes
    /// the streams over from the state file). Waits for the sound server at most `timeout`.
    func restoreForeignVolumesAtExit(timeout: Duration) {
        let me = Int64(getpid())
        let (watcher, entries) = state.withLock { s -> (PlaybackStreamWatcher?, [(UInt32, [[UInt32]])]) in
            guard !s.volumesStopped else { return (nil, []) }
            s.volumesStopped = true
            let outside = s.policy.foreignDuckers.contains { (s.processes[$0] ?? -1) != me }
            if outside { return (nil, []) }
            return (s.streamWatcher, s.ducked.filter { !$0.value.ladder.isEmpty }.map { ($0.key, $0.value.ladder) })
        }
        guard let watcher, !entries.isEmpty else { return }
        let pending = Atomic<Int>(entries.count)
        for (index, ladder) in entries {
            let accepted = Set(ladder)
            watcher.updateVolume(of: index, decide: { accepted.contains($0) ? ladder[0] : nil }) { _ in
                pending.subtract(1, ordering: .releasing)
            }
        }
        let deadline = MonotonicClock.nanoseconds() + timeout.wholeNanoseconds
        while pending.load(ordering: .acquiring) > 0 && MonotonicClock.nanoseconds() < deadline {
            usleep(1000)  // the process is exiting: a bounded wait for a few replies
        }
        guard pending.load(ordering: .acquiring) == 0 else { return }  // the file stays for the next arbiter
        state.withLock { $0.ducked = [:] }
        saveForeignVolumes()
    }

    /// Writes one line to standard error (the arbiter has no other log).
    static func log(_ message: String) {
        let line = "earshot arbiter: \(message)\n"
        _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
    }
}

/// The arbiters of this process, for ``Arbiter/restoreForeignVolumesAtExit(timeout:)`` when
/// it exits normally (an `earshot play --duck` hosting the arbiter ends right after its
/// deactivation).
enum ArbiterExit {
    /// A weak reference; the arbiter is `Sendable`, and the reference is only read and
    /// written under the mutex below.
    struct Entry: @unchecked Sendable { weak var arbiter: Arbiter? }
    static let live = Mutex<[ObjectIdentifier: Entry]>([:])
    private static let registered = Mutex(false)

    static func add(_ arbiter: Arbiter) {
        let first = registered.withLock { done in
            defer { done = true }
            return !done
        }
        if first { atexit { ArbiterExit.atExit() } }
        live.withLock { $0[ObjectIdentifier(arbiter)] = Entry(arbiter: arbiter) }
    }

    static func remove(_ arbiter: Arbiter) {
        _ = live.withLock { $0.removeValue(forKey: ObjectIdentifier(arbiter)) }
    }

    private static func atExit() {
        let arbiters = live.withLock { $0.values.compactMap(\.arbiter) }
        for arbiter in arbiters { arbiter.restoreForeignVolumesAtExit(timeout: .milliseconds(500)) }
    }
}
