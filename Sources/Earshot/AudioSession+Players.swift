import Arbiter
import AudioEngine
import DBus
public import MPRIS
import SessionPolicy

/// The session and the process's sound: players follow interruptions, the engine's sound
/// reaches the arbiter, and sound in an eligible session claims the MPRIS name.
extension AudioSession {
    /// Makes `player` the process's MPRIS player for “last sound wins”: when the process
    /// starts making sound after silence in an eligible session (playback or
    /// playAndRecord, not mixable, a remote command available), the session claims its
    /// name (`REPLACE_EXISTING`) and the arbiter records the sound. The player must be
    /// published on the session's own connection, as
    /// ``publishRemoteControl(_:commands:nowPlaying:trackList:)`` does.
    ///
    /// - Throws: ``AudioSessionError/arbiterUnreachable(reason:)`` when the bus or the
    ///   arbiter cannot be reached.
    public func adopt(_ player: MPRISPlayer, commands: RemoteCommandCenter) async throws {
        let observation = commands.observe { [weak self] in
            guard let self else { return }
            self.enqueue { try? await self.sendRemoteCommands() }
        }
        state.withLock { s in
            s.mpris = player
            s.commandObservation = observation
        }
        remoteCommandsAvailability.withLock { $0 = commands }
        try await AudioSessionError.mapping { try await onPath { try await self.sendRemoteCommands() } }
    }

    /// Publishes the app's remote control as an MPRIS player on the session's connection
    /// and adopts it (``adopt(_:commands:)``): media keys, headset buttons, `playerctl` and
    /// the desktop's media widgets then drive `commands` and show `nowPlaying`, and the
    /// process takes part in last sound wins. As on iOS, an app need not call it: the
    /// ``shared`` session publishes the shared centers by itself once one of their commands
    /// has a handler or now-playing info is set, named after the process. An app calls it
    /// to choose the player's name, identity and desktop entry, or to publish other centers
    /// or a track list; its player then replaces the one published without a call.
    ///
    /// - Parameters:
    ///   - configuration: the bus-name suffix, identity and desktop entry.
    ///   - commands: the commands the player delivers (the shared center by default).
    ///   - nowPlaying: the info the player shows (the default center by default).
    ///   - trackList: a queue to export as MPRIS `TrackList` (a ``QueuePlayer``).
    /// - Returns: the published player; keep it for as long as the app is controllable.
    /// - Throws: ``AudioSessionError/arbiterUnreachable(reason:)`` when the bus cannot be
    ///   reached; the player's ``DBusError`` for an invalid configuration or a name the bus
    ///   refuses.
    public func publishRemoteControl(
        _ configuration: MPRISConfiguration, commands: RemoteCommandCenter = .shared,
        nowPlaying: NowPlayingInfoCenter = .default, trackList: (any TrackListSource)? = nil
    ) async throws -> MPRISPlayer {
        // The app's own player replaces the one published without a call.
        supersedeImplicitRemoteControl()
        return try await publishPlayer(configuration, commands: commands, nowPlaying: nowPlaying, trackList: trackList)
    }

    /// Makes the MPRIS player for `configuration` on the session's connection, adopts it
    /// (``adopt(_:commands:)``) and publishes it: for the app's call and for the
    /// publication without a call. `proceed` is asked once the player exists, before it is
    /// adopted; it throws to stop there (the implicit publication, which the app's own call
    /// superseded meanwhile).
    func publishPlayer(
        _ configuration: MPRISConfiguration, commands: RemoteCommandCenter, nowPlaying: NowPlayingInfoCenter,
        trackList: (any TrackListSource)?, proceed: (MPRISPlayer) throws -> Void = { _ in }
    ) async throws -> MPRISPlayer {
        let connection = try await AudioSessionError.mapping { try await self.connection() }
        let player = try MPRISPlayer(connection: connection, configuration: configuration,
                                     commandCenter: commands, nowPlayingInfoCenter: nowPlaying, trackList: trackList)
        try proceed(player)
        try await adopt(player, commands: commands)
        try await player.publish()
        return player
    }

    var remoteCommandsAvailable: Bool {
        remoteCommandsAvailability.withLock { $0?.hasAvailableCommand ?? false }
    }

