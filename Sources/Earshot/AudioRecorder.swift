public import AudioEngine
public import FoundationEssentials
import Synchronization

/// Records from an input into a file (the `AVAudioRecorder` analog).
///
/// Recording needs the process's ``AudioSession`` active in the `record` or
/// `playAndRecord` category, as on iOS. Input comes from the sound server's default source
/// (or the device an ``InputChoice`` names) through libpulse, or from ALSA where no server
/// answers. The capture callback only fills a ring; a writer thread encodes and writes the
/// file (WAV, AIFF, CAF, FLAC, Ogg Vorbis or Opus through libsndfile; AAC or Apple Lossless
/// in an MPEG-4 `.m4a` file through FFmpeg, loaded at run time as for decoding).
///
/// Every method may be called from any thread. Events reach ``delegate`` and ``events``
/// on the recorder's writer thread.
public final class AudioRecorder: Sendable {
    /// What a recorder reports.
    public enum Event: Sendable {
        /// The recording ended (``stop()``, the duration reached, or a failure): the file is
        /// complete. `successfully` is false after a failure.
        case finished(successfully: Bool)
        /// The file could not be written or the input failed; the recorder stopped and the
        /// file holds what was recorded until then.
        case encodeError(RecordingError)
        /// The sound server went away while recording and came back within the input's
        /// `InputChoice.reconnectTimeout`: the recorder goes on into the same
        /// file, which does not hold the `gap` seconds the server was away.
        case inputResumed(gap: TimeInterval)
    }

    /// The file being recorded.
    public let url: URL
    /// The format written.
    public let format: Format
    /// The input recorded from.
    public let input: InputChoice
    /// Events, in order. One consumer at a time.
    public let events: AsyncStream<Event>

    let engine: AudioEngine
    let session: AudioSession?
    private let continuation: AsyncStream<Event>.Continuation
    let state = Mutex(RecorderState())

    struct RecorderState {
        weak var delegate: (any AudioRecorderDelegate)?
        var recording: Recording?
        /// The last recording's length, once it has ended.
        var finalDuration: Double = 0
        var meters: [(peak: Float, average: Float)] = []
        var metering = false
        var lastError: (any Error)?
        var pausedByInterruption = false
        var observation: ObservationToken?
    }

    /// A recorder for `url` with `format` (see ``init(url:settings:input:session:)``
    /// for a file type from the file's extension).
    ///
    /// - Parameters:
    ///   - url: the file to write.
    ///   - format: its file type, sample rate, channels, bit depth and quality.
    ///   - input: where to capture from (the sound server's default source by default).
    ///   - session: the session whose category and interruptions the recorder follows
    ///     (the shared one by default; nil records without a session, for tools and tests
    ///     that manage none).
    public convenience init(url: URL, format: Format, input: InputChoice = .init(), session: AudioSession? = .shared) {
        self.init(url: url, format: format, input: input, session: session, engine: .shared)
    }

    /// A recorder whose input `engine` opens (the package's tools and tests); apps record
    /// through the process's shared engine.
    package init(url: URL, format: Format, input: InputChoice, session: AudioSession?, engine: AudioEngine) {
        self.url = url
        self.format = format
        self.input = input
        self.session = session
        self.engine = engine
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
        if let session { followInterruptions(of: session) }
    }

    /// A recorder whose file type comes from `url`'s extension (`.wav`, `.aiff`, `.caf`,
    /// `.flac`, `.ogg`, `.opus`, `.m4a` for AAC), with `settings` for the rest.
    ///
    /// - Throws: ``RecordingError`` (`unsupportedFormat`) for an unknown
    ///   extension or settings the type cannot hold.
    public convenience init(url: URL, settings: Settings = Settings(), input: InputChoice = .init(),
                            session: AudioSession? = .shared) throws {
        try self.init(url: url, settings: settings, input: input, session: session, engine: .shared)
    }

