internal import Earshot

/// The settings key of the encoder's quality: an `NSNumber` holding an ``AVAudioQuality``
/// raw value (Ogg Vorbis and Opus use it).
public let AVEncoderAudioQualityKey = "AVEncoderAudioQualityKey"
/// The settings key of the encoder's bit rate in bits per second: an `NSNumber` holding an
/// `Int` (AAC's; 64 kb/s per channel when absent).
public let AVEncoderBitRateKey = "AVEncoderBitRateKey"
/// The settings key of whether linear PCM is floating point (32-bit float when true).
public let AVLinearPCMIsFloatKey = "AVLinearPCMIsFloatKey"

/// An encoder quality, with Apple's raw values.
public enum AVAudioQuality: Int, Sendable {
    /// The lowest quality.
    case min = 0
    /// Low quality.
    case low = 0x20
    /// Medium quality.
    case medium = 0x40
    /// High quality.
    case high = 0x60
    /// The highest quality.
    case max = 0x7F
}

/// Records from the input into a file, with `AVAudioRecorder`'s names over Earshot's
/// `AudioRecorder`.
///
/// The settings dictionary has Apple's keys. ``AVFormatIDKey`` chooses the file: linear PCM
/// (`kAudioFormatLinearPCM`) in the type the URL's extension names (`.wav`, `.aif`/`.aiff`,
/// `.caf`), FLAC (`kAudioFormatFLAC`), Opus (`kAudioFormatOpus`, `.opus`/`.ogg`), AAC
/// (`kAudioFormatMPEG4AAC`, iOS's usual choice, at ``AVEncoderBitRateKey`` or 64 kb/s per
/// channel) or Apple Lossless (`kAudioFormatAppleLossless`, 16 or 24 bits from
/// ``AVLinearPCMBitDepthKey``), both in an MPEG-4 audio file (`.m4a`) that FFmpeg encodes.
/// As on iOS, the session must be active in `record` or `playAndRecord` for ``record()`` to
/// succeed.
///
/// `@unchecked Sendable`: its mutable state, the delegate, lives under a lock.
public final class AVAudioRecorder: NSObject, @unchecked Sendable {
    let recorder: AudioRecorder
    /// The settings as given.
    private let givenSettings: Unchecked<[String: Any]>
    private let bridge = DelegateBridge()
    private let delegateStorage = Locked(WeakDelegate())

    private struct WeakDelegate { weak var delegate: (any AVAudioRecorderDelegate)? }

    /// A recorder of `url` with `settings` (Apple's keys; see the type's documentation).
    ///
    /// - Throws: for a format Earshot does not record (MP3, …) or settings the file type
    ///   cannot hold (AAC at a rate it does not have, such as 192 kHz).
    public init(url: URL, settings: [String: Any]) throws {
        let format = number(settings[AVFormatIDKey]).flatMap { AudioFormatID(exactly: $0) } ?? kAudioFormatLinearPCM
        var recorderSettings = AudioRecorder.Settings()
        switch format {
        case kAudioFormatLinearPCM:
            recorderSettings.fileType = nil
        case kAudioFormatFLAC:
            recorderSettings.fileType = .flac
        case kAudioFormatOpus:
            recorderSettings.fileType = .opus
        case kAudioFormatMPEG4AAC:
            recorderSettings.fileType = .aac
        case kAudioFormatAppleLossless:
            recorderSettings.fileType = .appleLossless
        default:
            throw NSError(domain: NSOSStatusErrorDomain, code: 1_718_449_215 /* 'fmt?' */, userInfo: [
                NSLocalizedDescriptionKey: "cannot record \(url.path): EarshotCompat records linear PCM, FLAC, Opus, AAC and Apple Lossless, not format \(format)",
            ])
        }
        if let rate = number(settings[AVSampleRateKey]) { recorderSettings.sampleRate = Int(rate) }
        if let channels = number(settings[AVNumberOfChannelsKey]) { recorderSettings.numberOfChannels = Int(channels) }
        if let depth = number(settings[AVLinearPCMBitDepthKey]) { recorderSettings.bitDepth = Int(depth) }
        if settings[AVLinearPCMIsFloatKey] as? Bool == true { recorderSettings.bitDepth = 32 }
        if let bitRate = number(settings[AVEncoderBitRateKey]) { recorderSettings.bitRate = Int(bitRate) }
        if let quality = number(settings[AVEncoderAudioQualityKey]) {
            recorderSettings.quality = min(max(quality / Double(AVAudioQuality.max.rawValue), 0), 1)
        }
        recorder = try AudioRecorder(url: url, settings: recorderSettings)
        givenSettings = Unchecked(settings)
        super.init()
        bridge.owner.withLock { $0.recorder = self }
        recorder.delegate = bridge
    }

