/// The engine's sample rate and period: what an app prefers, what the output is asked for,
/// and what it granted.
///
/// An output keeps the format it was opened with. A new period (and a new rate) is asked of
/// the next output the engine opens: when the output was released (``Configuration/idleRelease``
/// seconds of silence) it is opened again with it at the next play; when it is open, the
/// render thread reopens it with it when the stream next starts after silence (the next play
/// after everything was paused, stopped or had finished). A stream that keeps playing keeps
/// its format until then.
internal import PulseSupport

extension AudioEngine {
    /// The IO buffer durations (periods) ``setPreferredIOBufferDuration(_:)`` accepts,
    /// in seconds: from 2.5 ms (a sound server's shortest useful request) to 100 ms (as on
    /// iOS, whose hardware takes at most 4096 frames, 93 ms at 44.1 kHz). The output's
    /// buffer holds ``Configuration/periods`` periods.
    public static let ioBufferDurationRange: ClosedRange<Double> = 0.0025...0.1

    /// The sample rates ``setPreferredSampleRate(_:)`` accepts: what the engine resamples
    /// to and the sound server takes.
    public static let sampleRateRange: ClosedRange<Int> = 8000...192_000

    /// An ALSA device keeps periods of at least this many frames (ALSA's pulse plugin
    /// stalled below 512).
    static let minimumALSAPeriodFrames = 512

    /// The sample rate in use: voices are made for it and the output opened at it.
    public var sampleRate: Int { currentSampleRate.load(ordering: .acquiring) }

    /// The period the open (or last opened) output granted, in seconds: the sound
    /// server's request size (`minreq`, as it answered) or the ALSA period. Before the
    /// first output opens, the configuration's.
    public var ioBufferDuration: Double {
        Double(grantedPeriodFrames.load(ordering: .relaxed)) / Double(grantedRate.load(ordering: .relaxed))
    }

    /// Asks for a period of `seconds`, clamped to ``ioBufferDurationRange`` (and, on a
    /// named ALSA device, to at least 512 frames). Applies to the next output opened, or
    /// to the open one when its stream next starts after silence (see the extension's
    /// notes); ``ioBufferDuration`` then says what was granted. A long period costs fewer
    /// wakeups; a pause is still heard at once (the buffer is dropped), but a second sound
    /// started while one plays waits behind the buffer.
    ///
    /// - Returns: the duration asked for, after clamping.
    @discardableResult
    public func setPreferredIOBufferDuration(_ seconds: Double) -> Double {
        let range = AudioEngine.ioBufferDurationRange
        let clamped = seconds.isFinite ? min(max(seconds, range.lowerBound), range.upperBound) : range.lowerBound
        preferredPeriod.store(clamped)
        renderWake.signal()
        return clamped
    }

    /// Asks for a sample rate, clamped to ``sampleRateRange``. Voices are made for the
    /// engine's rate, so a new rate is adopted only while the engine holds no voice: at once
    /// if it holds none, otherwise when the next voice is made after all were disposed. The
    /// output follows as a new period does (see the extension's notes); ``sampleRate`` says
    /// the rate in use.
    ///
    /// - Returns: the rate asked for, after clamping.
    @discardableResult
    public func setPreferredSampleRate(_ rate: Int) -> Int {
        let clamped = AudioEngine.supportedSampleRate(rate)
        voices.withLock { voices in
            requestedSampleRate.store(clamped, ordering: .releasing)
            if voices.isEmpty { adoptRequestedSampleRate() }
        }
        return clamped
    }

    /// `rate` clamped to ``sampleRateRange``.
    static func supportedSampleRate(_ rate: Int) -> Int {
        min(max(rate, sampleRateRange.lowerBound), sampleRateRange.upperBound)
    }

