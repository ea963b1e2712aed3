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
        // The sound server went away (it exited or restarted): the engine paused the players
        // where they were heard; as on iOS, the app hears that media services were reset.
        engine.onOutputReset { [weak self] in self?.post(.mediaServicesWereReset) }
    }

    /// The engine started or stopped producing sound: tell the arbiter; on a start in an
    /// eligible session, take the MPRIS name first so that the desktop's target follows.
    private func soundChanged(_ producing: Bool) {
        state.withLock { $0.producingSound = producing }
        AudioSession.trace(producing ? "sound started" : "sound stopped")
        Task { await self.reportSound(producing) }
    }

    /// After a resume within the engine's silence threshold the engine sees no new start
    /// (it never saw silence), yet the arbiter marked the session silent when it was
    /// interrupted: report the sound again. (If the engine did go silent, its own start
    /// event reports it.)
    func reportSoundIfStillProducing() async {
        if engine.isProducingSound { await reportSound(true) }
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
    /// iOS). While the session is interrupted the player does not start at once: the
    /// session activates again first (a user's play takes over, as on iOS), and the player
    /// starts only if that activation stands (it does not while the screen is locked for
    /// an ambient session); otherwise it waits for the interruption to end.
    func playerWillStart(_ player: AudioPlayer) -> Bool {
        let id = ObjectIdentifier(player)
        let (interrupted, activate) = state.withLock { s -> (Bool, Bool) in
            s.players[id] = WeakPlayer(player: player)
            s.pausedByInterruption.remove(id)
            if s.interrupted {
                s.startsAwaitingActivation.insert(id)
                return (true, false)
            }
            s.startsAwaitingActivation.remove(id)
            return (false, !s.isActive)
        }
        if interrupted {
            Task {
                try? await self.setActive(true)
                let start = self.state.withLock { s -> Bool in
                    guard s.startsAwaitingActivation.remove(id) != nil else { return false }
                    // Still interrupted (the screen is locked): wait for the end instead.
                    if s.interrupted { s.pausedByInterruption.insert(id) }
                    return !s.interrupted
                }
                if start {
                    player.resumeAfterInterruption()
                    await self.reportSoundIfStillProducing()
                }
            }
            return false
        }
        if activate {
            Task {
                try? await self.setActive(true)
                // Sound that started before the activation reached the arbiter was refused
                // there; now that the session is active, report it again.
                await self.reportSoundIfStillProducing()
            }
        }
        return true
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
            await self.reportSoundIfStillProducing()
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
