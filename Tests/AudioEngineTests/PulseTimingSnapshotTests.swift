@testable import AudioEngine
import CPulse
import Testing

/// The delay a PulseAudio timing snapshot gives later on, which ``PulseOutput`` holds
/// libpulse's interpolation to. The numbers are those a null sink that took a stream late
/// reported (44.1 kHz): no server here.
@Suite struct PulseTimingSnapshotTests {
    let rate = 44_100

    @Test("a sink that does not play the stream: the delay is what is queued, whatever the sink's latency and however long since")
    func notPlaying() {
        // The null sink asleep in its 2 s block: nothing read, `playing` 0.
        let asleep = PulseTimingSnapshot(queuedFrames: 2304, sinkLatency: 1.957, playing: false)
        for elapsed in [0.0, 0.01, 0.5, 3] {
            #expect(asleep.delay(after: elapsed, rate: rate) == 2304)
        }
    }

    @Test("a sink that plays: queued and the sink's latency, less the time since the snapshot, never below 0")
    func playing() {
        // The first snapshot after it woke: 767 of 2304 frames read, 16.7 ms in the sink.
        let woke = PulseTimingSnapshot(queuedFrames: 1537, sinkLatency: 0.016698, playing: true)
        #expect(woke.delay(after: 0, rate: rate) == 2273)
        #expect(woke.delay(after: 0.010, rate: rate) == 1832)
        #expect(woke.delay(after: -0.001, rate: rate) == 2273, "a snapshot stamped after now counts as now")
        #expect(woke.delay(after: 1, rate: rate) == 0)
    }

    @Test("a server's absurd numbers give a delay between 0 and a minute, and indices that cannot be subtracted give no snapshot")
    func absurdNumbers() {
        let limit = Int(PulseTimingSnapshot.maximumDelay) * rate
        #expect(PulseTimingSnapshot(queuedFrames: .max, sinkLatency: 0, playing: false).delay(after: 0, rate: rate) == limit)
        #expect(PulseTimingSnapshot(queuedFrames: .min, sinkLatency: 0, playing: false).delay(after: 0, rate: rate) == 0)
        #expect(PulseTimingSnapshot(queuedFrames: .max, sinkLatency: 1.8e13, playing: true).delay(after: 0, rate: rate) == limit)
        #expect(PulseTimingSnapshot(queuedFrames: 0, sinkLatency: .infinity, playing: true).delay(after: .nan, rate: rate) == 0)
        #expect(PulseTimingSnapshot(queuedFrames: .min, sinkLatency: 0, playing: true).delay(after: 1e300, rate: rate) == 0)
        var timing = pa_timing_info()
        timing.write_index = .max
        timing.read_index = -1
        #expect(PulseTimingSnapshot(timing, frameBytes: 8) == nil)
        timing.read_index = 8
        #expect(PulseTimingSnapshot(timing, frameBytes: 8)?.queuedFrames == (Int64.max - 8) / 8)
    }
}
