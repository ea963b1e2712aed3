import Synchronization

/// A single-producer, single-consumer ring of interleaved Float32 frames.
///
/// The producer (a reader thread) writes, the consumer (the render thread) reads; both
/// sides are wait-free and allocation-free. Indices count frames since creation and
/// never wrap in practice (UInt64).
///
/// The consumer may keep up to `retainFrames` frames it has read (a voice's frames mixed
/// but not yet heard, while a sound server holds a long buffer) and move its read index
/// back over them (``rewind(by:)``). The producer never overwrites them: it writes at most
/// `capacity` frames ahead of the read index, and the storage holds `capacity +
/// retainFrames`, so the retained frames behind the highest read index reached are never
/// reached by a write.
///
/// `@unchecked Sendable` for the shared `storage`: the producer writes only the slots
/// between the read and write indices' free space and then publishes them by storing
/// `writeIndex` (releasing); the consumer reads only slots below the `writeIndex` it
/// loaded (acquiring) and frees them by storing `readIndex`. That holds for one producer
/// thread and one consumer thread at a time, which `Voice.ringOwner` ensures.
/// `readHigh` and `floor` are atomics only because `reset` may run on either side's thread
/// (while neither uses the ring); the consumer alone moves them otherwise.
final class FrameRing: @unchecked Sendable {
    let channels: Int
    /// Frames the producer may write ahead of the read index.
    let capacity: Int
    /// Frames the consumer may keep behind the read index.
    let retainFrames: Int
    private let storageFrames: Int
    private let storage: UnsafeMutablePointer<Float>
    private let writeIndex = Atomic<UInt64>(0)
    private let readIndex = Atomic<UInt64>(0)
    /// The highest read index reached: frames up to `retainFrames` behind it are kept.
    private let readHigh = Atomic<UInt64>(0)
    /// The read index at the last reset: nothing before it belongs to the current stream.
    private let floor = Atomic<UInt64>(0)

    init(channels: Int, capacityFrames: Int, retainFrames: Int = 0) {
        self.channels = channels
        self.capacity = capacityFrames
        self.retainFrames = max(0, retainFrames)
        storageFrames = capacityFrames + max(0, retainFrames)
        // Left uninitialized: a frame is read only after the producer wrote it (the read
        // index never passes the write index, and a rewind goes back only over frames read).
        // A long buffer's ring holds seconds (3.2 MB for a 2 s buffer at 48 kHz); zeroing
        // it faulted in every page as a voice was made, on the thread that made it, though
        // a short queue item's reader touches a part of it. Float is trivial: a store
        // initializes it.
        storage = .allocate(capacity: channels * storageFrames)
    }

    deinit { storage.deallocate() }

    /// Frames written so far (the producer's position).
    var framesWritten: UInt64 { writeIndex.load(ordering: .acquiring) }
    /// Frames read so far (the consumer's position).
    var framesRead: UInt64 { readIndex.load(ordering: .acquiring) }
    var availableToRead: Int { Int(framesWritten &- framesRead) }
    var availableToWrite: Int { max(0, capacity - availableToRead) }
    /// Consumer: how many frames ``rewind(by:)`` may go back.
    var rewindable: Int {
        let r = readIndex.load(ordering: .relaxed)
        let high = readHigh.load(ordering: .relaxed)
        let oldest = max(floor.load(ordering: .relaxed), high >= UInt64(retainFrames) ? high - UInt64(retainFrames) : 0)
        return r > oldest ? Int(r - oldest) : 0
    }

    /// Producer: copies up to `frames` frames in; returns how many fit. A span at a time
    /// (two where the storage wraps), each published as it is copied.
    func write(_ source: UnsafePointer<Float>, frames: Int) -> Int {
        var written = 0
        while written < frames {
            let span = writableSpan(maxFrames: frames - written)
            guard span.frames > 0 else { break }
            span.start.update(from: source + written * channels, count: span.frames * channels)
            commitWrite(frames: span.frames)
            written += span.frames
        }
        return written
    }

    /// Producer: where up to `frames` frames may be written in place, contiguous in storage
    /// (fewer where the storage wraps or the ring is nearly full; none when full), to be
    /// published by ``commitWrite(frames:)``: a source decodes straight into the ring
    /// instead of into a buffer that ``write(_:frames:)`` then copies. The bound keeps the
    /// consumer's retained frames untouched.
    func writableSpan(maxFrames frames: Int) -> (start: UnsafeMutablePointer<Float>, frames: Int) {
        let w = writeIndex.load(ordering: .relaxed)
        let r = readIndex.load(ordering: .acquiring)
        let start = Int(w % UInt64(storageFrames))
        let count = max(0, min(frames, capacity - Int(w &- r), storageFrames - start))
        return (storage + start * channels, count)
    }

