package import Synchronization
import Platform
#if canImport(Glibc)
import Glibc
#endif

/// The process's audio engine: every source of the process mixed in Float32 on one
/// render thread and written as one stream: on the sound server through libpulse where a
/// PulseAudio-protocol server answers (PulseAudio, or PipeWire's pipewire-pulse), otherwise
/// (or when an ALSA device is named) to ALSA.
///
/// Reader threads' work (decoding, rate conversion, time-stretching) happens on one
/// engine reader thread; the render thread only mixes from lock-free rings, applies
/// per-source gain and pan and the process gain, meters, and writes the output. The output
/// opens when something plays and is released after ``Configuration/idleRelease``
/// seconds of silence.
///
/// `@unchecked Sendable`, and why that holds: every stored property is immutable, atomic
/// or behind a `Mutex`, except `pendingOutput`, which the starting thread writes under
/// `startLock` before it publishes `deviceState` open (releasing), and the render thread
/// reads and clears only after loading that state (acquiring); the two never touch it
/// at once (and `deinit`, which closes one never taken, runs when no thread is in a round
/// of work: each holds the engine strongly for its round).
public final class AudioEngine: @unchecked Sendable {
    public struct Configuration: Sendable, Hashable {
        /// The ALSA device name (`EARSHOT_AUDIO_DEVICE` overrides the default, `default`).
        public var device: String
        /// Where to play. ``OutputChoice/automatic`` unless an ALSA device was named (as
        /// `device` or in `EARSHOT_AUDIO_DEVICE`), which means ``OutputChoice/alsa``.
        public var output: OutputChoice
        /// The sound server to connect to (`unix:/run/user/1000/pulse/native`, `tcp:host`),
        /// or nil for libpulse's default (`PULSE_SERVER`, the client configuration, the
        /// user's runtime folder).
        public var soundServer: String?
        /// How the stream presents itself to the sound server (see ``AudioEngine/streamIdentity``).
        public var identity = StreamIdentity()
        /// Whether the engine says on standard error which output it chose (once, and when
        /// the choice changes).
        public var logsOutputChoice = true
        /// The rate the engine starts with; ``AudioEngine/setPreferredSampleRate(_:)``
        /// changes it later (``AudioEngine/sampleRate`` is the rate in use). With
        /// ``followsDefaultSinkRate``, the rate until the sink's is known (and on ALSA).
        public var sampleRate: Int = 48_000
        /// Whether the engine runs at the rate of the sound server's default sink while no
        /// rate was asked for with ``AudioEngine/setPreferredSampleRate(_:)``, as an iOS
        /// app runs at the hardware's rate: the server then plays the stream as written, with
        /// nothing to resample. (PulseAudio resamples a stream whose rate is not the sink's,
        /// and when such a stream starts again after running dry its resampler's rewind can
        /// replay one stale sample, heard as a click as a sound starts after a pause;
        /// PulseAudio's sinks run at 44.1 kHz by default.) The sink's rate is asked of the
        /// server when the first voice is made, and read again from each output opened; a
        /// new rate is adopted as a preferred one is (when no voice exists). ``periodFrames``
        /// is scaled to keep its duration. On (the default) unless an ALSA device is named;
        /// `earshot play` turns it off to play at its first file's rate, as paplay does.
        public var followsDefaultSinkRate = true
        /// Frames per period (the server's request size, or the ALSA period) the engine
        /// starts with; ``AudioEngine/setPreferredIOBufferDuration(_:)`` changes it later
        /// (``AudioEngine/ioBufferDuration`` is the period granted). 768 at 48 kHz
        /// (16 ms; 3 periods, 48 ms buffered; on a sound server, which renders one period
        /// per request, the sink's block and at least two queued periods: 64 ms). A stopped
        /// stream starts from an empty buffer whatever its size, so the buffer costs no
        /// start latency; but a pause (or an
        /// interruption) is heard only once it has played out. Fewer, larger periods cost
        /// less CPU (bench/audio: 512 → 1024 took 10 s of playback from 0.24 to 0.20 s),
        /// yet 85 ms made interruptions overlap audibly. Below 512, ALSA's pulse plugin
        /// stalled here.
        public var periodFrames: Int = 768
        /// Periods in the output's buffer (the server's target length, or the ALSA buffer).
        public var periods: Int = 3
        /// Seconds of mixed audio a sound server may hold for a music stream (``identity``'s
        /// role `music`) while no preferred IO buffer duration is set: the server then asks
        /// for about half of it at a time, so the process wakes a few times a second while
        /// it plays, as paplay does. Whatever changes what is heard (a pause, seek or stop,
        /// a voice starting, a volume, pan, rate or process-gain change) is heard at once
        /// all the same: the engine drops what the server has not played and mixes again
        /// from the frame the listener has reached (each voice keeps what it mixed until then).
        /// 0 (the default) keeps the short buffer (``periodFrames`` and ``periods``) for
        /// every stream. Not yet for every app: with the mix a buffer ahead of what is heard,
        /// a short looping sound's wraps and ``Voice/play(atDeviceTime:)`` in the near
        /// future are not handled yet. A gapless queue's next item follows without a gap and
        /// is heard once. In the last buffer of a voice (its end mixed, not yet heard:
        /// ``Voice/isEndingUnheard``) it still plays for the listener: its position moves on,
        /// a pause or seek takes its end back, and a volume or pan change mixes it again from
        /// what is heard; each is heard at once. An item shorter than the buffer is followed
        /// without a gap too (a queue opens items ahead until they cover the buffer). A restart waits 50 ms at most for its voices to be primed (half a second
        /// while a seek is not applied yet): one that takes longer (a rate change, both a
        /// queue's items stretched again) is heard after a gap of up to the buffer.
        /// `earshot play` of local files sets it.
        public var musicBufferDuration: Double = 0
        /// Seconds without any playing source after which the device is released.
        public var idleRelease: Double = 2
        /// Silence (seconds) that must precede sound for a ``soundStarted`` event.
        public var silenceBeforeSoundEvent: Double = 0.25
        public var maximumSources: Int = 128
        /// Tests only: seconds the reader waits before it applies a seek, as a slow disk or a
        /// loaded machine makes it take, so that a test sees what the render thread does
        /// meanwhile.
        package var seekDelayForTesting: Double = 0

