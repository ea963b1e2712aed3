public import MPRIS
import FoundationEssentials
import Synchronization

/// The binding of an ``AudioPlayer`` to the now-playing center and the remote commands,
/// as ``QueuePlayer/connect(to:commands:)`` binds a queue: what MPRIS shows follows the
/// player, whoever pauses it (the app, a remote command, an interruption of the session).
extension AudioPlayer {
    /// Makes `nowPlaying` follow the player and `commands` control it.
    ///
    /// The player writes its playback state, position and rate into the center's
    /// ``NowPlayingInfo`` at every change (play, pause, stop, seek, rate, each loop's wrap,
    /// an interruption pausing or resuming it, the end): while an interruption holds it
    /// paused, MPRIS says `Paused` and the position stands still. Everything else of the
    /// info is the app's: set the title, artists or art by hand (before or after
    /// connecting) and the player keeps them; when nothing is set, the player names the
    /// item after its file. Play, pause, toggle, stop, seek and set-position commands get
    /// targets that act on the player.
    public func connect(to nowPlaying: NowPlayingInfoCenter, commands: RemoteCommandCenter) {
        nowPlayingCenter.withLock { $0 = nowPlaying }
        titleFollower.withLock { $0 = engine.followTitle(of: nowPlaying) }
        commands.addTransportTargets(for: self)
        commands.seekCommand.addTarget { [weak self] event in
            guard let self else { return .commandFailed }
            self.currentTime = min(max(0, self.currentTime + event.offset), self.duration)
            return .success
        }
        commands.changePlaybackPositionCommand.addTarget { [weak self] event in
            self?.currentTime = event.positionTime
            return .success
        }
        publishNowPlaying()
    }

    /// Writes the player's state into the connected center, if any (the center passes on
    /// only what changed). `position` is the position just set by a seek (the voice may
    /// not report it yet).
    func publishNowPlaying(at position: TimeInterval? = nil) {
        guard let center = nowPlayingCenter.withLock({ $0 }) else { return }
        let playing = isPlaying
        let elapsed = position ?? currentTime
        // Until its start is heard the position stands still: the center must not
        // extrapolate it from now (the start's republish would then look like a seek).
        let rate = playing && !voice.isWaitingToBeHeard ? (enableRate ? Double(self.rate) : 1) : 0
        let (name, duration) = (url?.deletingPathExtension().lastPathComponent ?? "audio", duration)
        center.update { info in
            var current = info ?? NowPlayingInfo(title: name, duration: duration)
            current.playbackState = playing ? .playing : .paused
            current.elapsedTime = elapsed
            current.playbackRate = rate
            if current.duration == nil { current.duration = duration }
            info = current
        }
    }
}
