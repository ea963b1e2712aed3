internal import MPRIS

/// What the transport commands drive: an ``AudioPlayer`` or a ``QueuePlayer``.
protocol TransportControlled: AnyObject, Sendable {
    var isPlaying: Bool { get }
    /// Starts or resumes playing; false when it cannot.
    func resume() -> Bool
    func pause()
    func stop()
}

extension AudioPlayer: TransportControlled {
    func resume() -> Bool { play() }
}

extension QueuePlayer: TransportControlled {
    func resume() -> Bool {
        play()
        return true
    }
}

extension RemoteCommandCenter {
    /// Aims the play, pause, toggle and stop commands at `player`, held weakly: once the
    /// player is gone they answer `commandFailed`, as does a play that cannot start. `stop`
    /// is what the stop command does (``TransportControlled/stop()`` unless given).
    func addTransportTargets<Player: TransportControlled>(
        for player: Player, stop: @escaping @Sendable (Player) -> Void = { $0.stop() }
    ) {
        playCommand.addTarget { [weak player] _ in player?.resume() == true ? .success : .commandFailed }
        pauseCommand.addTarget { [weak player] _ in
            guard let player else { return .commandFailed }
            player.pause()
            return .success
        }
        togglePlayPauseCommand.addTarget { [weak player] _ in
            guard let player else { return .commandFailed }
            if player.isPlaying { player.pause() } else { _ = player.resume() }
            return .success
        }
        stopCommand.addTarget { [weak player] _ in
            guard let player else { return .commandFailed }
            stop(player)
            return .success
        }
    }
}