    /// Producer: publishes `frames` frames written at the start of the last
    /// ``writableSpan(maxFrames:)`` (at most its length).
    func commitWrite(frames: Int) {
        writeIndex.store(writeIndex.load(ordering: .relaxed) &+ UInt64(frames), ordering: .releasing)
    }

    /// Consumer: calls `body` with up to two contiguous spans covering `frames` frames
    /// (or fewer if fewer are buffered), then releases them (keeping up to `retainFrames`).
    /// Returns frames consumed.
    @inline(__always)
    func read(frames: Int, _ body: (UnsafePointer<Float>, Int, Int) -> Void) -> Int {
        let r = readIndex.load(ordering: .relaxed)
        let w = writeIndex.load(ordering: .acquiring)
        let count = min(frames, Int(w &- r))
        guard count > 0 else { return 0 }
        let start = Int(r % UInt64(storageFrames))
        let first = min(count, storageFrames - start)
        body(storage + start * channels, first, 0)
        if count > first { body(storage, count - first, first) }
        if retainFrames > 0, readHigh.load(ordering: .relaxed) < r &+ UInt64(count) {
            readHigh.store(r &+ UInt64(count), ordering: .relaxed)
        }
        readIndex.store(r &+ UInt64(count), ordering: .releasing)
        return count
    }

    /// Consumer: moves the read index back by `frames` (at most ``rewindable``), so that
    /// they are read again.
    func rewind(by frames: Int) {
        let back = UInt64(max(0, min(frames, rewindable)))
        readIndex.store(readIndex.load(ordering: .relaxed) &- back, ordering: .releasing)
    }

    /// Empties the ring. Only valid while neither side is using it (see `Voice.ringOwner`).
    func reset() {
        let w = writeIndex.load(ordering: .acquiring)
        readHigh.store(w, ordering: .relaxed)
        floor.store(w, ordering: .relaxed)
        readIndex.store(w, ordering: .releasing)
    }
}

/// A single-producer, single-consumer ring of small values (timeline marks); safe to share
/// for the reason ``FrameRing`` is. Like ``FrameRing``, the consumer may keep up to
/// `retain` values it has popped and go back over them (``rewind(to:)``).
final class ValueRing<Element: BitwiseCopyable>: @unchecked Sendable {
    private let storage: UnsafeMutablePointer<Element>
    private let capacity: Int
    private let retain: Int
    private let writeIndex = Atomic<UInt64>(0)
    private let readIndex = Atomic<UInt64>(0)
    private var readHigh: UInt64 = 0
    private var floor: UInt64 = 0

    init(capacity: Int, retain: Int = 0) {
        self.capacity = capacity
        self.retain = max(0, retain)
        storage = .allocate(capacity: capacity + max(0, retain))
    }

    deinit { storage.deallocate() }

    var isFull: Bool { Int(writeIndex.load(ordering: .relaxed) &- readIndex.load(ordering: .acquiring)) >= capacity }

    func push(_ value: Element) -> Bool {
        let w = writeIndex.load(ordering: .relaxed)
        guard Int(w &- readIndex.load(ordering: .acquiring)) < capacity else { return false }
        (storage + Int(w % UInt64(capacity + retain))).initialize(to: value)
        writeIndex.store(w &+ 1, ordering: .releasing)
        return true
    }

    /// The oldest value, without removing it.
    func peek() -> Element? {
        let r = readIndex.load(ordering: .relaxed)
        guard r != writeIndex.load(ordering: .acquiring) else { return nil }
        return storage[Int(r % UInt64(capacity + retain))]
    }

    func pop() {
        let r = readIndex.load(ordering: .relaxed)
        guard r != writeIndex.load(ordering: .acquiring) else { return }
        readHigh = max(readHigh, r &+ 1)
        readIndex.store(r &+ 1, ordering: .releasing)
    }

    /// Consumer: the popped values still kept, newest first, with the read index each
    /// would be read again from (for ``rewind(to:)``).
    func forEachKept(_ body: (_ index: UInt64, _ value: Element) -> Bool) {
        let r = readIndex.load(ordering: .relaxed)
        let oldest = max(floor, readHigh >= UInt64(retain) ? readHigh - UInt64(retain) : 0)
        var index = r
        while index > oldest {
            index -= 1
            if !body(index, storage[Int(index % UInt64(capacity + retain))]) { return }
        }
    }

    /// Consumer: the read index kept values start at (values before it are gone).
    var keptFloor: UInt64 { max(floor, readHigh >= UInt64(retain) ? readHigh - UInt64(retain) : 0) }

    /// Consumer: moves the read index back to `index` (a kept value's, or the read index).
    func rewind(to index: UInt64) {
        let r = readIndex.load(ordering: .relaxed)
        guard index <= r, index >= keptFloor else { return }
        readIndex.store(index, ordering: .releasing)
    }

    func reset() {
        let w = writeIndex.load(ordering: .acquiring)
        readIndex.store(w, ordering: .releasing)
        readHigh = w
        floor = w
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