    /// A recorder whose file type comes from `url`'s extension, whose input `engine` opens
    /// (the package's tools and tests).
    package convenience init(url: URL, settings: Settings = Settings(), input: InputChoice = .init(), session: AudioSession?,
                             engine: AudioEngine) throws {
        let ext = url.pathExtension
        guard let type = settings.fileType ?? RecordingFormat.FileType(fileExtension: ext) else {
            throw RecordingError.unsupportedFormat(path: url.path, reason: "no file type for the extension “.\(ext)” (wav, aiff, caf, flac, ogg, opus, m4a)")
        }
        let format = RecordingFormat(fileType: type, sampleRate: settings.sampleRate, channels: settings.numberOfChannels,
                                     bitDepth: settings.bitDepth, quality: settings.quality, bitRate: settings.bitRate)
        if let problem = format.problem { throw RecordingError.unsupportedFormat(path: url.path, reason: problem) }
        self.init(url: url, format: format, input: input, session: session, engine: engine)
    }

    /// The settings of a recording (`AVAudioRecorder`'s settings dictionary, typed).
    public struct Settings: Sendable, Hashable {
        /// The file type; nil: from the file's extension.
        public var fileType: FileType?
        /// Frames per second (the sound server converts the input to it).
        public var sampleRate: Int
        /// Channels of the file and the capture.
        public var numberOfChannels: Int
        /// Bits per sample for WAV, AIFF, CAF (16, 24, 32 float), FLAC and Apple Lossless (16, 24).
        public var bitDepth: Int
        /// Encoder quality 0…1 for Ogg Vorbis and Opus.
        public var quality: Double
        /// AAC's bit rate in bits per second; nil for 64 kb/s per channel (128 kb/s stereo).
        public var bitRate: Int?

        /// 48 kHz stereo, 16 bits, quality 0.6, the type from the extension, and for AAC
        /// 64 kb/s per channel.
        public init(fileType: FileType? = nil, sampleRate: Int = 48_000, numberOfChannels: Int = 2,
                    bitDepth: Int = 16, quality: Double = 0.6, bitRate: Int? = nil) {
            self.fileType = fileType
            self.sampleRate = sampleRate
            self.numberOfChannels = numberOfChannels
            self.bitDepth = bitDepth
            self.quality = quality
            self.bitRate = bitRate
        }
    }

    deinit {
        state.withLock { $0.recording }?.stop()
        state.withLock { $0.observation }?.cancel()
        continuation.finish()
    }

