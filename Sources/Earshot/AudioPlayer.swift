public import AudioEngine
public import FoundationEssentials
import MPRIS
import Synchronization

/// Plays one sound file or buffer (the `AVAudioPlayer` analog).
///
/// Many players can play at once in one process; the engine mixes them. Every method
/// may be called from any thread. Events reach the ``delegate`` and the ``events``
/// sequence on the engine's event thread.
public final class AudioPlayer: Sendable {
    /// What a player reports.
    public enum Event: Sendable {
        /// Playback reached the end (after the loops), or stopped on a decode error.
        case finished(successfully: Bool)
        /// The file could not be decoded past some point.
        case decodeError(AudioFileError)
        /// The output device failed; the player paused.
        case deviceError(AudioEngineError)
        /// The audio session was interrupted while the player played: it paused
        /// (`audioPlayerBeginInterruption`).
        case interruptionBegan
        /// The interruption that paused the player ended
        /// (`audioPlayerEndInterruption(_:withOptions:)`). With `shouldResume` the player
        /// plays again by itself, unless ``AudioPlayer/automaticallyResumesAfterInterruption``
        /// is false: then it stays paused and the app decides.
        case interruptionEnded(shouldResume: Bool)
    }

    /// The format facts of the player's audio (`AVAudioPlayer.settings`).
    public struct Settings: Sendable, Hashable {
        /// The container format ("WAV", "FLAC", "MP4"…).
        public var container: String
        /// The encoding inside it ("PCM_16", "Vorbis", "AAC"…).
        public var encoding: String
        /// Frames per second of the file.
        public var sampleRate: Int
        /// The file's channels.
        public var numberOfChannels: Int
        /// Bits per sample for PCM, ALAC and FLAC; nil for lossy formats.
        public var bitDepth: Int?
    }

    /// The file the player was made from, if any.
    public let url: URL?
    /// The bytes the player was made from, if any.
    public let data: Data?
    /// The format of the player's audio.
    public let settings: Settings
    /// Events, in order. One consumer at a time.
    public let events: AsyncStream<Event>

    let voice: Voice
    let engine: AudioEngine
    private let continuation: AsyncStream<Event>.Continuation
    private let state = Mutex(PlayerState())

    private struct PlayerState {
        weak var delegate: (any AudioPlayerDelegate)?
        var meters: [(peak: Float, average: Float)] = [(-160, -160), (-160, -160)]
    }

    /// Opens a file.
    ///
    /// An `http://` or `https://` URL is streamed (see ``AudioPlayer/stream``): the call returns
    /// once the server has answered and the first packets are in.
    ///
    /// - Throws: ``AudioFileError`` naming the file and the reason (missing, a
    ///   directory, unreadable, empty, truncated, unsupported), or ``AudioEngineError``.
    public convenience init(contentsOf url: URL) throws {
        try self.init(contentsOf: url, engine: .shared)
    }

    /// Decodes from bytes in memory.
    ///
    /// - Throws: ``AudioFileError`` naming the reason (empty, truncated, unsupported), or
    ///   ``AudioEngineError``.
    public convenience init(data: Data) throws {
        try self.init(data: data, engine: .shared)
    }

    /// Opens a file to play on `engine` (the package's tools and tests: another device, a
    /// private server); apps play on the shared engine.
    package convenience init(contentsOf url: URL, engine: AudioEngine) throws {
        try self.init(file: AudioPlayer.openSource(url), url: url, data: nil, engine: engine)
    }

    /// Decodes from bytes in memory, to play on `engine`.
    package convenience init(data: Data, engine: AudioEngine) throws {
        try self.init(file: AudioFile(data: [UInt8](data), name: "audio data (\(data.count) bytes)"), url: nil, data: data, engine: engine)
    }