    /// With the voices' lock held and no voice in the engine: the rate asked for becomes the
    /// rate in use; when none was, the default sink's (``Configuration/followsDefaultSinkRate``),
    /// asked of the server the first time, or else the configuration's.
    func adoptRequestedSampleRate() {
        var rate = requestedSampleRate.load(ordering: .acquiring)
        if rate == 0 {
            rate = followsSink ? defaultSinkSampleRate() ?? configuration.sampleRate : configuration.sampleRate
        }
        currentSampleRate.store(AudioEngine.supportedSampleRate(rate), ordering: .releasing)
    }

    /// Whether the engine follows the default sink's rate: configured so, and playing through
    /// a sound server rather than a named ALSA device.
    private var followsSink: Bool { configuration.followsDefaultSinkRate && configuration.output != .alsa }

    /// The default sink's rate: as the last output opened said, or asked of the server once
    /// (a connection of its own, about a millisecond); nil when no server says.
    private func defaultSinkSampleRate() -> Int? {
        if !sinkSampleRateAsked.exchange(true, ordering: .acquiringAndReleasing), sinkSampleRate.load(ordering: .acquiring) == 0,
           let format = SinkFormat.ofDefaultSink(server: configuration.soundServer, clientName: streamIdentity.applicationName,
                                                 timeout: 1) {
            sinkSampleRate.store(format.sampleRate, ordering: .releasing)
        }
        let known = sinkSampleRate.load(ordering: .acquiring)
        return known > 0 ? known : nil
    }

    /// Notes the sink rate an output opened just now reported (see
    /// ``Configuration/followsDefaultSinkRate``): adopted once no voice exists.
    func noteSinkSampleRate(of output: any AudioOutput) {
        guard let rate = output.sinkSampleRate, rate > 0 else { return }
        sinkSampleRate.store(rate, ordering: .releasing)
    }

    /// The configuration's period at `rate`, keeping its duration at the configuration's rate.
    func configuredPeriodFrames(at rate: Int) -> Int {
        guard rate != configuration.sampleRate, configuration.sampleRate > 0 else { return configuration.periodFrames }
        return max(16, Int((Double(configuration.periodFrames) * Double(rate) / Double(configuration.sampleRate)).rounded()))
    }

    /// What an output is asked for: rate, period and buffer (frames at that rate).
    struct OutputRequest: Equatable, Sendable {
        var sampleRate: Int
        var periodFrames: Int
        var bufferFrames: Int
        /// On a sound server: the sink renders in blocks of one period and the server asks
        /// for a period as each block is rendered (`PA_STREAM_EARLY_REQUESTS`), so that one
        /// message (one wakeup) serves each period; `bufferFrames` is then the sink's block
        /// and the server's queue together, and the server keeps at least two periods in its
        /// queue: four periods in all at least. Otherwise the server sizes the sink's share
        /// from the buffer (`PA_STREAM_ADJUST_LATENCY`: at most 8 ms, see
        /// ``AudioEngine/outputRequest()``).
        var blockSyncedRequests = false
        /// A long buffer for low power (``Configuration/musicBufferDuration``): what changes
        /// what is heard restarts the stream from the frame heard (see `restartIfRequested`).
        var longBuffer = false
    }

