import Synchronization

/// A single-producer, single-consumer ring of interleaved Float32 frames.
///
/// The producer (a reader thread) writes, the consumer (the render thread) reads; both
/// sides are wait-free and allocation-free. Indices count frames since creation and
/// never wrap in practice (UInt64).
///
/// `@unchecked Sendable` for the shared `storage`: the producer writes only the slots
/// between the read and write indices' free space and then publishes them by storing
/// `writeIndex` (releasing); the consumer reads only slots below the `writeIndex` it
/// loaded (acquiring) and frees them by storing `readIndex`. That holds for one producer
/// thread and one consumer thread at a time, which `Voice.ringOwner` ensures.
final class FrameRing: @unchecked Sendable {
    let channels: Int
    let capacity: Int
    private let storage: UnsafeMutablePointer<Float>
    private let writeIndex = Atomic<UInt64>(0)
    private let readIndex = Atomic<UInt64>(0)

    init(channels: Int, capacityFrames: Int) {
        self.channels = channels
        self.capacity = capacityFrames
        storage = .allocate(capacity: channels * capacityFrames)
        storage.initialize(repeating: 0, count: channels * capacityFrames)
    }

    deinit { storage.deallocate() }

    /// Frames written so far (the producer's position).
    var framesWritten: UInt64 { writeIndex.load(ordering: .acquiring) }
    /// Frames read so far (the consumer's position).
    var framesRead: UInt64 { readIndex.load(ordering: .acquiring) }
    var availableToRead: Int { Int(framesWritten &- framesRead) }
    var availableToWrite: Int { capacity - availableToRead }

    /// Producer: copies up to `frames` frames in; returns how many fit.
    func write(_ source: UnsafePointer<Float>, frames: Int) -> Int {
        let w = writeIndex.load(ordering: .relaxed)
        let r = readIndex.load(ordering: .acquiring)
        let count = min(frames, capacity - Int(w &- r))
        guard count > 0 else { return 0 }
        let start = Int(w % UInt64(capacity))
        let first = min(count, capacity - start)
        (storage + start * channels).update(from: source, count: first * channels)
        if count > first { storage.update(from: source + first * channels, count: (count - first) * channels) }
        writeIndex.store(w &+ UInt64(count), ordering: .releasing)
        return count
    }

    /// Consumer: calls `body` with up to two contiguous spans covering `frames` frames
    /// (or fewer if fewer are buffered), then releases them. Returns frames consumed.
    @inline(__always)
    func read(frames: Int, _ body: (UnsafePointer<Float>, Int, Int) -> Void) -> Int {
        let r = readIndex.load(ordering: .relaxed)
        let w = writeIndex.load(ordering: .acquiring)
        let count = min(frames, Int(w &- r))
        guard count > 0 else { return 0 }
        let start = Int(r % UInt64(capacity))
        let first = min(count, capacity - start)
        body(storage + start * channels, first, 0)
        if count > first { body(storage, count - first, first) }
        readIndex.store(r &+ UInt64(count), ordering: .releasing)
        return count
    }

    /// Empties the ring. Only valid while neither side is using it (see `Voice.ringOwner`).
    func reset() {
        readIndex.store(writeIndex.load(ordering: .acquiring), ordering: .releasing)
    }
}

/// A single-producer, single-consumer ring of small values (timeline marks); safe to share
/// for the reason ``FrameRing`` is.
final class ValueRing<Element: BitwiseCopyable>: @unchecked Sendable {
    private let storage: UnsafeMutablePointer<Element>
    private let capacity: Int
    private let writeIndex = Atomic<UInt64>(0)
    private let readIndex = Atomic<UInt64>(0)

    init(capacity: Int) {
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
    }

    deinit { storage.deallocate() }

    var isFull: Bool { Int(writeIndex.load(ordering: .relaxed) &- readIndex.load(ordering: .acquiring)) >= capacity }

    func push(_ value: Element) -> Bool {
        let w = writeIndex.load(ordering: .relaxed)
        guard Int(w &- readIndex.load(ordering: .acquiring)) < capacity else { return false }
        (storage + Int(w % UInt64(capacity))).initialize(to: value)
        writeIndex.store(w &+ 1, ordering: .releasing)
        return true
    }

    /// The oldest value, without removing it.
    func peek() -> Element? {
        let r = readIndex.load(ordering: .relaxed)
        guard r != writeIndex.load(ordering: .acquiring) else { return nil }
        return storage[Int(r % UInt64(capacity))]
    }

    func pop() {
        let r = readIndex.load(ordering: .relaxed)
        guard r != writeIndex.load(ordering: .acquiring) else { return }
        readIndex.store(r &+ 1, ordering: .releasing)
    }

    func reset() {
        readIndex.store(writeIndex.load(ordering: .acquiring), ordering: .releasing)
    }
}

/// A Float shared between threads without locks (stored as its bit pattern).
struct AtomicFloat: ~Copyable, Sendable {
    private let bits: Atomic<UInt32>
    init(_ value: Float) { bits = Atomic(value.bitPattern) }
    var value: Float {
        get { Float(bitPattern: bits.load(ordering: .relaxed)) }
    }
    func store(_ value: Float) { bits.store(value.bitPattern, ordering: .relaxed) }
}

/// A Double shared between threads without locks.
struct AtomicDouble: ~Copyable, Sendable {
    private let bits: Atomic<UInt64>
    init(_ value: Double) { bits = Atomic(value.bitPattern) }
    var value: Double { Double(bitPattern: bits.load(ordering: .relaxed)) }
    func store(_ value: Double) { bits.store(value.bitPattern, ordering: .relaxed) }
}
