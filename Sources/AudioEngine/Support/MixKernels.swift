/// The render path's loops over interleaved stereo samples.
///
/// Each is a plain loop without a branch per frame, which the optimizer turns into vector
/// instructions, and which stays cheap in a debug build (where `SIMD4` arithmetic goes
/// through generic witnesses: the debug `earshot play` that the end-to-end tests run spent
/// seven times the CPU with it). A running maximum is written as a compare and a select
/// (`Swift.max` orders NaN, which keeps the loop scalar), and the sums are kept in four
/// running totals, two frames at a time, so that no loop-carried chain is one sample long.
/// Plain values in and out: no allocation, no lock, no atomic, safe on the render thread.
enum MixKernels {
    /// What a metered mix measured of one voice, left and right.
    struct Levels {
        /// The largest magnitude of a sample.
        var peak: SIMD2<Float> = .zero
        /// The sum of the squared samples.
        var sumSquares: SIMD2<Float> = .zero
    }

    /// Adds `frames` frames of `source` times `gains` (left, right) to `destination`,
    /// both interleaved stereo.
    @inline(__always)
    static func add(_ source: UnsafePointer<Float>, to destination: UnsafeMutablePointer<Float>,
                    frames: Int, gains: SIMD2<Float>) {
        let left = gains.x, right = gains.y
        for i in 0..<frames {
            destination[2 &* i] += source[2 &* i] * left
            destination[2 &* i &+ 1] += source[2 &* i &+ 1] * right
        }
    }

    /// ``add(_:to:frames:gains:)``, also measuring what it added (the source times the
    /// gains) into `levels`.
    @inline(__always)
    static func addMeasuring(_ source: UnsafePointer<Float>, to destination: UnsafeMutablePointer<Float>,
                             frames: Int, gains: SIMD2<Float>, levels: inout Levels) {
        let left = gains.x, right = gains.y
        // Two frames a step: four independent running maxima and sums (left and right of
        // each frame).
        var peakL0: Float = 0, peakR0: Float = 0, peakL1: Float = 0, peakR1: Float = 0
        var sumL0: Float = 0, sumR0: Float = 0, sumL1: Float = 0, sumR1: Float = 0
        let pairs = frames / 2
        for j in 0..<pairs {
            let i = 4 &* j
            let l0 = source[i] * left, r0 = source[i &+ 1] * right
            let l1 = source[i &+ 2] * left, r1 = source[i &+ 3] * right
            destination[i] += l0
            destination[i &+ 1] += r0
            destination[i &+ 2] += l1
            destination[i &+ 3] += r1
            peakL0 = larger(peakL0, magnitude(l0))
            peakR0 = larger(peakR0, magnitude(r0))
            peakL1 = larger(peakL1, magnitude(l1))
            peakR1 = larger(peakR1, magnitude(r1))
            sumL0 += l0 * l0
            sumR0 += r0 * r0
            sumL1 += l1 * l1
            sumR1 += r1 * r1
        }
        if frames % 2 == 1 {
            let i = 4 &* pairs
            let l0 = source[i] * left, r0 = source[i &+ 1] * right
            destination[i] += l0
            destination[i &+ 1] += r0
            peakL0 = larger(peakL0, magnitude(l0))
            peakR0 = larger(peakR0, magnitude(r0))
            sumL0 += l0 * l0
            sumR0 += r0 * r0
        }
        levels.peak = SIMD2(larger(levels.peak.x, larger(peakL0, peakL1)), larger(levels.peak.y, larger(peakR0, peakR1)))
        levels.sumSquares += SIMD2(sumL0 + sumL1, sumR0 + sumR1)
    }

    /// Multiplies `samples` samples of `buffer` by `gain`.
    @inline(__always)
    static func scale(_ buffer: UnsafeMutablePointer<Float>, samples: Int, by gain: Float) {
        for i in 0..<samples { buffer[i] *= gain }
    }

    /// Whether any of `samples` samples of `buffer` has a magnitude above `threshold`.
    /// Stops at the first that does: playing audio is found in its first few samples.
    @inline(__always)
    static func anyAbove(_ threshold: Float, in buffer: UnsafePointer<Float>, samples: Int) -> Bool {
        for i in 0..<samples where magnitude(buffer[i]) > threshold { return true }
        return false
    }

    /// Converts `samples` samples to 16-bit: clipped to -1...1, times 32767, rounded to
    /// the nearest (ties to even), as PulseAudio converts Float32 for a 16-bit sink
    /// (`lrintf` of the clamped sample times 0x7FFF). NaN gives 0. Without a conversion
    /// that could trap: the rounding is the one adding 1.5 × 2²³ does, whose low 16 bits are
    /// then the sample.
    @inline(__always)
    static func convertToInt16(_ source: UnsafePointer<Float>, _ destination: UnsafeMutablePointer<Int16>, samples: Int) {
        for i in 0..<samples {
            let v = source[i]
            let clipped: Float = v > 1 ? 1 : (v < -1 ? -1 : v)
            destination[i] = Int16(truncatingIfNeeded: (clipped * 32767 + 12_582_912).bitPattern)
        }
    }

    /// Converts `samples` 16-bit samples to Float32 in -1..<1 (divided by 32768, as
    /// libsndfile's normalized float read does).
    @inline(__always)
    static func convertFromInt16(_ source: UnsafePointer<Int16>, _ destination: UnsafeMutablePointer<Float>, samples: Int) {
        let scale: Float = 1.0 / 32768
        for i in 0..<samples { destination[i] = Float(source[i]) * scale }
    }

    /// The larger of two magnitudes, by a compare and a select.
    @inline(__always)
    private static func larger(_ a: Float, _ b: Float) -> Float { b > a ? b : a }

    /// `value` without its sign (the sign bit cleared).
    @inline(__always)
    private static func magnitude(_ value: Float) -> Float { Float(bitPattern: value.bitPattern & 0x7FFF_FFFF) }
}
