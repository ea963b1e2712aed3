internal import Earshot

/// Plays one sound file or buffer, with `AVAudioPlayer`'s names over Earshot's `AudioPlayer`.
///
/// The members keep Apple's meanings. As on iOS, a player paused by an interruption does not
/// resume by itself: its delegate hears ``AVAudioPlayerDelegate/audioPlayerEndInterruption(_:withOptions:)``
/// and calls ``play()``. The delegate is called on the main queue.
///
/// `@unchecked Sendable`: its only mutable state, the delegate, lives under a lock; the
/// Earshot player it wraps is `Sendable`.
public final class AVAudioPlayer: NSObject, @unchecked Sendable {
    let player: AudioPlayer
    private let bridge: DelegateBridge
    private let delegateStorage = Locked(WeakDelegate())

    private struct WeakDelegate { weak var delegate: (any AVAudioPlayerDelegate)? }

    /// Opens a file (or an `http(s)` stream).
    ///
    /// - Throws: an error naming the file and the reason (missing, unreadable, empty,
    ///   truncated, unsupported).
    public convenience init(contentsOf url: URL) throws {
        try self.init(player: AudioPlayer(contentsOf: url))
    }

    /// Opens a file; the type hint is ignored (the format is read from the file).
    ///
    /// - Throws: as ``init(contentsOf:)``.
    public convenience init(contentsOf url: URL, fileTypeHint utiString: String?) throws {
        try self.init(contentsOf: url)
    }

    /// Decodes from bytes in memory.
    ///
    /// - Throws: an error naming the reason (empty, truncated, unsupported).
    public convenience init(data: Data) throws {
        try self.init(player: AudioPlayer(data: data))
    }

    /// Decodes from bytes in memory; the type hint is ignored.
    ///
    /// - Throws: as ``init(data:)``.
    public convenience init(data: Data, fileTypeHint utiString: String?) throws {
        try self.init(data: data)
    }

    private init(player: AudioPlayer) {
        self.player = player
        bridge = DelegateBridge()
        super.init()
        bridge.owner.withLock { $0.player = self }
        player.automaticallyResumesAfterInterruption = false
        player.delegate = bridge
    }

    /// Receives the player's events on the main queue; held weakly, as on iOS.
    public var delegate: (any AVAudioPlayerDelegate)? {
        get { delegateStorage.withLock { $0.delegate } }
        set { delegateStorage.withLock { $0.delegate = newValue } }
    }

    // MARK: Transport

    /// Fills the buffers so that ``play()`` starts without delay.
    @discardableResult
    public func prepareToPlay() -> Bool { player.prepareToPlay() }
    /// Plays from ``currentTime``; false when the device cannot be opened.
    @discardableResult
    public func play() -> Bool { player.play() }
    /// Plays when ``deviceCurrentTime`` reaches `time`: players given the same time start
    /// on the same frame.
    @discardableResult
    public func play(atTime time: TimeInterval) -> Bool { player.play(atTime: time) }
    /// Pauses; ``play()`` continues from here.
    public func pause() { player.pause() }
    /// Stops and releases what ``prepareToPlay()`` acquired; ``currentTime`` is kept.
    public func stop() { player.stop() }

    // MARK: State

    /// Whether the player is playing.
    public var isPlaying: Bool { player.isPlaying }
    /// The position in seconds; setting it seeks.
    public var currentTime: TimeInterval {
        get { player.currentTime }
        set { player.currentTime = newValue }
    }
    /// The length of the sound in seconds.
    public var duration: TimeInterval { player.duration }
    /// The sound's channels.
    public var numberOfChannels: Int { player.numberOfChannels }
    /// The device clock, for ``play(atTime:)``.
    public var deviceCurrentTime: TimeInterval { player.deviceCurrentTime }
    /// 0 plays once, n plays n + 1 times, a negative value loops until ``stop()``.
    public var numberOfLoops: Int {
        get { player.numberOfLoops }
        set { player.numberOfLoops = newValue }
    }
    /// The file the player was made from, if any.
    public var url: URL? { player.url }
    /// The bytes the player was made from, if any.
    public var data: Data? { player.data }