        public init(device: String? = nil) {
            let named = device ?? AudioEngine.environmentDevice
            self.device = named ?? "default"
            output = named == nil ? .automatic : .alsa
        }
    }

    static var environmentDevice: String? {
        getenv("EARSHOT_AUDIO_DEVICE").map { String(cString: $0) }
    }

    /// The process's engine: made on its first use, with the configuration given to
    /// ``configureShared(_:)`` before that, or the default one.
    public static let shared = AudioEngine(configuration: takeSharedConfiguration())

    /// The process's engine for system sounds (`SystemSound` plays here unless told
    /// otherwise): a stream of its own beside ``shared``'s, with `media.role` `event`, so
    /// that the desktop applies its event-sounds volume and role policies to beeps and not
    /// to music, and with a short buffer (8 ms periods where a sound server answers), so
    /// that a beep starts at once and does not wait behind a music stream's buffer. Made on
    /// its first use from the same configuration as ``shared`` (device, sound server,
    /// application name).
    public static let systemSounds: AudioEngine = {
        var configuration = takeSharedConfiguration()
        configuration.identity.role = .event
        configuration.identity.mediaName = nil
        // An ALSA device named by the app keeps its periods (ALSA's pulse plugin stalls
        // below 512 frames); a sound server takes short ones.
        if configuration.output != .alsa { configuration.periodFrames = configuration.sampleRate / 125 }
        return AudioEngine(configuration: configuration)
    }()

    /// What ``shared`` and ``systemSounds`` are made with, and whether either was made.
    private static let sharedSetup = Mutex<(configuration: Configuration?, made: Bool)>((nil, false))

    /// The configuration for ``shared`` or ``systemSounds``; from now on it is fixed.
    private static func takeSharedConfiguration() -> Configuration {
        sharedSetup.withLock { setup in
            setup.made = true
            return setup.configuration ?? Configuration()
        }
    }

    /// Sets the configuration ``shared`` (and ``systemSounds``) are made with (a
    /// command-line tool's `--device`). Call it before anything plays: once either exists,
    /// the configuration is fixed, and this returns false and changes nothing.
    @discardableResult
    public static func configureShared(_ configuration: Configuration) -> Bool {
        sharedSetup.withLock { setup in
            guard !setup.made else { return false }
            setup.configuration = configuration
            return true
        }
    }

    /// What the engine was made with. The sample rate and period in use may differ since:
    /// see ``sampleRate`` and ``ioBufferDuration``.
    public let configuration: Configuration

    /// The audio session this engine's players follow, kept here for the layer above
    /// (Earshot's `AudioSession` sets itself when it connects on this engine): the engine
    /// never reads it, and knows nothing of sessions, hence the erased type. Stored per
    /// engine, a session on another engine (a test's interrupter, a tool's second stream)
    /// does not take this engine's players.
    package let playersSession = Mutex<(any AnyObject & Sendable)?>(nil)

