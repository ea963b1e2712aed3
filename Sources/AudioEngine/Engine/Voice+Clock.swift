import Synchronization

/// Where the voice's media time meets the engine's frames: the position that is *heard*.
///
/// The render thread mixes a voice some tens to hundreds of milliseconds before the sound
/// server plays it. Each period it mixes, it records an anchor: the engine frame just after
/// the voice's last mixed frame, the media time there, and the media seconds per frame. The
/// position is then read at the frame the device clock says is being heard now (the
/// server's or ALSA's timing, latency included), so that ``currentTime`` is what the
/// listener hears, not what was mixed.
///
/// The anchors live in a small ring under a sequence lock. The render thread writes it
/// while it owns the voice's ring (`ringOwner` 1); the reader thread clears it on a seek
/// while it owns the ring (`ringOwner` 2); so the writers never overlap, and app threads
/// read it without locks, retrying if a write ran meanwhile.
final class VoiceClock: @unchecked Sendable {
    struct Anchor: BitwiseCopyable {
        /// The engine frame just after the last frame mixed in that period.
        var endFrame: Int64
        /// The media time at `endFrame`.
        var endMedia: Double
        /// Media seconds per engine frame over the period.
        var perFrame: Double
        /// Frames mixed in the period.
        var frames: Int64
    }

    /// 64 periods: more than a second of output latency at the default 16 ms period.
    static let capacity = 64
    private let anchors = UnsafeMutablePointer<Anchor>.allocate(capacity: VoiceClock.capacity)
    private let count = Atomic<Int>(0)
    private let sequence = Atomic<UInt64>(0)

    deinit { anchors.deallocate() }

    /// Render or reader thread (see the type's invariant). Allocates nothing.
    @inline(__always)
    func record(_ anchor: Anchor) {
        sequence.add(1, ordering: .acquiringAndReleasing)
        let n = count.load(ordering: .relaxed)
        anchors[n % VoiceClock.capacity] = anchor
        count.store(n + 1, ordering: .releasing)
        sequence.add(1, ordering: .acquiringAndReleasing)
    }

    /// Reader thread, on a seek or rewind: what was mixed before no longer describes the
    /// position.
    func clear() {
        sequence.add(1, ordering: .acquiringAndReleasing)
        count.store(0, ordering: .releasing)
        sequence.add(1, ordering: .acquiringAndReleasing)
    }

    /// The media time heard at engine frame `frame`, or nil when nothing was mixed since the
    /// last clear.
    func mediaTime(atFrame frame: Double) -> Double? {
        while true {
            let before = sequence.load(ordering: .acquiring)
            if before & 1 == 1 { continue }
            let n = count.load(ordering: .acquiring)
            guard n > 0 else {
                if sequence.load(ordering: .acquiring) == before { return nil }
                continue
            }
            var result: Double?
            var oldest = anchors[(n - 1) % VoiceClock.capacity]
            for index in stride(from: n - 1, through: max(0, n - VoiceClock.capacity), by: -1) {
                let anchor = anchors[index % VoiceClock.capacity]
                oldest = anchor
                let start = Double(anchor.endFrame - anchor.frames)
                if frame >= start {
                    result = anchor.endMedia - max(0, Double(anchor.endFrame) - frame) * anchor.perFrame
                    break
                }
            }
            // Before the oldest anchor (not heard yet): where that period started.
            let value = result ?? oldest.endMedia - Double(oldest.frames) * oldest.perFrame
            if sequence.load(ordering: .acquiring) == before { return value }
        }
    }
}