    // MARK: Level, balance, rate

    /// 0…1.
    public var volume: Float {
        get { player.volume }
        set { player.volume = newValue }
    }
    /// Fades the volume to `volume` over `duration` seconds.
    public func setVolume(_ volume: Float, fadeDuration duration: TimeInterval) {
        player.setVolume(volume, fadeDuration: duration)
    }
    /// −1 (left) … 1 (right).
    public var pan: Float {
        get { player.pan }
        set { player.pan = newValue }
    }
    /// Whether ``rate`` applies; set it before ``prepareToPlay()``, as on iOS.
    public var enableRate: Bool {
        get { player.enableRate }
        set { player.enableRate = newValue }
    }
    /// 0.5…2, the pitch kept; only with ``enableRate``.
    public var rate: Float {
        get { player.rate }
        set { player.rate = newValue }
    }

    // MARK: Meters

    /// Whether the player measures its levels for ``updateMeters()``.
    public var isMeteringEnabled: Bool {
        get { player.isMeteringEnabled }
        set { player.isMeteringEnabled = newValue }
    }
    /// Takes a reading for ``averagePower(forChannel:)`` and ``peakPower(forChannel:)``.
    public func updateMeters() { player.updateMeters() }
    /// The RMS power of a channel at the last ``updateMeters()``, in dBFS (−160…0).
    public func averagePower(forChannel channelNumber: Int) -> Float { player.averagePower(forChannel: channelNumber) }
    /// The peak power of a channel at the last ``updateMeters()``, in dBFS (−160…0).
    public func peakPower(forChannel channelNumber: Int) -> Float { player.peakPower(forChannel: channelNumber) }

    // MARK: Settings

    /// The sound's format, with Apple's keys: ``AVFormatIDKey`` (a `kAudioFormat…` value),
    /// ``AVSampleRateKey``, ``AVNumberOfChannelsKey``, and ``AVLinearPCMBitDepthKey`` where
    /// the encoding has a bit depth.
    public var settings: [String: Any] {
        let format = player.settings
        var settings: [String: Any] = [
            AVFormatIDKey: NSNumber(value: AudioFormatID(encoding: format.encoding)),
            AVSampleRateKey: NSNumber(value: Double(format.sampleRate)),
            AVNumberOfChannelsKey: NSNumber(value: format.numberOfChannels),
        ]
        if let depth = format.bitDepth { settings[AVLinearPCMBitDepthKey] = NSNumber(value: depth) }
        return settings
    }

    // MARK: Delegate

    /// Earshot's delegate of the wrapped player: takes each event to the main queue and
    /// the app's delegate there. Earshot holds it weakly; the compat player holds it.
    private final class DelegateBridge: AudioPlayerDelegate {
        /// The compat player; weak, as the player owns the bridge.
        let owner = Locked<WeakPlayer>(WeakPlayer())

        struct WeakPlayer { weak var player: AVAudioPlayer? }

        /// Calls `body` with the player and its delegate on the main queue.
        private func toDelegate(_ body: @escaping @Sendable (AVAudioPlayer, any AVAudioPlayerDelegate) -> Void) {
            guard let player = owner.withLock({ $0.player }) else { return }
            onMainQueue {
                if let delegate = player.delegate { body(player, delegate) }
            }
        }

        func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) {
            toDelegate { $1.audioPlayerDidFinishPlaying($0, successfully: flag) }
        }

        func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: AudioFileError) {
            toDelegate { $1.audioPlayerDecodeErrorDidOccur($0, error: error) }
        }

        func audioPlayerBeginInterruption(_ player: AudioPlayer) {
            toDelegate { $1.audioPlayerBeginInterruption($0) }
        }

        func audioPlayerEndInterruption(_ player: AudioPlayer, shouldResume: Bool) {
            let flags = Int(shouldResume ? AVAudioSession.InterruptionOptions.shouldResume.rawValue : 0)
            toDelegate { $1.audioPlayerEndInterruption($0, withOptions: flags) }
        }
    }
}
