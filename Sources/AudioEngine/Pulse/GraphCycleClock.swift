import Platform
#if canImport(Glibc)
import Glibc
#endif

/// A stream's position on the monotonic clock, from timing snapshots whose index moves in
/// whole graph cycles: pipewire-pulse's.
///
/// pipewire-pulse 0.3.65 answers a timing request with the stream's read index (playback)
/// or write index (record) as of the last graph cycle, a timestamp taken when it answers,
/// and 0 for the sink's or source's latency. The index steps by the quantum (256 frames,
/// 5.3 ms, at the test rig's 48 kHz; 512 or 1024 elsewhere), and the answer falls anywhere
/// in a cycle, so a snapshot alone is up to a quantum stale (measured: uniform over 0 …
/// one quantum below the freshest, hundreds of snapshots). libpulse's interpolation from
/// such snapshots wandered 5–17 ms per take against the monotonic clock.
///
/// Each snapshot says: the stream's offset θ (index / rate − time, constant while the
/// stream runs at its rate) is at least `index / rate − timestamp` (the index was reached
/// by then, a snapshot is only ever stale). The clock takes the highest of these bounds
/// over the recent snapshots (the freshest): it does not jump back by the staleness of the
/// last one, and only moves up as fresher ones come. A snapshot more than a quantum below
/// it means the stream itself fell back (an underrun stalled it, a drain stopped it): the
/// clock starts again from that snapshot. The quantum is learnt from the index steps (their
/// greatest common divisor since the stream opened).
///
/// Positions follow the index as of the start of the cycle it was reached in. A record
/// stream's block is captured from then on; a playback stream's block, taken in that cycle,
/// plays one quantum later (measured: with both at the index, a tone played at a device
/// time was in a monitor's recording 5.2–5.3 ms, one 256-frame quantum, after the frame
/// asked for that time, in 4 of 4 takes): ``PulseOutput`` takes the quantum off.
/// Why not the middle of lower and upper bounds (less than a quantum above each snapshot):
/// the output asks for a snapshot after each write, so its snapshots come at the same
/// phase of every cycle and the middle was half a period off (measured), and its learnt
/// quantum was the period (768 frames) rather than the graph's (256).
///
/// Not thread-safe: one owner (libpulse's thread, under the mainloop's lock). Fixed storage,
/// allocated once: `observe` allocates nothing.
struct GraphCycleClock {
    /// How many recent snapshots bound the offset (at one a period or fragment: about a second).
    static let capacity = 48
    /// Snapshots older than this (seconds) no longer bound it: a real device's rate differs
    /// from the nominal one by some parts per million, which moves the offset slowly.
    static let window = 1.0
    let rate: Double
    private var offsets: [Double]
    private var stamps: [Double]
    private var indices: [Int64]
    private var count = 0
    private var next = 0
    /// The quantum in frames, once two snapshots differ; 0 before. Kept across resets; a
    /// quantum that grows (streams with short latencies left the graph) is not followed.
    private(set) var quantum: Int64 = 0
    private var lastIndex: Int64?

    init(rate: Int) {
        self.rate = Double(rate)
        offsets = Array(repeating: 0, count: GraphCycleClock.capacity)
        stamps = Array(repeating: 0, count: GraphCycleClock.capacity)
        indices = Array(repeating: 0, count: GraphCycleClock.capacity)
    }

    /// Forgets every snapshot (the stream was corked, flushed or restarted).
    mutating func reset() {
        count = 0
        next = 0
    }

    /// Whether a snapshot has been taken since the last reset.
    var isKnown: Bool { count > 0 }

    /// Snapshots taken since the last reset (at most `capacity`).
    var snapshotCount: Int { count }

    /// Whether a stream that took its last snapshot request at `lastRequest` (monotonic
    /// seconds) should ask for another at `now`: at every chance (a write, a fragment) until
    /// 32 snapshots since the last reset have narrowed the clock, then every 0.1 s. A reply
    /// wakes libpulse's thread once more: asked at every 16 ms period, the playing process
    /// woke 175 times a second instead of 85 (pipewire-pulse, `earshot play`).
    func wantsSnapshot(lastRequest: Double, now: Double) -> Bool {
        count < 32 || now - lastRequest >= 0.1
    }

    /// Adds a snapshot: the stream's index (frames) as of `time` (monotonic seconds).
    mutating func observe(index: Int64, at time: Double) {
        let offset = Double(index) / rate - time
        if count > 0, let low = bound(now: time) {
            // More than a quantum (and half a millisecond of the server's own timestamp
            // jitter) below the freshest: the stream fell back; start again from here.
            if offset + quantumSeconds + 0.0005 < low { reset() }
        }
        offsets[next] = offset
        stamps[next] = time
        indices[next] = index
        next = (next + 1) % GraphCycleClock.capacity
        count = min(count + 1, GraphCycleClock.capacity)
        // The quantum: the greatest common divisor of the index's steps since the stream
        // opened. Snapshots taken once per period step by the period (a multiple of the
        // quantum) most of the time; a late one now and then steps by another multiple.
        if let last = lastIndex, index != last {
            let step = abs(index - last)
            quantum = quantum == 0 ? step : gcd(quantum, step)
        }
        lastIndex = index
    }

    private var quantumSeconds: Double { Double(quantum) / rate }

    /// The offset's lower bound from the snapshots within the window of `now`.
    private func bound(now: Double) -> Double? {
        var low = -Double.infinity
        for i in 0..<count where now - stamps[i] <= GraphCycleClock.window { low = max(low, offsets[i]) }
        return low.isFinite ? low : nil
    }

    /// The index (frames, fractional) the stream is at, at monotonic time `time`, in the
    /// convention above; nil before the first snapshot.
    func position(at time: Double) -> Double? {
        guard count > 0 else { return nil }
        // Every snapshot older than the window: the latest one alone.
        let offset = bound(now: time) ?? offsets[(next + GraphCycleClock.capacity - 1) % GraphCycleClock.capacity]
        return (time + offset) * rate
    }

    private func gcd(_ a: Int64, _ b: Int64) -> Int64 {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }

    /// CLOCK_MONOTONIC's reading of a libpulse timestamp (CLOCK_REALTIME, as `pa_timing_info`
    /// carries it), by the two clocks' difference now.
    static func monotonic(realtimeSeconds: Int, microseconds: Int) -> Double {
        var real = timespec()
        clock_gettime(CLOCK_REALTIME, &real)
        let now = MonotonicClock.seconds()
        let realNow = Double(real.tv_sec) + Double(real.tv_nsec) / 1e9
        return Double(realtimeSeconds) + Double(microseconds) / 1e6 - (realNow - now)
    }
}
