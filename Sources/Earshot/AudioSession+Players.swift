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
    /// iOS). Returns false while the session is interrupted: the player waits, for the
    /// session's own activation or for the interruption's end (see `SessionClient+Players.swift`).
    ///
    /// `askedAfter`: for a start the app asked for earlier (a queue's item that opened
    /// since), how many interruptions had begun then.
    func playerWillStart(_ player: AudioPlayer, askedAfter interruptions: UInt64? = nil) -> Bool {
        state.withLock { s in
            s.players[ObjectIdentifier(player)] = WeakPlayer(player: player)
            feed(.playerStarting(ObjectIdentifier(player), askedAfter: interruptions), &s)
            return !s.client.interrupted
        }
    }

    /// After `player`'s voice started (``playerWillStart(_:askedAfter:)`` let it, with
    /// `interruptionsBefore` interruptions begun): an interruption that began in between is
    /// applied to it now. (A quick resume by the user in
    /// `SessionInterruptionTests.quickResumeByUser` once left the interrupted process
    /// sounding in a fresh-clone CI run; this is the window that could do it.)
    func playerDidStart(_ player: AudioPlayer, interruptionsBefore: UInt64) {
        perform(state.withLock { feed(.playerStarted(ObjectIdentifier(player), interruptionsBefore: interruptionsBefore), &$0) })
    }

    /// Does to the players what the session's client asks (see `SessionClient.Effect`),
    /// outside the state lock: they tell their delegates, which may call the session.
    func perform(_ effects: [SessionClient.Effect]) {
        for effect in effects {
            switch effect {
            case .pause(let ids): livePlayers(ids).forEach { $0.pauseForSession(.interrupted) }
            case .start(let id): livePlayers([id]).forEach { $0.resumeAfterInterruption() }
            case .resume(let ids, let before):
                let players = livePlayers(ids)
                players.forEach { $0.resumeAfterInterruption(endingInterruption: true) }
                let playing = Set(players.filter(\.isPlaying).map(ObjectIdentifier.init))
                perform(state.withLock { feed(.playersResumed(ids, interruptionsBefore: before, playing: playing), &$0) })
            case .ended(let shouldResume, let released):
                post(.interruption(.ended(shouldResume: shouldResume)))
                livePlayers(released).forEach { $0.sessionReleased(shouldResume: shouldResume) }
            default: break  // steps, enqueued by `feed`; reports and registrations, on the path
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

    /// The players that still exist (of `ids`, if given).
    private func livePlayers(_ ids: Set<SessionClient.PlayerID>? = nil) -> [AudioPlayer] {
        state.withLock { s in
            s.players = s.players.filter { $0.value.player != nil }
            return s.players.compactMap { ids?.contains($0.key) == false ? nil : $0.value.player }
        }
    }
}

extension AudioSession.SessionState {
    /// The players that exist and satisfy `include`.
    func playerIDs(where include: (AudioPlayer) -> Bool = { _ in true }) -> Set<SessionClient.PlayerID> {
        Set(players.compactMap { id, weak in weak.player.map(include) == true ? id : nil })
    }

    /// The players that do not resume by themselves after an interruption.
    var manualPlayers: Set<SessionClient.PlayerID> { playerIDs { !$0.automaticallyResumesAfterInterruption } }
}
