import Arbiter
import AudioEngine
import DBus
import MPRIS
import SessionPolicy

/// The session and the process's sound: players follow interruptions, the engine's sound
/// reaches the arbiter, and sound in an eligible session claims the MPRIS name.
extension AudioSession {
    /// Makes `player` the process's MPRIS player for “last sound wins”: when the process
    /// starts making sound after silence in an eligible session (playback or
    /// playAndRecord, not mixable, a remote command available), the session claims its
    /// name (`REPLACE_EXISTING`) and the arbiter records the sound. Publish the player on
    /// ``connection()``.
    public func adopt(_ player: MPRISPlayer, commands: RemoteCommandCenter) async throws {
        let observation = commands.observe { [weak self] in
            Task { try? await self?.updateRemoteCommands() }
        }
        state.withLock { s in
            s.mpris = player
            s.commandObservation = observation
        }
        remoteCommandsAvailability.withLock { $0 = commands }
        try await updateRemoteCommands()
    }

    var remoteCommandsAvailable: Bool {
        remoteCommandsAvailability.withLock { $0?.hasAvailableCommand ?? false }
    }

    func updateRemoteCommands() async throws {
        guard state.withLock({ $0.mpris != nil }) else { return }
        try await call("SetRemoteCommandsEnabled", [.boolean(remoteCommandsAvailable)])
    }

    /// Whether this session may be the remote-control target (its own view of the rule).
    public var isEligibleRemoteTarget: Bool {
        let (category, options, adopted) = state.withLock { ($0.category, $0.options, $0.mpris != nil) }
        let mixable = options.contains(.mixWithOthers) || options.contains(.duckOthers) || options.contains(.interruptSpokenAudioAndMixWithOthers)
        return (category == .playback || category == .playAndRecord) && !mixable && adopted && remoteCommandsAvailable
    }

    func startWatchingSound() {
        let id = engine.onSoundChanged { [weak self] producing in self?.soundChanged(producing) }
        state.withLock { $0.soundObserver = id }
    }

    /// The engine started or stopped producing sound: tell the arbiter; on a start in an
    /// eligible session, take the MPRIS name first so that the desktop's target follows.
    private func soundChanged(_ producing: Bool) {
        state.withLock { $0.producingSound = producing }
        AudioSession.trace(producing ? "sound started" : "sound stopped")
        Task { await self.reportSound(producing) }
    }

    func reportSound(_ producing: Bool) async {
        if producing, isEligibleRemoteTarget, let mpris = state.withLock({ $0.mpris }) {
            _ = try? await mpris.claimName()
            AudioSession.trace("name claimed")
        }
        try? await call("ReportSound", [.boolean(producing)])
        AudioSession.trace(producing ? "sound reported" : "silence reported")
    }

    // MARK: Players

    /// Called by a player that is about to start: it will follow interruptions, and an
    /// inactive session activates (as `AVAudioPlayer.play()` activates the session on
    /// iOS). Returns false while the session is interrupted: the player then waits, and
    /// starts when the interruption ends with `shouldResume`.
    func playerWillStart(_ player: AudioPlayer) -> Bool {
        let (allowed, activate) = state.withLock { s -> (Bool, Bool) in
            s.players[ObjectIdentifier(player)] = WeakPlayer(player: player)
            if s.interrupted {
                s.pausedByInterruption.insert(ObjectIdentifier(player))
                return (false, false)
            }
            s.pausedByInterruption.remove(ObjectIdentifier(player))
            return (true, !s.isActive)
        }
        if activate {
            Task {
                try? await self.setActive(true)
                // Sound that started before the activation reached the arbiter was refused
                // there; now that the session is active, report it again.
                if self.engine.isProducingSound { await self.reportSound(true) }
            }
        }
        return allowed
    }

    func pausePlayersForInterruption() {
        let playing = livePlayers().filter(\.isPlaying)
        state.withLock { s in s.pausedByInterruption.formUnion(playing.map(ObjectIdentifier.init)) }
        playing.forEach { $0.pauseForSession(.interrupted) }
    }

    func resumePlayersAfterInterruption(_ shouldResume: Bool) {
        let paused = state.withLock { s -> Set<ObjectIdentifier> in
            defer { s.pausedByInterruption = [] }
            return s.pausedByInterruption
        }
        let players = livePlayers().filter { paused.contains(ObjectIdentifier($0)) }
        guard shouldResume, !players.isEmpty else {
            players.forEach { $0.sessionReleased(resumed: false) }
            return
        }
        Task {
            try? await self.setActive(true)
            players.forEach { $0.resumeAfterInterruption() }
        }
    }

    func pauseAllPlayers() {
        livePlayers().filter(\.isPlaying).forEach { $0.pauseForSession(.deviceLost) }
    }

    private func livePlayers() -> [AudioPlayer] {
        state.withLock { s in
            s.players = s.players.filter { $0.value.player != nil }
            return s.players.values.compactMap(\.player)
        }
    }
}