    /// Whether this session may be the remote-control target: the arbiter's rule
    /// (`SessionPolicy.isEligibleRemoteTarget`), applied to what this session tells the
    /// arbiter (its category and options, and a remote command enabled on an adopted player).
    public var isEligibleRemoteTarget: Bool {
        let (category, options, adopted) = state.withLock { ($0.category, $0.options, $0.mpris != nil) }
        return SessionPolicy.isEligibleRemoteTarget(category: category, options: options,
                                                    hasEnabledRemoteCommand: adopted && remoteCommandsAvailable)
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
    ///
    /// Called on the engine's thread; the change and its report are enqueued together on
    /// the path, so the arbiter hears the changes in the order the engine made them.
    func soundChanged(_ producing: Bool) {
        let systemOnly = producing && SystemSound.playingCount > 0 && !livePlayers().contains(where: \.isPlaying)
        let ignored = state.withLock { s -> Bool in
            guard !feed(.engineSound(producing: producing, systemSoundsOnly: systemOnly), &s).isEmpty else { return true }
            // Before the report can go: its step waits for this lock (measurements start here).
            AudioSession.trace(producing ? "sound started" : "sound stopped")
            return false
        }
        if ignored { AudioSession.trace(producing ? "system sound started (not the session's)" : "system sound stopped") }
    }

    /// What the engine's output is now, as `SetOutput` says it.
    var currentOutput: ArbiterRegistration.Output {
        switch engine.outputKind {
        case .soundServer(let server)?: ArbiterRegistration.Output(.soundServer, name: server)
        case .alsa(let device)?: ArbiterRegistration.Output(.alsa, name: device)
        case nil: .none
        }
    }

    // MARK: Players

    /// Called by a player that is about to start: it will follow interruptions, and an
    /// inactive session activates (as `AVAudioPlayer.play()` activates the session on
    /// iOS). While the session is interrupted the player does not start at once: the
    /// session activates again first (a user's play takes over, as on iOS), and the player
    /// starts only if that activation stands (it does not while the screen is locked for
    /// an ambient session); otherwise it waits for the interruption to end.
    ///
    /// `askedAfter`: for a start the app asked for earlier (a queue's item that opened
    /// since), how many interruptions had begun then. If the interruption that holds the
    /// session now began after that, the player waits for its end, as a player that was
    /// playing when it began does: the app's play came before it, and does not take over.
    /// (`earshot play`'s first item, opened while a user pressed play on another app that
    /// the start had interrupted, took the sound back from it.)
    func playerWillStart(_ player: AudioPlayer, askedAfter interruptions: UInt64? = nil) -> Bool {
        let id = ObjectIdentifier(player)
        let (interrupted, activate) = state.withLock { s -> (Bool?, Bool) in
            s.players[id] = WeakPlayer(player: player)
            // A resumption that meets a new interruption waits for its end; it does not
            // take over as a user's play does.
            if s.resumingPlayers.remove(id) != nil, s.client.interrupted {
                s.pausedByInterruption.insert(id)
                s.resumeOwed = true
                return (nil, false)
            }
            if s.client.interrupted, let interruptions, s.client.interruptionsBegun != interruptions {
                s.pausedByInterruption.insert(id)
                return (nil, false)
            }
            s.pausedByInterruption.remove(id)
            if s.pausedByInterruption.isEmpty { s.resumeOwed = false }
            if s.client.interrupted {
                s.startsAwaitingActivation.insert(id)
                return (true, false)
            }
            s.startsAwaitingActivation.remove(id)
            return (false, !s.isActive)
        }
        guard let interrupted else { return false }
        if interrupted {
            enqueue {
                try? await self.sendActivation(true)
                let start = self.state.withLock { s -> Bool in
                    guard s.startsAwaitingActivation.remove(id) != nil else { return false }
                    // Still interrupted (the screen is locked): wait for the end instead.
                    if s.client.interrupted { s.pausedByInterruption.insert(id) }
                    return !s.client.interrupted
                }
                // Its sound, if the engine starts again, is reported after the activation.
                if start { player.resumeAfterInterruption() }
            }
            return false
        }
        // Sound the engine already makes for system sounds becomes the session's (the
        // client reports it, after the activation if there is one, which reports it itself).
        state.withLock { s in
            if activate {
                // An interruption that begins while this activation is on its way pauses the
                // player; the arbiter then takes the activation as the session taking over
                // and ends that interruption without `shouldResume`. The player was playing
                // and its session won: it resumes (SessionHostileTests' burst of sessions
                // that register active and vanish left it paused, 5 runs in 12 on PipeWire
                // with a long buffer).
                s.playingActivations += 1
                enqueue {
                    try? await self.sendActivation(true)
                    self.state.withLock { $0.playingActivations -= 1 }
                }
            }
            feed(.playerStarting(activating: activate), &s)
        }
        return true
    }

    /// After `player`'s voice started (``playerWillStart(_:askedAfter:)`` let it, with
    /// `interruptionsBefore` interruptions begun): an interruption that began in between
    /// found it not playing yet and left it sounding. It is paused now, as that interruption
    /// would have paused it, and resumes with its end. (A quick resume by the user in
    /// `SessionInterruptionTests.quickResumeByUser` once left the interrupted process
    /// sounding in a fresh-clone CI run; this is the window that could do it.)
    func playerDidStart(_ player: AudioPlayer, interruptionsBefore: UInt64) {
        let id = ObjectIdentifier(player)
        let missed = state.withLock { s -> Bool in
            guard s.client.interrupted, s.client.interruptionsBegun != interruptionsBefore, !s.pausedByInterruption.contains(id) else { return false }
            s.pausedByInterruption.insert(id)
            return true
        }
        if missed { player.pauseForSession(.interrupted) }
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
        state.withLock { $0.playingActivations += 1 }
        enqueue {
            // The sound the engine kept making through the interruption (its silence threshold),
            // which the arbiter stopped counting when it interrupted, is reported once a resumed
            // player is heard (`playerWasHeard`), not with this activation: the players are
            // paused until then, and the engine's sound-stopped event for that silence could
            // still come after such a report. The arbiter then read sound, silence, and sound
            // again once the players were heard; a session that registered active in between
            // found this one active, silent and no longer resuming, and its interruption ended
            // without `shouldResume` (SessionHostileTests.burstOfVanishingSessions, sessions
            // 40 ms apart: the arbiter's trace showed `soundStarted`, `soundStopped`, then the
            // next registration's `interruptionBegan`). Until a report, the arbiter counts the
            // session as resuming, and an interruption then lets it resume at its end.
            try? await self.sendActivation(true, reportingMissedSound: false)
            // Interrupted again while activating: the players wait for that interruption's end.
            let (paused, generation) = self.state.withLock { s -> (Set<ObjectIdentifier>, UInt64) in
                s.playingActivations -= 1
                guard !s.client.interrupted else { return ([], 0) }
                s.resumeOwed = false
                defer { s.pausedByInterruption = [] }
                s.resumingPlayers.formUnion(s.pausedByInterruption)
                return (s.pausedByInterruption, s.client.interruptionsBegun)
            }
            let players = self.livePlayers().filter { paused.contains(ObjectIdentifier($0)) }
            await self.feedOnPath(.resumedPlayers(!players.isEmpty))
            guard !players.isEmpty else { return }
            players.forEach { $0.resumeAfterInterruption(endingInterruption: true) }
            // An interruption that began between the check above and the players' start
            // may have found them not playing yet: pause and record them now.
            let missed = self.state.withLock { s -> Bool in
                s.resumingPlayers.subtract(paused)
                return s.client.interrupted && s.client.interruptionsBegun != generation
            }
            if missed {
                let playing = players.filter(\.isPlaying)
                self.state.withLock { s in
                    s.pausedByInterruption.formUnion(playing.map(ObjectIdentifier.init))
                    s.resumeOwed = !s.pausedByInterruption.isEmpty
                }
                playing.forEach { $0.pauseForSession(.interrupted) }
            }
        }
    }

    /// A player's start was heard (its first frame reached the sink). After a resumption, the
    /// sound the arbiter does not count is reported now (``reportMissedSound()``, on the
    /// path): the engine sounds, so no sound-stopped event for the interruption's silence can
    /// follow the report (an audible mix resets the engine's silence count).
    func playerWasHeard() {
        state.withLock { _ = feed(.playerHeard, &$0) }
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
