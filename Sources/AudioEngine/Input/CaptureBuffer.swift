import Platform
import Synchronization

/// Where an input stream puts what it captures: a lock-free ring of interleaved Float32
/// frames, a semaphore that wakes the one consumer (a recording's writer thread), and the
/// capture clock.
///
/// The producer is the input's capture thread (libpulse's mainloop thread, or the ALSA
/// capture thread): `push`, `pushSilence` and `fail` neither allocate nor block, so the
/// capture callback never waits for the disk.
///
/// The clock: every frame has an index (frames captured since the stream opened, overflow
/// included). `origin` is the monotonic time at which frame 0 was captured, as the
/// server's latency says at the last push; frame *i* was captured at `origin + i / rate`.
final class CaptureBuffer: @unchecked Sendable {
    let ring: FrameRing
    let sampleRate: Int
    let channels: Int
    /// Posted on failure, and after a push that leaves at least `wakeFrames` frames to read.
    let wake = Semaphore()
    /// How many buffered frames wake the consumer: it need not wake for every fragment (a
    /// recording's writer batches about 100 ms), except when it waits for a stop point (0).
    let wakeFrames = Atomic<Int>(0)
    /// Frames the input delivered (including those dropped because the ring was full).
    let framesCaptured = Atomic<UInt64>(0)
    /// Frames dropped because the consumer fell behind (ring full).
    let framesDropped = Atomic<UInt64>(0)
    /// Frames the consumer has taken out of the ring, plus `framesDropped`: the index of
    /// the next frame the consumer reads.
    private let originTime = AtomicDouble(0)
    private let hasOrigin = Atomic<Bool>(false)
    /// Set by the first push whose age the input vouches for (a sound server's timing
    /// taken while the stream runs): until then the origin, if any, is a guess.
    private let originSettled = Atomic<Bool>(false)
    /// Set once when the stream fails (the server went away, the device was removed).
    let failed = Atomic<Bool>(false)
    let failureReason = Mutex<String?>(nil)

    init(sampleRate: Int, channels: Int, seconds: Double = 4) {
        self.sampleRate = sampleRate
        self.channels = channels
        ring = FrameRing(channels: channels, capacityFrames: max(4096, Int(seconds * Double(sampleRate))))
    }

    /// Capture thread: appends `frames` frames whose first was captured `age` seconds ago
    /// (negative: it will be, as on a monitor source, whose blocks are heard after they are posted).
    /// A nil age (the input cannot tell yet) sets a provisional clock, only when there is none:
    /// as if the first frame were captured now.
    func push(_ samples: UnsafePointer<Float>, frames: Int, age: Double?) {
        stamp(frames: frames, age: age)
        let written = ring.write(samples, frames: frames)
        if written < frames {
            // The consumer fell behind: the frames that did not fit are lost, and the ring
            // keeps its order. Counted, so the consumer's indices stay right.
            dropTail(frames - written)
        }
        framesCaptured.add(UInt64(frames), ordering: .releasing)
        wakeIfEnough()
    }

    private func wakeIfEnough() {
        if ring.availableToRead >= wakeFrames.load(ordering: .relaxed) { wake.signal() }
    }

    /// Capture thread: appends `frames` frames of silence (a hole in the server's stream).
    func pushSilence(frames: Int, age: Double?, scratch: UnsafeMutablePointer<Float>, scratchFrames: Int) {
        var left = frames
        scratch.update(repeating: 0, count: scratchFrames * channels)
        stamp(frames: frames, age: age)
        while left > 0 {
            let count = min(left, scratchFrames)
            let written = ring.write(scratch, frames: count)
            if written < count { dropTail(count - written) }
            left -= count
        }
        framesCaptured.add(UInt64(frames), ordering: .releasing)
        wakeIfEnough()
    }

    private let droppedPending = Atomic<UInt64>(0)

    private func dropTail(_ frames: Int) {
        framesDropped.add(UInt64(frames), ordering: .relaxed)
        droppedPending.add(UInt64(frames), ordering: .releasing)
    }

    /// Consumer: frames lost to overflow since the last call (the consumer's index skips them).
    func takeDropped() -> UInt64 { droppedPending.exchange(0, ordering: .acquiringAndReleasing) }

    private func stamp(frames: Int, age: Double?) {
        guard let age else {
            if !hasOrigin.load(ordering: .acquiring) {
                originTime.store(MonotonicClock.seconds() - Double(framesCaptured.load(ordering: .relaxed)) / Double(sampleRate))
                hasOrigin.store(true, ordering: .releasing)
            }
            return
        }
        let index = Double(framesCaptured.load(ordering: .relaxed))
        originTime.store(MonotonicClock.seconds() - age - index / Double(sampleRate))
        hasOrigin.store(true, ordering: .releasing)
        originSettled.store(true, ordering: .releasing)
    }

    /// Capture thread (or a control thread): the stream failed for `reason`.
    func fail(_ reason: String) {
        failureReason.withLock { if $0 == nil { $0 = reason } }
        failed.store(true, ordering: .releasing)
        wake.signal()
    }

    /// Whether the capture clock is known: a first fragment arrived.
    var hasClock: Bool { hasOrigin.load(ordering: .acquiring) }

    /// Whether the capture clock comes from the input's own timing (a push with an age),
    /// not from the provisional guess of a push without one.
    var isClockSettled: Bool { originSettled.load(ordering: .acquiring) }

    /// The index of the frame captured at monotonic time `time` (clamped at 0); before the
    /// first push, the frame the stream will capture next.
    func frameIndex(atMonotonic time: Double) -> UInt64 {
        guard hasOrigin.load(ordering: .acquiring) else { return framesCaptured.load(ordering: .acquiring) }
        let index = ((time - originTime.value) * Double(sampleRate)).rounded()
        return index <= 0 ? 0 : UInt64(index)
    }

    /// The monotonic time at which frame `index` was captured (nil before the first push).
    func monotonicTime(ofFrame index: UInt64) -> Double? {
        guard hasOrigin.load(ordering: .acquiring) else { return nil }
        return originTime.value + Double(index) / Double(sampleRate)
    }
}
