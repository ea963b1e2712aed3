@testable import AudioEngine
import Testing
import TestSupport

/// The render path's vector loops against the frame-by-frame loops they replace, on seeded
/// random audio of every length around the four-sample step (the scalar tails).
@Suite struct MixKernelsTests {
    /// Seeded random samples in -1...1, with `count` samples.
    private static func samples(_ count: Int, seed: UInt64) -> [Float] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in Float.random(in: -1...1, using: &random) }
    }

    @Test("adding with left and right gains is what frame-by-frame adding gives", arguments: [1, 2, 3, 4, 5, 7, 8, 9, 1024, 1027])
    func add(frames: Int) {
        let source = Self.samples(frames * 2, seed: UInt64(frames))
        let start = Self.samples(frames * 2, seed: UInt64(frames) + 1000)
        let gains = SIMD2<Float>(0.7, 0.25)
        var expected = start
        for i in 0..<frames * 2 { expected[i] += source[i] * gains[i % 2] }
        var mixed = start
        source.withUnsafeBufferPointer { s in
            mixed.withUnsafeMutableBufferPointer { m in
                MixKernels.add(s.baseAddress!, to: m.baseAddress!, frames: frames, gains: gains)
            }
        }
        #expect(mixed == expected)
    }

    @Test("adding while measuring adds the same and measures each channel's peak and sum of squares", arguments: [1, 2, 3, 5, 8, 1023])
    func addMeasuring(frames: Int) {
        let source = Self.samples(frames * 2, seed: UInt64(frames) + 7)
        let gains = SIMD2<Float>(0.5, 0.9)
        var expected = [Float](repeating: 0.125, count: frames * 2)
        var peak = SIMD2<Float>(0.01, 0.01), squares = SIMD2<Float>(2, 3)  // carried over from an earlier part
        let earlier = MixKernels.Levels(peak: peak, sumSquares: squares)
        for i in 0..<frames * 2 {
            let added = source[i] * gains[i % 2]
            expected[i] += added
            peak[i % 2] = max(peak[i % 2], abs(added))
            squares[i % 2] += added * added
        }
        var mixed = [Float](repeating: 0.125, count: frames * 2)
        var levels = earlier
        source.withUnsafeBufferPointer { s in
            mixed.withUnsafeMutableBufferPointer { m in
                MixKernels.addMeasuring(s.baseAddress!, to: m.baseAddress!, frames: frames, gains: gains, levels: &levels)
            }
        }
        #expect(mixed == expected)
        #expect(levels.peak == peak)
        // Summed in four lanes, not in order: equal within rounding.
        for channel in 0..<2 {
            #expect(abs(levels.sumSquares[channel] - squares[channel]) <= squares[channel] * 1e-5, "channel \(channel)")
        }
    }

    @Test("scaling multiplies every sample", arguments: [1, 3, 4, 6, 4097])
    func scale(samples: Int) {
        let original = Self.samples(samples, seed: 99)
        var scaled = original
        scaled.withUnsafeMutableBufferPointer { MixKernels.scale($0.baseAddress!, samples: samples, by: 0.3) }
        #expect(scaled == original.map { $0 * 0.3 })
    }

    @Test("a sample above the threshold is found wherever it is, of either sign; none is found in quiet audio")
    func anyAbove() {
        for count in [1, 4, 5, 9, 64] {
            for position in 0..<count {
                for value: Float in [2e-4, -2e-4] {
                    var buffer = [Float](repeating: 5e-5, count: count)
                    buffer[position] = value
                    #expect(buffer.withUnsafeBufferPointer { MixKernels.anyAbove(1e-4, in: $0.baseAddress!, samples: count) },
                            "\(value) at \(position) of \(count)")
                }
            }
            let quiet = [Float](repeating: -1e-4, count: count)  // at the threshold: not above it
            #expect(!quiet.withUnsafeBufferPointer { MixKernels.anyAbove(1e-4, in: $0.baseAddress!, samples: count) })
        }
    }
}

extension MixKernelsTests {
    @Test("converting to 16 bits clips, scales by 32767 and rounds to the nearest as lrintf does; NaN gives 0", arguments: [1, 4, 7, 1026])
    func convertToInt16(samples: Int) {
        var source = Self.samples(samples, seed: UInt64(samples) + 3).map { $0 * 1.5 }  // some beyond ±1
        let edges: [Float] = [1, -1, 1.0001, -7, 0, -0.0, .nan, .infinity, -.infinity, 0.5 / 32767, 1.5 / 32767, -2.5 / 32767]
        for (i, edge) in edges.enumerated() where i < samples { source[i] = edge }
        var converted = [Int16](repeating: 99, count: samples)
        source.withUnsafeBufferPointer { s in
            converted.withUnsafeMutableBufferPointer { MixKernels.convertToInt16(s.baseAddress!, $0.baseAddress!, samples: samples) }
        }
        let expected = source.map { v -> Int16 in
            guard !v.isNaN else { return 0 }
            return Int16((min(max(v, -1), 1) * 32767).rounded(.toNearestOrEven))
        }
        #expect(converted == expected)
    }
}

extension MixKernelsTests {
    @Test("converting from 16 bits divides by 32768, as libsndfile's normalized float read does", arguments: [1, 4, 7, 1026])
    func convertFromInt16(samples: Int) {
        var random = SplitMix64(seed: UInt64(samples) + 11)
        var source = (0..<samples).map { _ in Int16.random(in: .min ... .max, using: &random) }
        for (i, edge) in [Int16.min, .max, 0, -1, 1].enumerated() where i < samples { source[i] = edge }
        var converted = [Float](repeating: 99, count: samples)
        source.withUnsafeBufferPointer { s in
            converted.withUnsafeMutableBufferPointer { MixKernels.convertFromInt16(s.baseAddress!, $0.baseAddress!, samples: samples) }
        }
        #expect(converted == source.map { Float($0) / 32768 })
        if samples >= 2 { #expect(converted[0] == -1 && converted[1] == 32767 / 32768) }
    }
}