    /// Receives finish and encode-error callbacks; held weakly.
    public var delegate: (any AudioRecorderDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// Why the last ``prepareToRecord()`` or ``record()`` failed: a ``RecordingError`` or an
    /// ``AudioRecorderError``.
    public var lastError: (any Error)? { state.withLock { $0.lastError } }

    // MARK: Transport

    /// Creates the file and opens the input, so that ``record()`` starts at once. Returns
    /// false when either fails (``lastError`` says why).
    @discardableResult
    public func prepareToRecord() -> Bool {
        do {
            try prepare()
            return true
        } catch {
            state.withLock { $0.lastError = error }
            return false
        }
    }

    /// Like ``prepareToRecord()``, throwing the reason.
    public func prepare() throws {
        if let recording = state.withLock({ $0.recording }), !recording.hasEnded { return }
        let identity = recordingIdentity()
        var choice = input
        if choice.device == nil, !choice.alsaOnly, let preferred = session?.preferredInput { choice.device = preferred.name }
        let recording = try Recording(path: url.path, format: format, input: choice, identity: identity, engine: engine)
        recording.isMeteringEnabled.store(isMeteringEnabled, ordering: .relaxed)
        recording.onEnd { [weak self] ending in self?.ended(ending) }
        recording.onInputResumed { [weak self] gap in self?.continuation.yield(.inputResumed(gap: gap)) }
        state.withLock { s in
            s.recording = recording
            s.finalDuration = 0
            s.lastError = nil
        }
    }

    /// Starts or continues recording now. Returns false when the session does not allow
    /// recording or the file or input cannot be opened (``lastError`` says why).
    @discardableResult
    public func record() -> Bool { start(at: nil, duration: nil) }

    /// Starts recording with the input frame captured when ``deviceCurrentTime`` reaches
    /// `time` (the clock players use for ``AudioPlayer/play(atTime:)``). The start is placed
    /// when that frame is captured, by the device clock then: if the output stalls
    /// meanwhile (an underrun: its clock waits), the start waits with it. A tone played at
    /// `time` is at the file's start within a millisecond (mostly a tenth), on PulseAudio
    /// and on PipeWire (pipewire-pulse 0.3.65), recording a sink's monitor (see the
    /// recorder tests).
    @discardableResult
    public func record(atTime time: TimeInterval) -> Bool { start(at: time, duration: nil) }

    /// Records `duration` seconds from now, then stops by itself (the file then holds
    /// exactly that many frames).
    @discardableResult
    public func record(forDuration duration: TimeInterval) -> Bool { start(at: nil, duration: duration) }

    /// Records `duration` seconds starting at device time `time`.
    @discardableResult
    public func record(atTime time: TimeInterval, forDuration duration: TimeInterval) -> Bool { start(at: time, duration: duration) }

    func start(at time: TimeInterval?, duration: TimeInterval?) -> Bool {
        do {
            if let session { try session.checkRecordingAllowed() }
            try prepare()
            guard let recording = state.withLock({ $0.recording }), recording.start(atDeviceTime: time, duration: duration) else {
                throw AudioRecorderError.ended(path: url.path)
            }
            state.withLock { $0.pausedByInterruption = false }
            session?.recorderStarted(self)
            return true
        } catch {
            state.withLock { $0.lastError = error }
            return false
        }
    }

    /// Pauses; ``record()`` continues the same file, with neither a gap nor a repeat.
    public func pause() {
        state.withLock { $0.recording }?.pause()
        session?.recorderStopped(self)
    }

    /// Stops and finishes the file: it is complete and valid on disk when this returns.
    public func stop() {
        guard let recording = state.withLock({ $0.recording }) else { return }
        recording.stop()
        session?.recorderStopped(self)
    }

    /// Stops if needed and removes the file. Returns false when it could not be removed.
    @discardableResult
    public func deleteRecording() -> Bool {
        stop()
        guard FileManager.default.fileExists(atPath: url.path) else { return true }
        return (try? FileManager.default.removeItem(atPath: url.path)) != nil
    }

    /// Whether the recorder is recording (not paused, not stopped).
    public var isRecording: Bool { state.withLock { $0.recording }?.isRecording ?? false }

    /// Seconds recorded into the file so far (kept after ``stop()``).
    public var currentTime: TimeInterval {
        state.withLock { s in s.recording.map { $0.duration } ?? s.finalDuration }
    }

    /// The engine's device clock, shared with players, for ``record(atTime:)``.
    public var deviceCurrentTime: TimeInterval { engine.deviceCurrentTime }

    /// The input opened, once prepared.
    public var inputKind: InputKind? { state.withLock { $0.recording }?.input }

    private func ended(_ ending: Recording.Ending) {
        let successfully: Bool
        if case .failed(let error) = ending {
            continuation.yield(.encodeError(error))
            let delegate = self.delegate
            delegate?.audioRecorderEncodeErrorDidOccur(self, error: error)
            delegate?.audioRecorderEncodeErrorDidOccur(self, error: error as (any Error)?)
            successfully = false
        } else {
            successfully = true
        }
        state.withLock { s in
            if let recording = s.recording, recording.hasEnded {
                s.finalDuration = recording.duration
            }
        }
        continuation.yield(.finished(successfully: successfully))
        delegate?.audioRecorderDidFinishRecording(self, successfully: successfully)
        session?.recorderStopped(self)
    }

    // MARK: Meters

    /// Whether levels are measured (for ``updateMeters()``).
    public var isMeteringEnabled: Bool {
        get { state.withLock { $0.metering } }
        set {
            let recording = state.withLock { s in
                s.metering = newValue
                return s.recording
            }
            recording?.isMeteringEnabled.store(newValue, ordering: .relaxed)
        }
    }

    /// Takes a reading for ``averagePower(forChannel:)`` and ``peakPower(forChannel:)``: the
    /// levels of what was recorded since the previous reading (kept when nothing was).
    public func updateMeters() {
        guard let readings = state.withLock({ $0.recording })?.takeMeters() else { return }
        state.withLock { $0.meters = readings }
    }

    /// The RMS power of a channel at the last ``updateMeters()``, in dBFS (−160…0).
    public func averagePower(forChannel channel: Int) -> Float {
        state.withLock { $0.meters.indices.contains(channel) ? $0.meters[channel].average : -160 }
    }

    /// The peak power of a channel at the last ``updateMeters()``, in dBFS (−160…0).
    public func peakPower(forChannel channel: Int) -> Float {
        state.withLock { $0.meters.indices.contains(channel) ? $0.meters[channel].peak : -160 }
    }

    // MARK: Session

    private func recordingIdentity() -> AudioEngine.StreamIdentity {
        var identity = engine.streamIdentity
        identity.mediaName = "Recording " + (url.lastPathComponent)
        if session?.mode == .voiceChat { identity.role = .phone } else { identity.role = .production }
        return identity
    }

    private func followInterruptions(of session: AudioSession) {
        let token = session.observe { [weak self] notification in
            guard let self, case .interruption(let type) = notification else { return }
            switch type {
            case .began:
                guard self.isRecording else { return }
                self.state.withLock { $0.recording }?.pause()
                self.state.withLock { $0.pausedByInterruption = true }
                session.recorderStopped(self)
            case .ended(let shouldResume):
                let resume = self.state.withLock { s -> Bool in
                    defer { s.pausedByInterruption = false }
                    return s.pausedByInterruption && shouldResume
                }
                if resume, self.state.withLock({ $0.recording })?.start() == true { session.recorderStarted(self) }
            }
        }
        state.withLock { $0.observation = token }
    }
}

/// Why an ``AudioRecorder`` did not record, besides file and input errors.
public enum AudioRecorderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The session is not active in a recording category (`record` or `playAndRecord`).
    case sessionDoesNotRecord(category: String, active: Bool)
    /// The recording already ended (stopped or failed); make a new recorder or prepare again.
    case ended(path: String)