    // The format asked of the output (see `AudioEngine+Format.swift`).
    /// The rate voices are made for and the output is opened at.
    let currentSampleRate: Atomic<Int>
    /// A rate asked with `setPreferredSampleRate`, adopted when no voice exists; 0 when none
    /// was asked (the configuration's rate, or the sink's: see `adoptRequestedSampleRate`).
    let requestedSampleRate = Atomic<Int>(0)
    /// The default sink's rate as the server last said, 0 until known; and whether it was
    /// asked of the server yet (once: later, each output opened says it).
    let sinkSampleRate = Atomic<Int>(0)
    let sinkSampleRateAsked = Atomic<Bool>(false)
    /// The preferred period in seconds, or 0 for the configuration's frames.
    let preferredPeriod = AtomicDouble(0)
    /// The period and buffer the open (or last) output granted, in its frames.
    let grantedPeriodFrames: Atomic<Int>
    let grantedRate: Atomic<Int>

    /// The voices the render thread mixes: claimed by app threads, walked by the render thread.
    let voiceTable: VoiceTable
    let renderEpoch = Atomic<UInt64>(0)

    // Device handoff between the starting thread and the render thread.
    enum DeviceState: Int { case closed = 0, open = 1, closing = 2 }
    let deviceState = Atomic<Int>(DeviceState.closed.rawValue)
    private let startLock = Mutex<Void>(())
    nonisolated(unsafe) var pendingOutput: (any AudioOutput)?
    /// The open output, for identity updates from app threads.
    let openOutput = Mutex<(any AudioOutput)?>(nil)
    let identity: Mutex<StreamIdentity>
    let lastOutputKind = Mutex<OutputKind?>(nil)
    let renderWake = Semaphore()
    let eventSemaphore = Semaphore()
    let readerWake = Semaphore()

    // The device clock, as a sequence-locked pair written by the render thread.
    let clockSequence = Atomic<UInt64>(0)
    let clockFrames = AtomicDouble(0)
    let clockStamp = AtomicDouble(MonotonicClock.seconds())
    /// The rate `clockFrames` counts in (changes with the output's rate, in the same sequence).
    let clockRate: Atomic<Int>
    let latencyFrames = Atomic<Int>(0)
    /// Whether the render thread is writing (the clock then follows the device; while the
    /// stream is stopped or the device released, it follows the monotonic clock).
    let streamRunning = Atomic<Bool>(false)
    /// Whether the output's timing has shown the sink playing since the stream last started
    /// (see `noteTiming(_:delay:sinkPlays:)`). Written by whoever owns the render state (the
    /// render thread, or the output's thread while it pulls); read by the event thread. Until it has, no voice's start counts as heard: a start
    /// takes the clock on from where it stood, and a sink that starts late (a null sink
    /// sleeping out the block it began before the stream came; a Bluetooth sink waking)
    /// gave no timing, or timing that stood still, for 2 s, while the position ran on from
    /// the play call as if heard and went back at the pause.
    let streamHeard = Atomic<Bool>(false)

    // Process gain (ducking), ramped on the render thread.
    let processGainTarget = AtomicFloat(1)
    let processGainRampFrames = Atomic<Int>(0)
    let processGainGeneration = Atomic<UInt32>(0)

    /// Whether the open output holds a long buffer (see ``Configuration/musicBufferDuration``):
    /// a change to what is heard then asks the render thread for a restart. Set by the render
    /// thread when it takes an output.
    let longBufferActive = Atomic<Bool>(false)
    /// The render thread is draining the stream (the last voice's end mixed, up to a long
    /// buffer to be heard): a restart or a voice played on breaks the drain off.
    let draining = Atomic<Bool>(false)
    /// A change to what is heard while a long buffer plays: the render thread drops what the
    /// server has not played and mixes again from there (see `restartIfRequested`).
    let restartRequested = Atomic<Bool>(false)
    /// Callers inside ``holdingChanges(_:)``: while above 0 the render thread leaves a
    /// running stream alone.
    let changesHeld = Atomic<Int>(0)
    /// A long buffer's stream start waits for its voices to be primed (render thread sets
    /// and clears it): the reader then wakes the render thread as a voice becomes primed.
    let startAwaitsVoices = Atomic<Bool>(false)
    /// A voice paused or stopped while the others were silent: when nothing plays any more,
    /// drop what is buffered rather than letting it play out (a pause is heard at once).
    let flushRequested = Atomic<Bool>(false)
    /// Frames that still played after the last flush (a sink's rendered block): what a
    /// pause expects to be heard after it, until the flush says.
    let flushRemainder = Atomic<Int>(0)
    let underruns = Atomic<Int>(0)
    let soundStarts = Atomic<Int>(0)
    let soundStops = Atomic<Int>(0)
    let deviceFailure = Mutex<AudioEngineError?>(nil)
    /// Set with `deviceFailure` when the sound server itself went away.
    let serverLost = Atomic<Bool>(false)
    let resetObservers = Mutex<[UInt64: @Sendable () -> Void]>([:])

