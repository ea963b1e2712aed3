@testable import AudioEngine
import Testing

/// The clock a pipewire-pulse stream is placed by, fed with snapshots as pipewire-pulse
/// gives them: the index in whole quanta as of the last graph cycle, the timestamp anywhere
/// in the cycle after it. No server: the snapshots are made here, so each case says exactly
/// what the clock must make of them.
@Suite struct GraphCycleClockTests {
    let rate = 48_000
    let quantum: Int64 = 256
    /// The stream's index at monotonic time `time`, as pipewire-pulse reports it: the index
    /// reached at the last cycle's start (cycles start at multiples of the quantum from
    /// `start`, when the stream's position was `origin`).
    func snapshot(at time: Double, start: Double = 100, origin: Int64 = 4096) -> Int64 {
        let cycles = Int64(((time - start) * Double(rate) / Double(quantum)).rounded(.down))
        return origin + cycles * quantum
    }

    /// What the stream's position is at `time` in the clock's convention (the index at its
    /// cycle's start, moving on at the rate).
    func truth(at time: Double, start: Double = 100, origin: Int64 = 4096) -> Double {
        Double(origin) + (time - start) * Double(rate)
    }

    @Test("snapshots each at another part of a cycle: the clock settles on the cycles' start, within a tenth of a millisecond, and does not move back with a stale one")
    func settlesOnCycleStart() {
        var clock = GraphCycleClock(rate: rate)
        var time = 100.0
        var last: Double?
        // 16.1 ms apart: each snapshot 0.1 ms later in its cycle than the one before, so
        // that the staleness goes through the whole cycle.
        for _ in 0..<60 {
            time += 0.0161
            clock.observe(index: snapshot(at: time), at: time)
            let position = clock.position(at: time)!
            // Never behind a position given before (taken at an earlier time, moved on).
            if let last { #expect(position >= last - 0.5) }
            last = position
        }
        #expect(clock.quantum == quantum)
        let error = (clock.position(at: time)! - truth(at: time)) / Double(rate)
        #expect(error <= 0.000_01 && error > -0.000_1, "\(error * 1000) ms from the cycles' start")
    }

    @Test("one snapshot a period, always just after the cycle: the quantum (not the period) is learnt from the odd late one, and the position is the cycle's start less the snapshots' lateness")
    func phaseLockedSnapshots() {
        var clock = GraphCycleClock(rate: rate)
        var time = 100.0 + 0.0002
        for period in 0..<40 {
            // Three quanta a period, the snapshot 0.2 ms into the cycle; every tenth one late
            // by a cycle (the reply waited).
            let late = period % 10 == 9 ? Double(quantum) / Double(rate) : 0
            clock.observe(index: snapshot(at: time + late), at: time + late)
            time += 3 * Double(quantum) / Double(rate)
        }
        #expect(clock.quantum == quantum)
        let error = (clock.position(at: time)! - truth(at: time)) / Double(rate)
        // Each snapshot 0.2 ms into its cycle: the clock is that much behind the cycle's start.
        #expect(abs(error + 0.0002) < 0.000_01, "\(error * 1000) ms")
    }

    /// A clock fed 30 snapshots of a steady stream, 16.1 ms apart (each at another part of
    /// its cycle), and the time of the last.
    func settled() -> (GraphCycleClock, Double) {
        var clock = GraphCycleClock(rate: rate)
        var time = 100.0
        for _ in 0..<30 {
            time += 0.0161
            clock.observe(index: snapshot(at: time), at: time)
        }
        return (clock, time)
    }

    @Test("a stall (an underrun: the index stops) moves the clock back by the stall's length once the snapshots say so")
    func stallResets() {
        var (clock, time) = settled()
        // 50 ms without progress: from now on the stream is 50 ms later.
        let stall = 0.050
        for _ in 0..<10 {
            time += 0.0161
            clock.observe(index: snapshot(at: time - stall), at: time)
        }
        let error = (clock.position(at: time)! - truth(at: time - stall)) / Double(rate)
        #expect(error <= 0.000_01 && error > -Double(quantum) / Double(rate), "\(error * 1000) ms after the stall")
    }

    @Test("a snapshot far ahead of the stream (a wrong answer from the server) is dropped at the next true one: the clock follows the stream again, without waiting out its window")
    func wrongSnapshotIsDropped() {
        var (clock, time) = settled()
        time += 0.0161
        clock.observe(index: snapshot(at: time) + Int64(rate), at: time)
        for _ in 0..<5 {
            time += 0.0161
            clock.observe(index: snapshot(at: time), at: time)
        }
        let error = (clock.position(at: time)! - truth(at: time)) / Double(rate)
        #expect(error <= 0.000_01 && error > -Double(quantum) / Double(rate), "\(error * 1000) ms after a snapshot 1 s ahead")
    }
}