    /// A sentence naming the refusal and the way out.
    public var description: String {
        switch self {
        case let .sessionDoesNotRecord(category, active):
            "cannot record: the audio session is \(active ? "active" : "inactive") in the \(category) category; "
                + "recording needs it active in the record or playAndRecord category"
        case let .ended(path): "cannot record \(path): the recording has ended"
        }
    }
}

/// Receives an ``AudioRecorder``'s events (the `AVAudioRecorderDelegate` analog).
///
/// `audioRecorderEncodeErrorDidOccur(_:error:)` written as an iOS app writes it, with an
/// `(any Error)?`, is a requirement of its own and is called beside the typed one, so that
/// it does not compile as a method of the app's own, never called.
public protocol AudioRecorderDelegate: AnyObject, Sendable {
    /// The recording ended; the file is complete. `flag` is false after an encode error.
    func audioRecorderDidFinishRecording(_ recorder: AudioRecorder, successfully flag: Bool)
    /// The file could not be written or the input failed; the recorder stopped.
    func audioRecorderEncodeErrorDidOccur(_ recorder: AudioRecorder, error: AudioRecorder.RecordingError)
    /// The same, in iOS's shape: `error` is the ``AudioRecorder/RecordingError``.
    func audioRecorderEncodeErrorDidOccur(_ recorder: AudioRecorder, error: (any Error)?)
}

extension AudioRecorderDelegate {
    /// Does nothing by default.
    public func audioRecorderDidFinishRecording(_ recorder: AudioRecorder, successfully flag: Bool) {}
    /// Does nothing by default.
    public func audioRecorderEncodeErrorDidOccur(_ recorder: AudioRecorder, error: AudioRecorder.RecordingError) {}
    /// Does nothing by default.
    public func audioRecorderEncodeErrorDidOccur(_ recorder: AudioRecorder, error: (any Error)?) {}
}