    /// The format to open an output with now.
    ///
    /// Without a preferred period: the configuration's period, and ``Configuration/periods``
    /// of them as the buffer. With one, the buffer asked of a sound server is two periods
    /// and twice the sink's share, which is half a period but at most 8 ms: the server
    /// (PulseAudio, and pipewire-pulse alike) gives the sink `(tlength − 2·minreq) / 2` of
    /// the buffer and keeps the rest in the stream's own queue, which a flush drops. So
    /// whatever the period, a pause leaves at most about 8 ms playing in the sink, even
    /// where the sink cannot rewind; and a long period buffers two of them (wakeups fall
    /// with it). At the default 16 ms period both rules ask the same 48 ms. An ALSA device
    /// keeps ``Configuration/periods`` periods.
    ///
    /// Without a preferred period, a sound server's sink renders one period at a time and
    /// asks for the next as it does (``OutputRequest/blockSyncedRequests``): with the sink's
    /// share sized from the buffer (8 ms of a 48 ms one) its requests and the releases of
    /// what it played came 8 ms apart, two wakeups a period instead of one. The buffer is
    /// then 64 ms rather than 48 (the server keeps two periods queued beside the sink's
    /// block): a change that is not flushed (a seek, volume, a second voice) is heard up to
    /// 64 ms late, and a pause leaves up to one period (16 ms) playing in a sink that
    /// cannot rewind.
    func outputRequest() -> OutputRequest {
        let rate = sampleRate
        let preferred = preferredPeriod.value
        guard preferred > 0 else {
            if let long = longBufferFrames(rate: rate) {
                // The server gives the sink (tlength − 2·minreq) / 2 and keeps the rest queued,
                // where a flush drops it: a short sink share (8 ms) and two long requests.
                // On pipewire-pulse the output asks for shorter requests, so that the share is
                // PipeWire's default quantum (see `PulseOutput.pipeWireLongBufferRequest`).
                let sinkShare = rate * 8 / 1000
                let period = max(configuredPeriodFrames(at: rate), (long - 2 * sinkShare) / 2)
                return OutputRequest(sampleRate: rate, periodFrames: period, bufferFrames: 2 * period + 2 * sinkShare,
                                     longBuffer: true)
            }
            let period = configuredPeriodFrames(at: rate)
            return OutputRequest(sampleRate: rate, periodFrames: period, bufferFrames: period * max(1, configuration.periods),
                                 blockSyncedRequests: true)
        }
        var period = max(16, Int((preferred * Double(rate)).rounded()))
        if configuration.output == .alsa { period = max(period, AudioEngine.minimumALSAPeriodFrames) }
        let sinkShare = min(period / 2, rate * 8 / 1000)
        return OutputRequest(sampleRate: rate, periodFrames: period, bufferFrames: 2 * period + 2 * sinkShare)
    }

    /// The long buffer a music stream asks of a sound server, in frames at `rate`, or nil
    /// when the engine keeps short ones (see ``Configuration/musicBufferDuration``): the
    /// role is not music, or an ALSA device was named.
    func longBufferFrames(rate: Int) -> Int? {
        let seconds = configuration.musicBufferDuration
        guard seconds.isFinite, seconds > 0, configuration.identity.role == .music, configuration.output != .alsa else { return nil }
        return max(configuredPeriodFrames(at: rate) * max(1, configuration.periods), Int(min(seconds, 10) * Double(rate)))
    }

    /// Frames a voice's ring holds: half a second, or room for twice the longest buffer a
    /// period can ask for and one period more (the burst a starting stream takes); with a
    /// long buffer, three times that buffer and some blocks: its burst, and a refill (the
    /// reader refills below half) once per buffer played instead of once per request,
    /// which halves the reader's wakeups while a long buffer plays (bench/power).
    func voiceRingFrames(rate: Int) -> Int {
        let longest = max(configuredPeriodFrames(at: rate), Int((AudioEngine.ioBufferDurationRange.upperBound * Double(rate)).rounded(.up)))
        let short = max(rate / 2, 2 * (max(3, configuration.periods) + 1) * longest)
        guard let long = longBufferFrames(rate: rate) else { return short }
        return max(short, 3 * long + 8 * VoiceReader.blockFrames)
    }

    /// Frames a voice's ring keeps after they were mixed, so that a restart can mix them
    /// again: the long buffer and a margin (the sink's share, the timing's step), or none.
    func voiceRetainFrames(rate: Int) -> Int {
        guard let long = longBufferFrames(rate: rate) else { return 0 }
        return long + rate / 5
    }

    /// What a voice needs buffered before it starts: a starting stream takes its whole
    /// buffer in one burst, and a voice that started with less would run dry inside it and
    /// leave a hole; 4096 frames at least (room for the reader's next blocks).
    var primeFrames: Int {
        let request = outputRequest()
        return max(4096, request.bufferFrames + request.periodFrames)
    }
}
