import Synchronization

/// The render table: which voices the render thread mixes, as unretained pointers in a
/// fixed number of atomic slots. App threads put voices in (``claim(_:)``) and take them
/// out (``clear(_:)``); the render thread and the event thread walk it (``forEach(_:)``).
///
/// The walk is on the render path, once a mixed piece: it must not allocate, lock or
/// retain. (As an array of slot objects, each step retained and released its slot: 128 of
/// each a piece, 4 % of `earshot play`'s CPU.) So the slots are one allocation of atomics,
/// and a walk stops at ``highWater``, the end of the slots ever claimed, rather than at the
/// capacity.
///
/// `@unchecked Sendable`, and why that holds: `storage` is allocated and initialized
/// once in `init`, never reassigned, and deinitialized in `deinit`, when no other
/// reference remains; in between every access to it is an atomic operation on one slot,
/// and `highWater` is atomic.
final class VoiceTable: @unchecked Sendable {
    /// How many slots there are: the most voices that can be in the table at once.
    let capacity: Int
    private let storage: UnsafeMutablePointer<Atomic<UInt>>
    /// One past the highest slot ever claimed; slots at or above it are empty. It only grows.
    private let highWater = Atomic<Int>(0)

    init(capacity: Int) {
        precondition(capacity > 0, "a voice table needs at least one slot")
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
        for index in 0..<capacity { (storage + index).initialize(to: Atomic(0)) }
    }

    deinit {
        storage.deinitialize(count: capacity)
        storage.deallocate()
    }

    /// Puts `voice` in the first empty slot; returns its index, or nil when every slot is
    /// taken.
    func claim(_ voice: Voice) -> Int? {
        let bits = UInt(bitPattern: Unmanaged.passUnretained(voice).toOpaque())
        for index in 0..<capacity {
            guard storage[index].compareExchange(expected: 0, desired: bits, ordering: .acquiringAndReleasing).exchanged else {
                continue
            }
            // After the slot's store: a walk that sees the new mark also sees the voice
            // (or a later change of that slot).
            var mark = highWater.load(ordering: .relaxed)
            while mark <= index {
                let (exchanged, original) = highWater.compareExchange(expected: mark, desired: index + 1, ordering: .releasing)
                if exchanged { break }
                mark = original
            }
            return index
        }
        return nil
    }

    /// Empties slot `index` (from ``claim(_:)``).
    func clear(_ index: Int) {
        precondition(index >= 0 && index < capacity, "no slot \(index) in a table of \(capacity)")
        storage[index].store(0, ordering: .releasing)
    }

    /// Calls `body` with each voice in the table, in slot order, until it returns false;
    /// returns whether it never did. Atomic loads only.
    @inline(__always)
    func forEach(_ body: (Voice) -> Bool) -> Bool {
        let end = highWater.load(ordering: .acquiring)
        for index in 0..<end {
            let bits = storage[index].load(ordering: .acquiring)
            guard bits != 0, let pointer = UnsafeRawPointer(bitPattern: bits) else { continue }
            if !body(Unmanaged<Voice>.fromOpaque(pointer).takeUnretainedValue()) { return false }
        }
        return true
    }
}
