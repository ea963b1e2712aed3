import AudioEngine
import Synchronization

/// The implicit session: as on iOS, every app has an audio session from launch, in the
/// default category (soloAmbient), and its players join it by themselves: the first one
/// that plays activates it. A process that never calls an `AudioSession` method is
/// therefore interrupted, silenced by the screen lock and activated like any other.
///
/// Joining never delays the sound: the player starts at once, and the session connects,
/// registers and activates once the player's first frame has been heard (so that the
/// connection, the arbiter it may host and the route monitor do not compete with it for
/// the processor or the sound server); the sound made before the activation reached the
/// arbiter is reported once it has. Where no session bus answers, players
/// play without a session, and do not try again for a while.
extension AudioSession {
    /// How long players leave the implicit session alone after it failed to connect.
    static let implicitRetryInterval = Duration.seconds(5)

    /// Called by a player that starts while no session is connected: it joins its engine's
    /// session (``AudioEngine/implicitSession``; a player on an engine that has none has no
    /// session).
    static func joinImplicitly(_ player: AudioPlayer) {
        guard let session = player.joinedSession.withLock({ $0 }) ?? player.engine.implicitSession else { return }
        player.joinedSession.withLock { $0 = session }
        session.join(player)
    }

    /// Registers `player`, and once it is heard connects and activates the session, unless
    /// that is already under way (the connection, once made, covers every player that
    /// joined meanwhile).
    private func join(_ player: AudioPlayer) {
        let go = state.withLock { s -> Bool in
            s.players[ObjectIdentifier(player)] = WeakPlayer(player: player)
            if s.joiningImplicitly { return false }
            if let retry = s.implicitRetryAt, ContinuousClock.now < retry { return false }
            return true
        }
        guard go else { return }
        player.afterNextStart { self.enqueue { await self.connectAndActivate() } }
    }

    /// The implicit join's work, after a joining player's first frame (on the path).
    private func connectAndActivate() async {
        let go = state.withLock { s -> Bool in
            guard !s.joiningImplicitly, s.connection == nil else { return false }
            s.joiningImplicitly = true
            return true
        }
        guard go else { return }
        do {
            try await connect()
        } catch {
            state.withLock { s in
                s.joiningImplicitly = false
                s.implicitRetryAt = ContinuousClock.now + AudioSession.implicitRetryInterval
            }
            AudioSession.trace("implicit session: no bus (\(error)); playing without a session")
            return
        }
        // The engine sounded before the session watched it: its sound is the session's
        // now, and the activation reports it.
        let sounding = engine.isProducingSound && hasPlayingPlayer
        let activate = state.withLock { s -> Bool in
            s.joiningImplicitly = false
            s.implicitRetryAt = nil
            if sounding { feed(.joinedSounding, &s) }
            return !s.client.active && !s.client.interrupted
        }
        AudioSession.trace("implicit session joined")
        guard activate else { return }
        // The first player that plays activates the session, as on iOS, even if its
        // sound has already ended (a soloAmbient activation interrupts the others).
        try? await sendActivation(true)
    }

    /// Whether the session is on the bus (players that start then follow it directly).
    var isConnected: Bool { state.withLock { $0.connection != nil } }

    /// Whether a player of the session plays now.
    var hasPlayingPlayer: Bool {
        state.withLock { s in s.players.values.contains { $0.player?.isPlaying == true } }
    }
}

extension AudioEngine {
    /// The session this engine's players follow (``playersSession``): the last one that
    /// connected on it, or one a test put there to be joined.
    var followedSession: AudioSession? { playersSession.withLock { $0 } as? AudioSession }

    /// The session a player that starts on this engine joins when none is connected there:
    /// ``followedSession`` if set, else, on the shared engine, the process's
    /// ``AudioSession/shared``. A player on another engine (a tool's own) has no session
    /// until one connects on it.
    var implicitSession: AudioSession? {
        followedSession ?? (self === AudioEngine.shared ? AudioSession.shared : nil)
    }
}