    private init(file: any FrameSource, url: URL?, data: Data?, engine: AudioEngine) throws {
        self.url = url
        self.data = data
        self.engine = engine
        settings = Settings(container: file.format.container, encoding: file.format.encoding,
                            sampleRate: file.format.sampleRate, numberOfChannels: file.format.channelCount,
                            bitDepth: file.format.bitDepth)
        voice = try engine.makeVoice(for: file)
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
        // When the first frame is heard (the output had to open, the sink to wake), the
        // position is published again: MPRIS extrapolates from there, not from the play call.
        voice.setStartHandler { [weak self] in
            guard let self else { return }
            for waiter in self.firstFrameWaiters.withLock({ w in defer { w = [] }; return w }) { waiter() }
            guard self.voice.isPlaying else { return }
            self.joinedSession.withLock { $0 }?.playerWasHeard()
            self.stateChanged(.resumed)
        }
        // A wrap restarts the elapsed time (a discontinuity: MPRIS says Seeked).
        voice.setWrapHandler { [weak self] in self?.stateChanged() }
        // A pause publishes the position the engine expects it to stop at; once the output
        // says what was heard, that (MPRIS's Position while paused).
        voice.setPauseSettledHandler { [weak self] in
            guard let self, !self.voice.isPlaying else { return }
            self.stateChanged()
        }
        // Two sources of "waiting for data": the decoder's own word (a file's DataSupply)
        // and the engine's (the reader needed frames and a network stream had none).
        voice.supply?.observe { [weak self] starved in self?.tell(.supply(starved: starved)) }
        voice.setSupplyHandler { [weak self] starved in self?.tell(.supply(starved: starved)) }
        voice.setHandlers(
            onFinished: { [weak self] successfully in
                guard let self else { return }
                // Not a change for the owner, which hears of the end from the delegate and
                // decides what its now playing shows then (a queue's next item, or the end).
                self.publishNowPlaying()
                self.continuation.yield(.finished(successfully: successfully))
                self.delegate?.audioPlayerDidFinishPlaying(self, successfully: successfully)
            },
            onError: { [weak self] error in
                guard let self else { return }
                if let error = error as? AudioFileError {
                    self.continuation.yield(.decodeError(error))
                    let delegate = self.delegate
                    delegate?.audioPlayerDecodeErrorDidOccur(self, error: error)
                    delegate?.audioPlayerDecodeErrorDidOccur(self, error: error as (any Error)?)
                } else if let error = error as? AudioEngineError {
                    // The output failed under the player: the engine paused it where it was
                    // heard; its owner (a queue) must stop saying it plays.
                    self.stateChanged(.paused(.deviceLost))
                    self.continuation.yield(.deviceError(error))
                }
            })
    }

    deinit {
        voice.dispose()
        continuation.finish()
    }

