@testable import AudioEngine
import Testing

/// The ring a voice's decoded frames go through, written in place (``FrameRing/writableSpan(maxFrames:)``)
/// as the reader decodes a stereo file at the engine's rate straight into it.
@Suite struct FrameRingTests {
    /// Writes `frames` frames in place, numbered from `first` (left n, right -n), as far as the
    /// spans allow; returns how many went in.
    private func writeInPlace(_ ring: FrameRing, frames: Int, first: Int) -> Int {
        var written = 0
        while written < frames {
            let span = ring.writableSpan(maxFrames: frames - written)
            guard span.frames > 0 else { break }
            for i in 0..<span.frames {
                span.start[2 * i] = Float(first + written + i)
                span.start[2 * i + 1] = -Float(first + written + i)
            }
            ring.commitWrite(frames: span.frames)
            written += span.frames
        }
        return written
    }

    private func read(_ ring: FrameRing, frames: Int) -> [Float] {
        var out: [Float] = []
        _ = ring.read(frames: frames) { span, count, _ in out += UnsafeBufferPointer(start: span, count: count * 2) }
        return out
    }

    private func numbered(_ range: Range<Int>) -> [Float] { range.flatMap { [Float($0), -Float($0)] } }

    @Test("a span ends where the storage wraps, and the next starts at its beginning; what is read is what was written")
    func spansWrapAroundTheStorage() {
        let ring = FrameRing(channels: 2, capacityFrames: 8)
        #expect(writeInPlace(ring, frames: 6, first: 0) == 6)
        #expect(read(ring, frames: 6) == numbered(0..<6))
        // The write index is at 6 of 8 slots: the first span is the 2 before the wrap.
        #expect(ring.writableSpan(maxFrames: 5).frames == 2)
        #expect(writeInPlace(ring, frames: 5, first: 6) == 5)
        #expect(read(ring, frames: 8) == numbered(6..<11))
    }

    @Test("a span never reaches past the capacity ahead of the read index, nor into the frames kept for a rewind")
    func spansKeepTheRetainedFrames() {
        let ring = FrameRing(channels: 2, capacityFrames: 8, retainFrames: 4)
        #expect(writeInPlace(ring, frames: 20, first: 0) == 8)
        #expect(ring.writableSpan(maxFrames: 4).frames == 0)
        #expect(read(ring, frames: 6) == numbered(0..<6))
        // Room for 6 more; the spans must not overwrite the 4 kept frames (2...5).
        #expect(writeInPlace(ring, frames: 20, first: 8) == 6)
        ring.rewind(by: 4)
        #expect(read(ring, frames: 12) == numbered(2..<14))
    }
}
