@testable import AudioEngine
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
}