    /// Receives finish, decode-error and interruption callbacks; held weakly.
    public var delegate: (any AudioPlayerDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    // MARK: Transport

    /// Fills the buffers so that ``play()`` starts without delay. Always succeeds.
    @discardableResult
    public func prepareToPlay() -> Bool {
        voice.prepare()
        return true
    }

    /// Plays from the current position. Returns false when the device cannot be opened
    /// (``lastError`` says why).
    @discardableResult
    public func play() -> Bool { start(at: nil) }

    /// Plays, for a play the app asked for earlier, when the process's session had begun
    /// `interruptions` interruptions (a queue's item that opened since): if one has begun
    /// since and holds the session, the player waits for its end instead of taking over.
    func play(askedAfter interruptions: UInt64?) -> Bool { start(at: nil, askedAfter: interruptions) }

    /// Plays when ``deviceCurrentTime`` reaches `time`: players given the same time start
    /// on the same sample frame.
    @discardableResult
    public func play(atTime time: TimeInterval) -> Bool { start(at: time) }

    private func start(at time: TimeInterval?, askedAfter interruptions: UInt64? = nil) -> Bool {
        var started: (session: AudioSession, interruptions: UInt64)?
        if let session = joinedSession.withLock({ $0 }) ?? engine.followedSession, session.isConnected {
            joinedSession.withLock { $0 = session }
            started = (session, session.interruptionsBegun)
            if !session.playerWillStart(self, askedAfter: interruptions) {
                // Interrupted: the player waits for the interruption to end.
                tell(.paused(.interrupted))
                return false
            }
        } else {
            // The implicit session: the player joins the process's session by itself,
            // asynchronously; the sound starts at once.
            AudioSession.joinImplicitly(self)
        }
        do {
            // Started by the engine on the previous player's end (a queue's gapless next
            // item): it plays, or has already ended in the mix, and is not started again
            // (shorter than a long buffer, it was heard twice).
            // Nor is one whose end is mixed and still to be heard (a long buffer's last
            // seconds): it still plays, as far as the listener goes.
            if time != nil || !(voice.startedByPredecessor || voice.isEndingUnheard) { try voice.play(atDeviceTime: time) }
            if let started { started.session.playerDidStart(self, interruptionsBefore: started.interruptions) }
            lastErrorStorage.withLock { $0 = nil }
            stateChanged()
            return true
        } catch {
            lastErrorStorage.withLock { $0 = error }
            return false
        }
    }

    private let lastErrorStorage = Mutex<AudioEngineError?>(nil)
    /// Called once when the next start is heard (see ``afterNextStart(_:)``).
    private let firstFrameWaiters = Mutex<[@Sendable () -> Void]>([])

    /// Calls `body` on the engine's event thread once the player's next start is heard
    /// (at once if it is playing already): work that must not compete with the first frame.
    func afterNextStart(_ body: @escaping @Sendable () -> Void) {
        if isPlaying {
            body()
            return
        }
        firstFrameWaiters.withLock { $0.append(body) }
    }

    /// The session the player joined at its first play: it stays with it.
    let joinedSession = Mutex<AudioSession?>(nil)
    /// The center ``connect(to:commands:)`` bound the player to.
    let nowPlayingCenter = Mutex<NowPlayingInfoCenter?>(nil)
    /// Keeps the engine's `media.name` on the connected center's title (see `connect`).
    let titleFollower = Mutex<ObservationToken?>(nil)

    /// Why the last ``play()`` failed.
    public var lastError: AudioEngineError? { lastErrorStorage.withLock { $0 } }

    /// Starts on the exact frame where `player` ends (gapless), if it ends while playing.
    func play(after player: AudioPlayer) -> Bool {
        do {
            try voice.play(after: player.voice)
            return true
        } catch {
            lastErrorStorage.withLock { $0 = error }
            return false
        }
    }

    /// Cancels a ``play(after:)`` that was queued on this player.
    func cancelQueuedSuccessor() { voice.clearSuccessor() }

    /// Pauses; buffers and position are kept.
    public func pause() {
        voice.pause()
        stateChanged()
    }

    /// Why the session paused a player.
    enum SessionPause: Sendable { case interrupted, deviceLost }

    /// Pauses on the session's behalf and tells the owner (a queue keeps its state right).
    func pauseForSession(_ reason: SessionPause) {
        voice.pause()
        stateChanged(.paused(reason))
        if reason == .interrupted { deliverInterruption(began: true, shouldResume: false) }
    }

    /// Plays again after the session's interruption ended with `shouldResume` (or after
    /// the session's own activation, for a `play()` made while interrupted).
    func resumeAfterInterruption(endingInterruption: Bool = false) {
        if endingInterruption { deliverInterruption(began: false, shouldResume: true) }
        _ = start(at: nil)
        tell(.resumed)
    }

    /// The interruption ended and the player stays paused: without `shouldResume`, or
    /// with it for a player that does not resume by itself.
    func sessionReleased(shouldResume: Bool) {
        tell(.stayedPaused)
        deliverInterruption(began: false, shouldResume: shouldResume)
    }

    private func deliverInterruption(began: Bool, shouldResume: Bool) {
        tell(began ? .interruptionBegan : .interruptionEnded(shouldResume: shouldResume))
        continuation.yield(began ? .interruptionBegan : .interruptionEnded(shouldResume: shouldResume))
        if began {
            delegate?.audioPlayerBeginInterruption(self)
        } else {
            let delegate = self.delegate
            delegate?.audioPlayerEndInterruption(self, shouldResume: shouldResume)
            delegate?.audioPlayerEndInterruption(self, withOptions: shouldResume ? 1 : 0)
        }
    }

    /// What changed in the player, for its owner (a queue), which derives its own state
    /// and now playing from it.
    enum Change: Sendable {
        /// What now playing shows of the player (see ``AudioPlayer/stateChanged(_:seekedTo:)``).
        case state
        /// What the session did to the player.
        case paused(SessionPause), resumed, stayedPaused
        /// An interruption began or ended (the player's own event, for the owner's).
        case interruptionBegan, interruptionEnded(shouldResume: Bool)
        /// The decoder's data stalls (true) or flows again (false); see `DataSupply`. A
        /// queue turns it into "waiting to play".
        case supply(starved: Bool)
    }

    /// The owner's (a queue's) ear for the player's ``Change``s.
    let changeObserver = Mutex<(@Sendable (Change) -> Void)?>(nil)

    /// Tells the owner of `change`, which leaves what the player's own now playing shows as it was.
    func tell(_ change: Change) { changeObserver.withLock { $0 }?(change) }

    /// The player's one "state changed" event, raised wherever what now playing shows of it
    /// changes: a play (and its start heard), a pause (and where it settled, heard; or by
    /// the session), a stop, a seek (`position`, which the voice may not report yet), the
    /// rate, each loop's wrap, the device lost. It tells the owner (`change`) and
    /// republishes the connected center, which passes on only what changed.
    func stateChanged(_ change: Change = .state, seekedTo position: TimeInterval? = nil) {
        tell(change)
        publishNowPlaying(at: position)
    }

    /// Whether the player plays again by itself when an interruption that paused it ends
    /// with `shouldResume` (true by default). When false, it stays paused and hears
    /// ``Event/interruptionEnded(shouldResume:)``: the app decides, as an iOS app does in
    /// `audioPlayerEndInterruption(_:withOptions:)`.
    public var automaticallyResumesAfterInterruption: Bool {
        get { resumesByItself.load(ordering: .relaxed) }
        set { resumesByItself.store(newValue, ordering: .relaxed) }
    }
    private let resumesByItself = Atomic<Bool>(true)

    /// Whether the session pauses this player when the device in use goes away
    /// (`oldDeviceUnavailable`). A queue's players do, as `AVPlayer` does; an
    /// `AudioPlayer` of the app's own plays on, as `AVAudioPlayer` does: the app decides
    /// from the route-change notification, which carries the reason and the previous route.
    let pausesWhenDeviceGoesAway = Atomic<Bool>(false)

    /// Stops and releases what ``prepareToPlay()`` acquired (the buffers, the place in
    /// the engine), as `AVAudioPlayer.stop()` does; ``currentTime`` is kept, so
    /// ``play()`` afterwards continues from there. Set ``currentTime`` to 0 to rewind.
    public func stop() {
        let position = voice.currentTime
        voice.stop()
        voice.seek(to: position)
        stateChanged()
    }

    /// Whether the player is playing now.
    public var isPlaying: Bool { voice.isPlaying || voice.isEndingUnheard }

    /// Whether the player's end has been mixed and is still to be heard (up to a long
    /// buffer's length): ``isPlaying`` reads true meanwhile, and a pause or seek takes the
    /// end back (see `Voice.isEndingUnheard`).
    package var isEndingUnheard: Bool { voice.isEndingUnheard }

    /// The position in seconds; setting it seeks, also while playing.
    public var currentTime: TimeInterval {
        get { voice.currentTime }
        set {
            voice.seek(to: newValue)
            stateChanged(seekedTo: newValue)
        }
    }

    /// The length of the audio in seconds.
    public var duration: TimeInterval { voice.duration }

    /// The channels of the audio.
    public var numberOfChannels: Int { settings.numberOfChannels }

    /// 0 plays once, n plays n + 1 times, a negative value loops until ``stop()``.
    public var numberOfLoops: Int {
        get { voice.loops }
        set { voice.loops = newValue }
    }

    /// The engine's device clock, for ``play(atTime:)``.
    public var deviceCurrentTime: TimeInterval { engine.deviceCurrentTime }

    // MARK: Level, balance, rate

    /// 0…1.
    public var volume: Float {
        get { voice.volume }
        set { voice.setVolume(newValue) }
    }

    /// Fades the volume to `volume` over `duration` seconds.
    public func setVolume(_ volume: Float, fadeDuration duration: TimeInterval) {
        voice.setVolume(volume, fadeDuration: duration)
    }

    /// −1 (left) … 1 (right).
    public var pan: Float {
        get { voice.panPosition }
        set { voice.panPosition = newValue }
    }

    /// Whether ``rate`` applies.
    public var enableRate: Bool {
        get { voice.isRateEnabled }
        set {
            voice.isRateEnabled = newValue
            stateChanged()
        }
    }

    /// 0.5…2, the pitch preserved; only with ``enableRate``.
    public var rate: Float {
        get { voice.playbackRate }
        set {
            voice.playbackRate = newValue
            stateChanged()
        }
    }

    // MARK: Meters

    /// Whether the player measures its levels for ``updateMeters()``.
    public var isMeteringEnabled: Bool {
        get { voice.isMeteringEnabled }
        set { voice.isMeteringEnabled = newValue }
    }

    /// Takes a reading for ``averagePower(forChannel:)`` and ``peakPower(forChannel:)``.
    public func updateMeters() {
        let readings = [voice.power(channel: 0), voice.power(channel: 1)]
        state.withLock { $0.meters = readings }
    }

    /// The RMS power of a channel at the last ``updateMeters()``, in dBFS (−160…0).
    /// Mono files play on both channels.
    public func averagePower(forChannel channel: Int) -> Float {
        state.withLock { $0.meters.indices.contains(channel) ? $0.meters[channel].average : -160 }
    }

    /// The peak power of a channel at the last ``updateMeters()``, in dBFS (−160…0).
    public func peakPower(forChannel channel: Int) -> Float {
        state.withLock { $0.meters.indices.contains(channel) ? $0.meters[channel].peak : -160 }
    }
}

/// Receives an ``AudioPlayer``'s events (the `AVAudioPlayerDelegate` analog).
///
/// Every method has an empty default; they are called on the engine's event thread (the
/// interruption ones on the thread that delivers the session's notifications).
///
/// A method written as an iOS app writes it for `AVAudioPlayerDelegate` is called too:
/// `audioPlayerDecodeErrorDidOccur(_:error:)` with an `(any Error)?` and
/// `audioPlayerEndInterruption(_:withOptions:)` are requirements of their own, called
/// beside Earshot's typed ones (an app implements either; one that implements both gets
/// both). Without them such a method would compile as a method of the app's own, never
/// called.
public protocol AudioPlayerDelegate: AnyObject, Sendable {
    /// Playback reached the end (after the loops), or stopped on a decode error.
    func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool)
    /// The file could not be decoded past some point.
    func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: AudioFileError)
    /// The file could not be decoded past some point, in iOS's shape: `error` is the
    /// ``AudioFileError``.
    func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: (any Error)?)
    /// The audio session was interrupted while the player played; it is paused.
    func audioPlayerBeginInterruption(_ player: AudioPlayer)
    /// The interruption ended. With `shouldResume` the player plays again by itself unless
    /// ``AudioPlayer/automaticallyResumesAfterInterruption`` is false (the
    /// `audioPlayerEndInterruption(_:withOptions:)` analog, its option as a Bool).
    func audioPlayerEndInterruption(_ player: AudioPlayer, shouldResume: Bool)
    /// The interruption ended, in iOS's shape: `flags` is 1
    /// (`AVAudioSession.InterruptionOptions.shouldResume`) when the player may resume, else 0.
    func audioPlayerEndInterruption(_ player: AudioPlayer, withOptions flags: Int)
}

extension AudioPlayerDelegate {
    /// Does nothing.
    public func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) {}
    /// Does nothing.
    public func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: AudioFileError) {}
    /// Does nothing.
    public func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: (any Error)?) {}
    /// Does nothing.
    public func audioPlayerBeginInterruption(_ player: AudioPlayer) {}
    /// Does nothing.
    public func audioPlayerEndInterruption(_ player: AudioPlayer, shouldResume: Bool) {}
    /// Does nothing.
    public func audioPlayerEndInterruption(_ player: AudioPlayer, withOptions flags: Int) {}
}
