internal import CPulse

/// What a PulseAudio timing snapshot (`pa_timing_info`) says of a playback stream, and the
/// delay it gives at a later moment: the frames written and not yet read, and, while the
/// sink plays the stream, the sink's latency less the time since the snapshot.
///
/// ``PulseOutput`` takes the larger of this and libpulse's interpolated latency. The
/// interpolation never goes back, so when a sink takes a stream late it runs ahead: on a
/// null sink asleep for 2 s in the block it began before the stream came, libpulse's
/// latency fell to 0 while nothing was read, and once the sink played, 2,273 frames were
/// still queued (the position then ran 40–50 ms ahead of what was heard). Elsewhere the two
/// agree within a fraction of a millisecond.
///
/// PulseAudio's snapshots only: pipewire-pulse puts the whole delay where PulseAudio puts
/// the sink's latency (its streams are placed by ``GraphCycleClock``).
struct PulseTimingSnapshot: Equatable {
    /// Frames written and not yet read by the sink.
    var queuedFrames: Int64
    /// The sink's latency at the snapshot, in seconds: how long what it has read takes to be heard.
    var sinkLatency: Double
    /// Whether the sink plays the stream (PulseAudio's `playing`: the stream has given the
    /// sink audio, and both run).
    var playing: Bool

    /// Frames written and not yet heard, `elapsed` seconds after the snapshot, at `rate`.
    /// While the sink does not play, the clock stands at what it has read: whatever the
    /// sink's latency says, nothing of the stream plays yet.
    /// The server's numbers are not trusted: the result lies between 0 and
    /// ``maximumDelay`` seconds, whatever they say.
    func delay(after elapsed: Double, rate: Int) -> Int {
        let limit = PulseTimingSnapshot.maximumDelay * Double(rate)
        guard playing else { return Int(min(limit, Double(max(0, queuedFrames)))) }
        let frames = Double(queuedFrames) + (sinkLatency - max(0, elapsed)) * Double(rate)
        return frames.isFinite ? Int(min(limit, max(0, frames)).rounded()) : 0
    }

    /// The longest delay a snapshot may give: a minute, far above any sink's latency and
    /// buffer, and small enough that frame counts derived from it cannot overflow.
    static let maximumDelay = 60.0
}

extension PulseTimingSnapshot {
    /// The snapshot `timing` holds for a stream of `frameBytes`-byte frames, or nil when
    /// libpulse has lost track of either index (after a seek, until the next snapshot) or
    /// their difference does not fit.
    init?(_ timing: pa_timing_info, frameBytes: Int64) {
        guard timing.read_index_corrupt == 0, timing.write_index_corrupt == 0, frameBytes > 0 else { return nil }
        // Indices a server made up must not trap the subtraction.
        let (queued, overflow) = timing.write_index.subtractingReportingOverflow(timing.read_index)
        guard !overflow else { return nil }
        self.init(queuedFrames: queued / frameBytes,
                  sinkLatency: Double(timing.sink_usec) / 1e6, playing: timing.playing != 0)
    }

    /// Seconds from `timing`'s timestamp (the local time it was current) to now.
    static func elapsed(since timing: pa_timing_info) -> Double {
        var now = timeval()
        pa_gettimeofday(&now)
        var stamp = timing.timestamp
        let micros = Double(pa_timeval_diff(&now, &stamp))
        return pa_timeval_cmp(&now, &stamp) >= 0 ? micros / 1e6 : -micros / 1e6
    }
}
