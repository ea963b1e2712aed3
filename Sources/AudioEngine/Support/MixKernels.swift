/// The render path's loops over interleaved stereo samples, written four samples (two
/// frames) at a time with `SIMD4<Float>`.
///
/// The compiler does not vectorize these on its own: a running maximum (`Swift.max`, which
/// orders NaN) and a running sum of squares (which it may not reorder without fast-math)
/// keep a per-sample loop scalar, and a branch per frame for a gain ramp or metering keeps
/// the rest scalar too. Here the constant-gain case has no branch per frame, the maximum is
/// `pointwiseMax` and the sums are kept in four lanes. Each takes and returns plain values:
/// no allocation, no lock, no atomic, safe on the render thread.
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
        let g = SIMD4(lowHalf: gains, highHalf: gains)
        let samples = frames * 2
        var i = 0
        while i + 8 <= samples {
            let a = load(source + i), b = load(source + i + 4)
            store(load(destination + i) + a * g, destination + i)
            store(load(destination + i + 4) + b * g, destination + i + 4)
            i += 8
        }
        while i < samples {
            destination[i] += source[i] * gains[i & 1]
            i += 1
        }
    }

    /// ``add(_:to:frames:gains:)``, also measuring what it added (the source times the
    /// gains) into `levels`.
    @inline(__always)
    static func addMeasuring(_ source: UnsafePointer<Float>, to destination: UnsafeMutablePointer<Float>,
                             frames: Int, gains: SIMD2<Float>, levels: inout Levels) {
        let g = SIMD4(lowHalf: gains, highHalf: gains)
        let samples = frames * 2
        var peak = SIMD4<Float>.zero, squares = SIMD4<Float>.zero
        var i = 0
        while i + 4 <= samples {
            let added = load(source + i) * g
            store(load(destination + i) + added, destination + i)
            peak = maximum(peak, magnitude(added))
            squares += added * added
            i += 4
        }
        var tail = (peak: SIMD2<Float>.zero, squares: SIMD2<Float>.zero)
        while i < samples {
            let added = source[i] * gains[i & 1]
            destination[i] += added
            tail.peak[i & 1] = max(tail.peak[i & 1], abs(added))
            tail.squares[i & 1] += added * added
            i += 1
        }
        let lanes = (peak: maximum(peak.lowHalf, peak.highHalf), squares: squares.lowHalf + squares.highHalf)
        levels.peak = maximum(levels.peak, maximum(lanes.peak, tail.peak))
        levels.sumSquares += lanes.squares + tail.squares
    }

    /// Multiplies `samples` samples of `buffer` by `gain`.
    @inline(__always)
    static func scale(_ buffer: UnsafeMutablePointer<Float>, samples: Int, by gain: Float) {
        let g = SIMD4(repeating: gain)
        var i = 0
        while i + 4 <= samples {
            store(load(buffer + i) * g, buffer + i)
            i += 4
        }
        while i < samples {
            buffer[i] *= gain
            i += 1
        }
    }

    /// Whether any of `samples` samples of `buffer` has a magnitude above `threshold`.
    /// Stops at the first that does: playing audio is found in its first few samples.
    @inline(__always)
    static func anyAbove(_ threshold: Float, in buffer: UnsafePointer<Float>, samples: Int) -> Bool {
        let t = SIMD4(repeating: threshold)
        var i = 0
        while i + 4 <= samples {
            if any(magnitude(load(buffer + i)) .> t) { return true }
            i += 4
        }
        while i < samples {
            if abs(buffer[i]) > threshold { return true }
            i += 1
        }
        return false
    }

    /// Converts `samples` samples to 16-bit: clipped to -1...1, times 32767, rounded to
    /// the nearest (ties to even), as PulseAudio converts Float32 for a 16-bit sink
    /// (`lrintf` of the clamped sample times 0x7FFF). NaN gives 0. Without a conversion
    /// that could trap: the rounding is the one adding 1.5 × 2²³ does, whose low 16 bits are
    /// then the sample.
    @inline(__always)
    static func convertToInt16(_ source: UnsafePointer<Float>, _ destination: UnsafeMutablePointer<Int16>, samples: Int) {
        let magic = SIMD4<Float>(repeating: 12_582_912), scale = SIMD4<Float>(repeating: 32767)
        let one = SIMD4<Float>(repeating: 1), minusOne = SIMD4<Float>(repeating: -1)
        var i = 0
        while i + 4 <= samples {
            var v = load(source + i)
            v.replace(with: one, where: v .> one)
            v.replace(with: minusOne, where: v .< minusOne)
            let bits = SIMD4<UInt32>(bitPattern: v * scale + magic)
            UnsafeMutableRawPointer(destination + i).storeBytes(of: SIMD4<Int16>(truncatingIfNeeded: bits), as: SIMD4<Int16>.self)
            i += 4
        }
        while i < samples {
            let v = source[i]
            let clipped: Float = v > 1 ? 1 : (v < -1 ? -1 : v)
            destination[i] = Int16(truncatingIfNeeded: (clipped * 32767 + 12_582_912).bitPattern)
            i += 1
        }
    }

    @inline(__always)
    private static func load(_ pointer: UnsafePointer<Float>) -> SIMD4<Float> {
        UnsafeRawPointer(pointer).loadUnaligned(as: SIMD4<Float>.self)
    }

    @inline(__always)
    private static func load(_ pointer: UnsafeMutablePointer<Float>) -> SIMD4<Float> {
        UnsafeRawPointer(pointer).loadUnaligned(as: SIMD4<Float>.self)
    }

    @inline(__always)
    private static func store(_ value: SIMD4<Float>, _ pointer: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: value, as: SIMD4<Float>.self)
    }

    /// The larger of each pair of lanes, by a compare and a blend (the standard library's
    /// `pointwiseMax` goes lane by lane through `Float.maximum`, which orders NaN).
    @inline(__always)
    private static func maximum<V: SIMD>(_ a: V, _ b: V) -> V where V.Scalar == Float {
        a.replacing(with: b, where: b .> a)
    }

    /// The lanes' magnitudes (the sign bit cleared).
    @inline(__always)
    private static func magnitude(_ v: SIMD4<Float>) -> SIMD4<Float> {
        SIMD4<Float>(bitPattern: SIMD4<UInt32>(bitPattern: v) & 0x7FFF_FFFF)
    }
}

private extension SIMD4 where Scalar == Float {
    @inline(__always)
    init(bitPattern: SIMD4<UInt32>) {
        self = unsafeBitCast(bitPattern, to: SIMD4<Float>.self)
    }
}

private extension SIMD4 where Scalar == UInt32 {
    @inline(__always)
    init(bitPattern: SIMD4<Float>) {
        self = unsafeBitCast(bitPattern, to: SIMD4<UInt32>.self)
    }
}
