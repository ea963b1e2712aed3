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
        try await call(ArbiterProtocol.Method.setRemoteCommandsEnabled.rawValue, [.boolean(remoteCommandsAvailable)])
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
    ///
    /// System sounds are not the app's audio session (System Sound Services on iOS play
    /// outside it): sound that starts while only system sounds play neither activates nor
    /// interrupts, claims no name and is not the app's last sound. The engine mixes every
    /// voice into one sound, so the session tells them apart here, by what plays.
    private func soundChanged(_ producing: Bool) {
        let systemOnly = producing && SystemSound.playingCount > 0 && !livePlayers().contains(where: \.isPlaying)
        let ignored = state.withLock { s -> Bool in
            if systemOnly {
                s.soundIsSystemSoundsOnly = true
                return true
            }
            defer { s.soundIsSystemSoundsOnly = false }
            if !producing, s.soundIsSystemSoundsOnly { return true }
            s.producingSound = producing
            return false
        }
        guard !ignored else {
            AudioSession.trace(producing ? "system sound started (not the session's)" : "system sound stopped")
            return
        }
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

    /// Reports sound or silence to the arbiter. Reports go one at a time, in order, the
    /// latest replacing any not yet sent: a stale "silent" (from a pause just before a
    /// resume) arriving after "producing" would make the arbiter think a playing session
    /// silent, and a later interruption would then end without `shouldResume`.
    func reportSound(_ producing: Bool) async {
        let first = state.withLock { s -> Bool in
            s.soundToReport = producing
            guard !s.reportingSound else { return false }
            s.reportingSound = true
            return true
        }
        guard first else { return }  // the reporter running now sends it next
        while let next = state.withLock({ s -> Bool? in
            defer { s.soundToReport = nil }
            if s.soundToReport == nil { s.reportingSound = false }
            return s.soundToReport.map { $0 || !s.recorders.isEmpty }
        }) {
            if next, isEligibleRemoteTarget, let mpris = state.withLock({ $0.mpris }) {
                _ = try? await mpris.claimName()
                AudioSession.trace("name claimed")
            }
            if next {
                // The output is opened before the sound it carries: say it first, once.
                let output = outputArguments
                if state.withLock({ $0.outputReported != output }) {
                    try? await call(ArbiterProtocol.Method.setOutput.rawValue, output)
                    state.withLock { $0.outputReported = output }
                }
            }
            try? await call(ArbiterProtocol.Method.reportSound.rawValue, [.boolean(next)])
            AudioSession.trace(next ? "sound reported" : "silence reported")
        }
    }

    /// `SetOutput`'s arguments for the engine's output now: kind and name.
    var outputArguments: [DBusValue] {
        let (kind, name): (ArbiterProtocol.OutputKind, String) = switch engine.outputKind {
        case .soundServer(let server)?: (.soundServer, server)
        case .alsa(let device)?: (.alsa, device)
        case nil: (.none, "")
        }
        // The arbiter takes at most 255 bytes; a server's or device's name is far shorter.
        var shown = name
        while shown.utf8.count > ArbiterProtocol.maximumOutputNameBytes { shown.removeLast() }
        return [.string(kind.rawValue), .string(shown)]
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
        let (interrupted, activate) = state.withLock { s -> (Bool?, Bool) in
            s.players[id] = WeakPlayer(player: player)
            // A resumption that meets a new interruption waits for its end; it does not
            // take over as a user's play does.
            if s.resumingPlayers.remove(id) != nil, s.interrupted {
                s.pausedByInterruption.insert(id)
                s.resumeOwed = true
                return (nil, false)
            }
            s.pausedByInterruption.remove(id)
            if s.pausedByInterruption.isEmpty { s.resumeOwed = false }
            if s.interrupted {
                s.startsAwaitingActivation.insert(id)
                return (true, false)
            }
            s.startsAwaitingActivation.remove(id)
            return (false, !s.isActive)
        }
        guard let interrupted else { return false }
        // The engine already sounds, with system sounds only: it sees no new start, so
        // the player's sound is reported here.
        let joinsSystemSound = interrupted == false && state.withLock { s -> Bool in
            guard s.soundIsSystemSoundsOnly else { return false }
            (s.soundIsSystemSoundsOnly, s.producingSound) = (false, true)
            return true
        }
        if joinsSystemSound, !activate { Task { await self.reportSound(true) } }
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

    /// The interruption ended. With `shouldResume`, the players it paused play again once
    /// the session is active again; they stay recorded as paused by the interruption until
    /// then, so that an interruption beginning in between (a burst of interrupters that
    /// come and go) keeps them for its own end instead of losing them. Until they play,
    /// the resumption is owed: a later end without `shouldResume` does not cancel it (the
    /// arbiter says false when the session was not sounding yet, or when the activation
    /// sent to resume took over a new interruption, as a user's play does: an end that
    /// arrives while such an activation is on its way resumes too).
    ///
    /// Players that do not resume by themselves (`automaticallyResumesAfterInterruption`
    /// false) hear the end at once and stay paused; only the others count for the
    /// resumption.
    func resumePlayersAfterInterruption(_ shouldResume: Bool) {
        guard shouldResume else {
            let paused = state.withLock { s -> Set<ObjectIdentifier> in
                defer { s.pausedByInterruption = [] }
                return s.pausedByInterruption
            }
            livePlayers().filter { paused.contains(ObjectIdentifier($0)) }.forEach { $0.sessionReleased(shouldResume: false) }
            return
        }
        let manual = livePlayers().filter { !$0.automaticallyResumesAfterInterruption }
        let released = state.withLock { s -> Set<ObjectIdentifier> in
            let ids = Set(manual.map(ObjectIdentifier.init)).intersection(s.pausedByInterruption)
            s.pausedByInterruption.subtract(ids)
            return ids
        }
        manual.filter { released.contains(ObjectIdentifier($0)) }.forEach { $0.sessionReleased(shouldResume: true) }
        let owed = state.withLock { s -> Bool in
            s.resumeOwed = !s.pausedByInterruption.isEmpty
            return s.resumeOwed
        }
        guard owed else { return }
        Task {
            self.state.withLock { $0.resumeActivations += 1 }
            try? await self.setActive(true)
            // Interrupted again while activating: the players wait for that interruption's end.
            let (paused, generation) = self.state.withLock { s -> (Set<ObjectIdentifier>, UInt64) in
                s.resumeActivations -= 1
                guard !s.interrupted else { return ([], 0) }
                s.resumeOwed = false
                defer { s.pausedByInterruption = [] }
                s.resumingPlayers.formUnion(s.pausedByInterruption)
                return (s.pausedByInterruption, s.interruptions)
            }
            let players = self.livePlayers().filter { paused.contains(ObjectIdentifier($0)) }
            guard !players.isEmpty else { return }
            players.forEach { $0.resumeAfterInterruption(endingInterruption: true) }
            // An interruption that began between the check above and the players' start
            // may have found them not playing yet: pause and record them now.
            let missed = self.state.withLock { s -> Bool in
                s.resumingPlayers.subtract(paused)
                return s.interrupted && s.interruptions != generation
            }
            if missed {
                let playing = players.filter(\.isPlaying)
                self.state.withLock { s in
                    s.pausedByInterruption.formUnion(playing.map(ObjectIdentifier.init))
                    s.resumeOwed = !s.pausedByInterruption.isEmpty
                }
                playing.forEach { $0.pauseForSession(.interrupted) }
                return
            }
            await self.reportSoundIfStillProducing()
        }
    }

    /// The device in use went away: the players that follow that rule (a queue's, as
    /// `AVPlayer`) pause; the others play on, and the app decides.
    func pausePlayersForLostDevice() {
        livePlayers().filter { $0.isPlaying && $0.pausesWhenDeviceGoesAway.load(ordering: .relaxed) }
            .forEach { $0.pauseForSession(.deviceLost) }
    }

    private func livePlayers() -> [AudioPlayer] {
        state.withLock { s in
            s.players = s.players.filter { $0.value.player != nil }
            return s.players.values.compactMap(\.player)
        }
    }
}
