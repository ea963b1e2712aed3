import Dispatch
import Earshot
import MPRIS
import Dispatch
import FoundationEssentials
import Glibc
import AudioEngine
import Synchronization

/// A player without sound: a list of tracks, a running clock, and handlers for every
/// remote command that print what they received and change the now-playing info.
final class StandInPlayer: Sendable {
    struct Track: Sendable {
        var title: String
        var artist: String?
        var album: String?
        var length: Double
        var artPath: String?
    }

    private struct State {
        var index = 0
        var playbackState: PlaybackState
        var rate = 1.0
        var volume = 1.0
        var repeatMode: RepeatMode = .off
        var shuffleMode: ShuffleMode = .off
        /// Counts the arms of ``endOfTitle``; an arm whose number is no longer the latest
        /// was overtaken by a later one and leaves the timer alone.
        var timerGeneration: UInt64 = 0
    }

    let tracks: [Track]
    private let state: Mutex<State>
    private let commands: RemoteCommandCenter
    private let nowPlaying: NowPlayingInfoCenter
    private let quit = Doorbell()
    /// Fires when the current title ends: one timer source for the player's life, moved by
    /// each change of state (``armEndOfTitle()``) and disarmed while paused or stopped.
    ///
    /// Not a fresh `asyncAfter` per change: libdispatch keeps such a timer (its source,
    /// continuation and closure, about 450 bytes) until its own deadline, however stale,
    /// and the deadline is up to a title's length away (180 s by default, at most 1e6 s).
    /// Every MPRIS call that changed the state while playing (Play, Set Volume, LoopStatus,
    /// Rate, Seek...) left one behind: under a steady load of calls memory grew by about
    /// 120 kB per 1,000 calls and stayed (issue 31, item 2).
    ///
    /// `nonisolated(unsafe)`: Swift's Dispatch does not mark its sources `Sendable`, but a
    /// source's calls (`schedule`, `cancel`) are libdispatch's, safe from any thread, and
    /// the reference never changes.
    nonisolated(unsafe) private let endOfTitle = DispatchSource.makeTimerSource(queue: .global())

    init(tracks: [Track], startPlaying: Bool, commands: RemoteCommandCenter, nowPlaying: NowPlayingInfoCenter) {
        precondition(!tracks.isEmpty)
        self.tracks = tracks
        self.state = Mutex(State(playbackState: startPlaying ? .playing : .paused))
        self.commands = commands
        self.nowPlaying = nowPlaying
        endOfTitle.setEventHandler { [weak self] in self?.advanceIfFinished(orRearm: true) }
        endOfTitle.activate()
        commands.changePlaybackRateCommand.supportedPlaybackRates = [0.5, 1, 1.5, 2]
        load(index: 0, at: 0)
        installHandlers()
    }

    deinit { endOfTitle.cancel() }

    /// Has `signals` end ``run()`` from now on: call it before the player is announced,
    /// so that a signal sent once it is ends the run (see `onTerminationSignals`).
    func watch(_ signals: [Int32]) async -> [DispatchSourceSignal] {
        await onTerminationSignals(signals) { [quit] in quit.ring() }
    }

    /// Keeps the clock running (advancing at the end of each track) until a quit command
    /// or a watched signal arrives.
    ///
    /// Nothing polls the clock: each change of state moves the one end-of-title timer to
    /// the moment the current title ends (disarmed while paused or stopped), so an idle
    /// stand-in sleeps.
    func run() async {
        await quit.wait()
    }

    // MARK: Commands

    private func installHandlers() {
        commands.playCommand.addTarget { [weak self] _ in self?.play() ?? .commandFailed }
        commands.pauseCommand.addTarget { [weak self] _ in self?.pause() ?? .commandFailed }
        commands.togglePlayPauseCommand.addTarget { [weak self] _ in
            guard let self else { return .commandFailed }
            say("play-pause")
            return self.state.withLock { $0.playbackState == .playing } ? self.pause(quietly: true) : self.play(quietly: true)
        }
        commands.stopCommand.addTarget { [weak self] _ in
            guard let self else { return .commandFailed }
            say("stop")
            self.state.withLock { $0.playbackState = .stopped }
            self.publish(position: 0)
            return .success
        }
        commands.nextTrackCommand.addTarget { [weak self] _ in self?.step(by: 1, "next") ?? .commandFailed }
        commands.previousTrackCommand.addTarget { [weak self] _ in self?.step(by: -1, "previous") ?? .commandFailed }
        commands.seekCommand.addTarget { [weak self] event in
            guard let self else { return .commandFailed }
            let target = self.clamp(self.nowPlaying.currentElapsedTime + event.offset)
            say("seek \(event.offset >= 0 ? "+" : "")\(event.offset.fixed(3)) s -> \(target.fixed(3)) s")
            self.publish(position: target)
            return .success
        }
        commands.changePlaybackPositionCommand.addTarget { [weak self] event in
            guard let self else { return .commandFailed }
            say("set-position \(event.positionTime.fixed(3)) s")
            self.publish(position: self.clamp(event.positionTime))
            return .success
        }
        commands.changePlaybackRateCommand.addTarget { [weak self] event in
            guard let self else { return .commandFailed }
            say("rate \(event.playbackRate)")
            self.state.withLock { $0.rate = event.playbackRate }
            self.publish()
            return .success
        }
        commands.changeVolumeCommand.addTarget { [weak self] event in
            guard let self else { return .commandFailed }
            say("volume \(event.volume.fixed(2))")
            self.state.withLock { $0.volume = event.volume }
            self.publish()
            return .success
        }
        commands.changeRepeatModeCommand.addTarget { [weak self] event in
            guard let self else { return .commandFailed }
            say("loop \(event.repeatMode)")
            self.state.withLock { $0.repeatMode = event.repeatMode }
            self.publish()
            return .success
        }
        commands.changeShuffleModeCommand.addTarget { [weak self] event in
            guard let self else { return .commandFailed }
            say("shuffle \(event.shuffleMode == .items ? "on" : "off")")
            self.state.withLock { $0.shuffleMode = event.shuffleMode }
            self.publish()
            return .success
        }
        commands.openURICommand.addTarget { event in
            say("open-uri \(event.uri)")
            return .success
        }
        commands.raiseCommand.addTarget { _ in
            say("raise")
            return .success
        }
        commands.quitCommand.addTarget { [weak self] _ in
            say("quit")
            self?.quit.ring()
            return .success
        }
    }