    // Non-real-time registries (reader and event threads).
    let voices = Mutex<[ObjectIdentifier: Voice]>([:])
    let retired = Mutex<[(voice: Voice, epoch: UInt64)]>([])
    let soundObservers = Mutex<[UInt64: @Sendable (Bool) -> Void]>([:])
    let nextObserver = Atomic<UInt64>(1)

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let rate = AudioEngine.supportedSampleRate(configuration.sampleRate)
        currentSampleRate = Atomic(rate)
        clockRate = Atomic(rate)
        grantedRate = Atomic(rate)
        grantedPeriodFrames = Atomic(configuration.periodFrames)
        identity = Mutex(configuration.identity)
        voiceTable = VoiceTable(capacity: configuration.maximumSources)
        // Each thread holds the engine weakly and its own semaphore strongly: it takes the
        // engine for one round of work at a time and sleeps outside that hold, so releasing
        // the engine ends all three (see `deinit`).
        let engine = WeakEngine(self)
        startThread(name: "earshot-render") { [renderWake] in
            AudioEngine.runRenderThread(engine, wake: renderWake, configuration: configuration)
        }
        startThread(name: "earshot-reader") { [readerWake] in AudioEngine.runReaderThread(engine, wake: readerWake) }
        startThread(name: "earshot-events") { [eventSemaphore] in AudioEngine.runEventThread(engine, wake: eventSemaphore) }
    }

    /// Ends the engine's threads. No thread is inside a round of work now (each holds the
    /// engine strongly for its round, so the last release happens outside one, possibly on
    /// one of these threads, which then returns from its round); each sees its weak
    /// reference nil once woken, and the render thread closes the output it took. Nothing
    /// here waits for them, so a release on an engine thread cannot deadlock.
    deinit {
        // An output opened but not yet taken by the render thread is the engine's to close.
        pendingOutput?.close()
        renderWake.signal()
        readerWake.signal()
        eventSemaphore.signal()
    }

    // MARK: Public state

    /// The device clock in seconds: advances with the frames the device has played
    /// (interpolated between periods), and with the monotonic clock while the device is
    /// released. Use it with ``Voice/play(atDeviceTime:)`` to start sources together,
    /// sample-accurately. While the device is open and stalls, the clock waits with it.
    public var deviceCurrentTime: Double {
        let open = streamRunning.load(ordering: .acquiring)
        while true {
            let before = clockSequence.load(ordering: .acquiring)
            if before & 1 == 1 { continue }
            let frames = clockFrames.value
            let stamp = clockStamp.value
            let rate = Double(clockRate.load(ordering: .relaxed))
            if clockSequence.load(ordering: .acquiring) == before {
                let cap = 2 * Double(grantedPeriodFrames.load(ordering: .relaxed)) / rate
                let since = max(0, MonotonicClock.seconds() - stamp)
                return frames / rate + (open ? min(since, cap) : since)
            }
        }
    }

    /// The output latency: frames buffered between the mix and the listener, in seconds.
    public var outputLatency: Double { Double(latencyFrames.load(ordering: .relaxed)) / Double(grantedRate.load(ordering: .relaxed)) }

    /// Underruns recovered since the engine started.
    public var underrunCount: Int { underruns.load(ordering: .relaxed) }

    /// Whether the output (sound-server stream or ALSA device) is open.
    public var isDeviceOpen: Bool { deviceState.load(ordering: .acquiring) == DeviceState.open.rawValue }

    /// The process gain (0…1) applied after the mix, ramped over `duration` seconds so that
    /// nothing clicks. The audio session uses it for ducking.
    public func setProcessGain(_ gain: Float, rampDuration: Double = 0.2) {
        processGainTarget.store(max(0, min(1, gain.isFinite ? gain : 1)))
        processGainRampFrames.store(max(1, Int(rampDuration * Double(sampleRate))), ordering: .relaxed)
        processGainGeneration.add(1, ordering: .releasing)
        requestRestart()
    }

    public var processGain: Float { processGainTarget.value }

    /// Calls `handler` (on the engine's event thread) whenever the process starts
    /// producing audible sound after at least ``Configuration/silenceBeforeSoundEvent``
    /// seconds of silence. “Last sound wins” hangs on this.
    @discardableResult
    public func onSoundStarted(_ handler: @escaping @Sendable () -> Void) -> UInt64 {
        onSoundChanged { if $0 { handler() } }
    }

    /// Calls `handler(true)` when the process starts producing audible sound after
    /// silence, and `handler(false)` when it has been silent for
    /// ``Configuration/silenceBeforeSoundEvent`` seconds after sounding.
    @discardableResult
    public func onSoundChanged(_ handler: @escaping @Sendable (_ producing: Bool) -> Void) -> UInt64 {
        let id = nextObserver.add(1, ordering: .relaxed).oldValue
        soundObservers.withLock { $0[id] = handler }
        return id
    }

    /// Whether the process is producing audible sound now (as the last events said).
    public var isProducingSound: Bool {
        soundStarts.load(ordering: .acquiring) > soundStops.load(ordering: .acquiring)
    }

    public func removeSoundObserver(_ id: UInt64) {
        _ = soundObservers.withLock { $0.removeValue(forKey: id) }
    }

    /// How many times the process started sounding after silence.
    public var soundStartCount: Int { soundStarts.load(ordering: .relaxed) }

    // MARK: Voices

    /// Makes a voice for `file`. The engine keeps it until ``Voice/dispose()``.
    /// A voice made while the engine holds none first adopts a sample rate asked with
    /// ``setPreferredSampleRate(_:)`` (voices are made for the rate in use).
    public func makeVoice(for file: any FrameSource) throws -> Voice {
        try voices.withLock { voices in
            if voices.isEmpty { adoptRequestedSampleRate() }
            let voice = try Voice(file: file, engine: self)
            voices[ObjectIdentifier(voice)] = voice
            return voice
        }
    }

    /// Puts a voice in the render table.
    func attach(_ voice: Voice) throws(AudioEngineError) {
        guard voice.slot.load(ordering: .acquiring) < 0 else { return }
        guard let index = voiceTable.claim(voice) else { throw .tooManySources(limit: voiceTable.capacity) }
        voice.slot.store(index, ordering: .releasing)
    }

    /// Takes a voice out of the render table; it stays alive until the render thread has
    /// certainly moved past it.
    func detach(_ voice: Voice) {
        let index = voice.slot.exchange(-1, ordering: .acquiringAndReleasing)
        guard index >= 0 else { return }
        voiceTable.clear(index)
        retired.withLock { $0.append((voice, renderEpoch.load(ordering: .acquiring))) }
    }

    /// Forgets a voice. Retired once, by `detach`, if it was in the render table; one that
    /// was not is out of the render thread's sight already and goes with its last reference.
    /// A voice that names it as its successor (``Voice/play(after:)``) forgets it first: the
    /// successor is held unretained, and a predecessor disposed later (a queue's players
    /// going in any order) would otherwise reach a freed voice through it.
    func dispose(_ voice: Voice) {
        let bits = UInt(bitPattern: Unmanaged.passUnretained(voice).toOpaque())
        voices.withLock { voices in
            voices.removeValue(forKey: ObjectIdentifier(voice))
            for other in voices.values {
                _ = other.successor.compareExchange(expected: bits, desired: 0, ordering: .acquiringAndReleasing)
            }
        }
        detach(voice)
    }

    /// Opens the device now (it stays idle until something plays), so that a first sound
    /// does not wait for it. Commands that play one sound call it while they decode.
    public func openDevice() throws(AudioEngineError) { try start() }

    /// Opens the device if it is not open, on the calling thread so that a missing
    /// device is an error here rather than silence later.
    func start() throws(AudioEngineError) {
        if deviceState.load(ordering: .acquiring) == DeviceState.open.rawValue { return }
        try startLock.withLock { _ throws(AudioEngineError) in
            while deviceState.load(ordering: .acquiring) == DeviceState.closing.rawValue { usleep(1000) }
            guard deviceState.load(ordering: .acquiring) == DeviceState.closed.rawValue else { return }
            let output = try openOutputStream()
            noteGranted(output)
            pendingOutput = output
            openOutput.withLock { $0 = output }
            deviceState.store(DeviceState.open.rawValue, ordering: .releasing)
            renderWake.signal()
        }
    }
}
