internal import CPulse
import Platform

/// What ``PulseOutput`` and ``PulseInput`` do with a ``GraphCycleClock`` on pipewire-pulse:
/// ask the server for timing snapshots (one request at a time, as often as the clock wants
/// them), and take each new snapshot into the clock once.
///
/// Not thread-safe: one owner, under the stream's mainloop lock.
struct GraphCycleTiming {
    private(set) var clock: GraphCycleClock
    /// The timestamp (µs, CLOCK_REALTIME) of the last snapshot the clock took.
    private var lastSnapshot: Int64 = 0
    /// The timing request in flight, if any.
    private var request: OpaquePointer?
    private var lastRequestTime = 0.0

    init(rate: Int) { clock = GraphCycleClock(rate: rate) }

    /// Releases a request that has been answered, and asks for a new snapshot when none is on
    /// its way and the clock wants one (``GraphCycleClock/wantsSnapshot(lastRequest:now:)``):
    /// libpulse's automatic updates thin out to one in 1.5 s.
    mutating func requestSnapshot(of stream: OpaquePointer) {
        if let request {
            guard pa_operation_get_state(request) != PA_OPERATION_RUNNING else { return }
            pa_operation_unref(request)
            self.request = nil
        }
        let now = MonotonicClock.seconds()
        guard clock.wantsSnapshot(lastRequest: lastRequestTime, now: now) else { return }
        lastRequestTime = now
        request = pa_stream_update_timing_info(stream, nil, nil)
    }

    /// Takes `timing` into the clock if it is a snapshot the clock has not seen and `index`
    /// (frames: the read index of a playback stream, the write index of a record stream)
    /// is valid.
    mutating func take(_ timing: pa_timing_info, index: Int64, valid: Bool) {
        let stamp = Int64(timing.timestamp.tv_sec) * 1_000_000 + Int64(timing.timestamp.tv_usec)
        guard stamp != lastSnapshot, valid else { return }
        lastSnapshot = stamp
        let time = GraphCycleClock.monotonic(realtimeSeconds: Int(timing.timestamp.tv_sec), microseconds: Int(timing.timestamp.tv_usec))
        clock.observe(index: index, at: time)
    }

    /// Forgets every snapshot (the stream was corked, flushed or restarted).
    mutating func reset() { clock.reset() }

    /// Releases the request in flight, before the stream goes.
    mutating func cancel() {
        if let request { pa_operation_unref(request) }
        request = nil
    }
}