    private func play(quietly: Bool = false) -> RemoteCommandHandlerStatus {
        if !quietly { say("play") }
        let wasStopped = state.withLock { s in
            defer { s.playbackState = .playing }
            return s.playbackState == .stopped
        }
        publish(position: wasStopped ? 0 : nil)
        return .success
    }

    private func pause(quietly: Bool = false) -> RemoteCommandHandlerStatus {
        if !quietly { say("pause") }
        state.withLock { $0.playbackState = .paused }
        publish()
        return .success
    }

    private func step(by delta: Int, _ word: String) -> RemoteCommandHandlerStatus {
        let index = state.withLock { s -> Int? in
            var next = s.index + delta
            if !tracks.indices.contains(next) {
                guard s.repeatMode == .all else { return nil }
                next = (next + tracks.count) % tracks.count
            }
            s.index = next
            return next
        }
        guard let index else {
            say("\(word): no more titles")
            return .noSuchContent
        }
        say("\(word) -> \(index + 1)/\(tracks.count) \(tracks[index].title)")
        load(index: index, at: 0)
        return .success
    }

    /// At the end of a track: repeat it, go on, wrap around, or stop after the last.
    private func advanceIfFinished(orRearm rearm: Bool) {
        let (playing, index, mode) = state.withLock { ($0.playbackState == .playing, $0.index, $0.repeatMode) }
        guard playing else { return }
        guard nowPlaying.currentElapsedTime >= tracks[index].length else {
            if rearm { armEndOfTitle() }
            return
        }
        if mode == .one {
            publish(position: 0)
        } else if index + 1 < tracks.count || mode == .all {
            let next = (index + 1) % tracks.count
            state.withLock { $0.index = next }
            load(index: next, at: 0)
        } else {
            state.withLock { $0.playbackState = .stopped }
            publish(position: 0)
        }
    }

    private func clamp(_ position: Double) -> Double {
        let length = tracks[state.withLock { $0.index }].length
        return min(max(0, position), length)
    }

    // MARK: Now playing

    private func load(index: Int, at position: Double) {
        publish(position: position)
    }

    /// Writes the current state into the now-playing info; `position` moves the clock.
    private func publish(position: Double? = nil) {
        let s = state.withLock { $0 }
        let track = tracks[s.index]
        let count = tracks.count
        nowPlaying.update { info in
            var new = info ?? NowPlayingInfo()
            new.trackID = "\(s.index)"
            new.title = track.title
            new.artists = track.artist.map { [$0] } ?? []
            new.album = track.album
            new.artworkPath = track.artPath
            new.duration = track.length
            new.queueIndex = s.index
            new.queueCount = count
            new.playbackState = s.playbackState
            new.playbackRate = s.playbackState == .playing ? s.rate : 0
            new.defaultPlaybackRate = s.rate
            new.volume = s.volume
            new.repeatMode = s.repeatMode
            new.shuffleMode = s.shuffleMode
            if let position { new.elapsedTime = position }
            info = new
        }
        armEndOfTitle()
    }

    /// Moves ``endOfTitle`` to the moment the current title ends when it plays, and
    /// disarms it otherwise. Arms may race (a command on the MPRIS command thread, the
    /// timer's own re-arm on a Dispatch thread): the last one to read the state is the one
    /// whose deadline stands, because an arm schedules only while its number is still the
    /// latest, under the state lock.
    private func armEndOfTitle() {
        let (generation, playing, rate, length) = state.withLock { s in
            s.timerGeneration &+= 1
            return (s.timerGeneration, s.playbackState == .playing, s.rate, tracks[s.index].length)
        }
        var deadline = DispatchTime.distantFuture
        if playing, rate > 0 {
            let remaining = max(0, length - nowPlaying.currentElapsedTime) / rate
            // A millisecond late rather than early, so that the clock has reached the end.
            deadline = .now() + .microseconds(Int(min(remaining, 1e6) * 1e6) + 1000)
        }
        state.withLock { s in
            guard s.timerGeneration == generation else { return }
            endOfTitle.schedule(deadline: deadline)
        }
    }
}
