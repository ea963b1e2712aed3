import DBus
import OtherApps
import Platform
import SessionPolicy
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Ducking other apps: while a session ducks others (``SessionPolicy/foreignStreamGain``),
/// the arbiter's ``ForeignStreamDucker`` lowers every playing stream of another app (not an
/// event sound, not an Earshot process's) through the sound server, and ramps each back
/// when the ducking ends (``ForeignDuckRamp`` has the rules). The arbiter says what it
/// wants after every decision and every change of the streams; before the first set of a
/// stream, the ducker's streams go to ``OtherAppsStateFile`` with the players paused for a
/// session. An arbiter that starts takes the file's streams over, and puts back those still
/// at a volume the previous one set (unless a session that registers again still ducks).
extension Arbiter {
    /// Reads the state file a previous arbiter left: its streams are restored, and the
    /// players it paused resumed, once the sessions have registered again (or after
    /// ``restoreWindow``), unless a session still ducks or holds them. Called once, at start.
    func adoptForeignVolumes() {
        guard let file = volumeStateFile, let ducker = state.withLock({ $0.ducker }) else { return }
        let contents: OtherAppsStateFile.Contents
        do {
            contents = try file.read()
        } catch {
            Arbiter.log("\(error)")
            return
        }
        ducker.adopt(contents.streams.map(\.record))
        state.withLock { s in
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

    /// Brings other apps' stream volumes in line with the policy (bus thread): after every
    /// decision and every change of the streams. Takes over, too, the players a previous
    /// arbiter paused, once the sessions are back.
    func reconcileForeignVolumes() {
        guard let ducker = state.withLock({ $0.ducker }) else { return }
        let now = tick
        let situation = state.withLock { s -> ForeignDuckRamp.Situation? in
            // Until the Earshot processes are known, their streams could look like others'.
            guard s.othersReady, s.streamsKnown, !s.volumesStopped else { return nil }
            let earshot = Set(s.policy.sessions.keys.compactMap { s.processes[$0] } + s.earshotPeers.values).filter { $0 > 0 }
            let peersBack = s.earshotPeersRegistered(besides: connection.uniqueName)
            let holdAdopted = !peersBack && now < s.othersReadyTick + Arbiter.restoreWindow.wholeNanoseconds
            return .init(streams: s.streams, gain: s.policy.foreignStreamGain, exempt: earshot, holdAdopted: holdAdopted)
        }
        if let situation { ducker.update(situation) }
        let (adoptions, ready) = state.withLock { s -> ([SessionPolicy.Event], Bool) in
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
            return (events, true)
        }
        if ready { savePausesIfChanged(ducker) }
        for event in adoptions { handle(event) }
    }

    /// Before decisions that pause another app's player go out (bus thread): the player is in
    /// the state file before it hears the `Pause`, so that a host killed right after leaves it
    /// to the next arbiter to play again. Written after the send, the file could still lack it
    /// at the kill: the bus thread goes on to the ducker first, and under load the player had
    /// paused, been seen paused and the host been killed before the write
    /// (`SessionOthersStateFileTests.daemonKilledPauserHoldsOn`: the next host adopted no pause).
    func savePausesAhead(of decisions: [SessionPolicy.Decision]) {
        guard decisions.contains(where: { if case .pauseForeign = $0 { true } else { false } }),
              let ducker = state.withLock({ $0.ducker }) else { return }
        savePausesIfChanged(ducker)
    }

    /// Writes the state file when the players paused for a session are not the ones it
    /// last wrote (bus thread).
    private func savePausesIfChanged(_ ducker: ForeignStreamDucker) {
        let changed = state.withLock { s in !s.volumesStopped && Arbiter.pauses(s) != s.savedPauses }
        if changed { saveForeignVolumes(ducker.records) }
    }

    /// Writes the ducked streams (`streams`) and the paused players to the state file (bus
    /// thread).
    func saveForeignVolumes(_ streams: [ForeignDuckRamp.Record]) {
        guard let file = volumeStateFile else { return }
        let players = state.withLock { s in
            let pauses = Arbiter.pauses(s)
            s.savedPauses = pauses
            return pauses.sorted { $0.key < $1.key }.map { OtherAppsStateFile.Player(player: $0.key, pausedBy: $0.value.rawValue) }
        }
        do {
            try file.write(.init(streams: streams.map(OtherAppsStateFile.Stream.init), players: players))
        } catch {
            Arbiter.log("\(error)")
        }
    }

    /// The process is exiting: puts back at once every stream this arbiter ducked, unless a
    /// session of another process still ducks (it registers with the next host, which takes
    /// the streams over from the state file). Waits for the sound server at most `timeout`.
    func restoreForeignVolumesAtExit(timeout: Duration) {
        let me = Int64(getpid())
        let (ducker, outside) = state.withLock { s -> (ForeignStreamDucker?, Bool) in
            guard !s.volumesStopped else { return (nil, false) }
            s.volumesStopped = true
            return (s.ducker, s.policy.foreignDuckers.contains { (s.processes[$0] ?? -1) != me })
        }
        if outside {
            ducker?.stop()
        } else {
            ducker?.restoreAtExit(timeout: timeout)
        }
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