    /// Receives the recorder's events on the main queue; held weakly, as on iOS.
    public var delegate: (any AVAudioRecorderDelegate)? {
        get { delegateStorage.withLock { $0.delegate } }
        set { delegateStorage.withLock { $0.delegate = newValue } }
    }

    /// The file recorded.
    public var url: URL { recorder.url }
    /// The settings as given.
    public var settings: [String: Any] { givenSettings.value }

    /// Creates the file and opens the input so that ``record()`` starts at once.
    @discardableResult
    public func prepareToRecord() -> Bool { recorder.prepareToRecord() }
    /// Starts or resumes recording; false when the session does not record or the input
    /// cannot be opened.
    @discardableResult
    public func record() -> Bool { recorder.record() }
    /// Starts recording when the device clock reaches `time`.
    @discardableResult
    public func record(atTime time: TimeInterval) -> Bool { recorder.record(atTime: time) }
    /// Records for `duration` seconds, then stops.
    @discardableResult
    public func record(forDuration duration: TimeInterval) -> Bool { recorder.record(forDuration: duration) }
    /// Records for `duration` seconds from `time`, then stops.
    @discardableResult
    public func record(atTime time: TimeInterval, forDuration duration: TimeInterval) -> Bool {
        recorder.record(atTime: time, forDuration: duration)
    }
    /// Pauses; ``record()`` continues into the same file.
    public func pause() { recorder.pause() }
    /// Stops and completes the file.
    public func stop() { recorder.stop() }
    /// Deletes the file (after ``stop()``).
    @discardableResult
    public func deleteRecording() -> Bool { recorder.deleteRecording() }

    /// Whether the recorder is recording.
    public var isRecording: Bool { recorder.isRecording }
    /// Seconds recorded.
    public var currentTime: TimeInterval { recorder.currentTime }
    /// The device clock, for ``record(atTime:)``.
    public var deviceCurrentTime: TimeInterval { recorder.deviceCurrentTime }

    /// Whether the recorder measures its levels for ``updateMeters()``.
    public var isMeteringEnabled: Bool {
        get { recorder.isMeteringEnabled }
        set { recorder.isMeteringEnabled = newValue }
    }
    /// Takes a reading for ``averagePower(forChannel:)`` and ``peakPower(forChannel:)``.
    public func updateMeters() { recorder.updateMeters() }
    /// The RMS power of a channel at the last ``updateMeters()``, in dBFS.
    public func averagePower(forChannel channelNumber: Int) -> Float { recorder.averagePower(forChannel: channelNumber) }
    /// The peak power of a channel at the last ``updateMeters()``, in dBFS.
    public func peakPower(forChannel channelNumber: Int) -> Float { recorder.peakPower(forChannel: channelNumber) }

    /// Earshot's delegate of the wrapped recorder: takes each event to the main queue.
    private final class DelegateBridge: AudioRecorderDelegate {
        let owner = Locked(WeakRecorder())

        struct WeakRecorder { weak var recorder: AVAudioRecorder? }

        private func toDelegate(_ body: @escaping @Sendable (AVAudioRecorder, any AVAudioRecorderDelegate) -> Void) {
            guard let recorder = owner.withLock({ $0.recorder }) else { return }
            onMainQueue {
                if let delegate = recorder.delegate { body(recorder, delegate) }
            }
        }

        func audioRecorderDidFinishRecording(_ recorder: AudioRecorder, successfully flag: Bool) {
            toDelegate { $1.audioRecorderDidFinishRecording($0, successfully: flag) }
        }

        func audioRecorderEncodeErrorDidOccur(_ recorder: AudioRecorder, error: AudioRecorder.RecordingError) {
            toDelegate { $1.audioRecorderEncodeErrorDidOccur($0, error: error) }
        }
    }
}

/// Receives an ``AVAudioRecorder``'s events, as iOS declares the protocol: optional methods
/// (empty defaults), not `Sendable`, called on the main queue.
public protocol AVAudioRecorderDelegate: NSObjectProtocol {
    /// The recording ended; the file is complete. `flag` is false after an encode error.
    func audioRecorderDidFinishRecording(_ recorder: AVAudioRecorder, successfully flag: Bool)
    /// The file could not be written or the input failed; the recorder stopped.
    func audioRecorderEncodeErrorDidOccur(_ recorder: AVAudioRecorder, error: Error?)
}

extension AVAudioRecorderDelegate {
    /// Does nothing.
    public func audioRecorderDidFinishRecording(_ recorder: AVAudioRecorder, successfully flag: Bool) {}
    /// Does nothing.
    public func audioRecorderEncodeErrorDidOccur(_ recorder: AVAudioRecorder, error: Error?) {}
}
