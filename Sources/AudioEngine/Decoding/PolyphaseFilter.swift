#if canImport(Glibc)
import Glibc
#endif

/// Sample-rate conversion by a rational ratio `up/down` (44100 → 48000 is 160/147) with a
/// Kaiser-windowed sinc split into `up` phases, one precomputed row of taps per phase: each
/// output frame is one dot product of `taps` input frames with its phase's row.
///
/// What speexdsp does for such ratios is interpolate between four filter rows per output
/// sample (its direct table only fits ratios with a small denominator), four times the
/// multiply-adds of a row of the same length; resampling was two thirds of the CPU of 32
/// players of 44.1 kHz FLAC (perf, bench/audio).
///
/// The output lines up with the input: output frame `n` is the input at time `n·down/up`
/// (no leading delay), and draining at the end gives `ceil(inputFrames·up/down)` frames.
/// Interleaved mono or stereo only (the reader always converts stereo).
///
/// Not thread-safe: its owner, ``SampleRateConverter``, lets one thread in at a time.
final class PolyphaseFilter {
    /// The filter's shape: its length (in frames at the lower of the two rates) and stopband.
    struct Design {
        /// Taps at the lower rate; downsampling widens them by the ratio.
        let taps: Int
        /// Stopband attenuation, dB (sets the Kaiser window's β and the transition width).
        let attenuation: Double
        /// Centre of the transition band, as a fraction of the lower rate (0.5 is its Nyquist).
        let cutoff: Double

        /// 48 taps, 90 dB: flat to about 0.40 of the lower rate (17.4 kHz at 44.1 kHz), at
        /// least 90 dB down from 0.515 of it (22.7 kHz), so that the images of everything
        /// below 21.4 kHz are gone.
        static let fast = Design(taps: 48, attenuation: 90, cutoff: 0.455)
        /// 96 taps, 100 dB: flat to about 0.44 of the lower rate (19.3 kHz at 44.1 kHz).
        static let medium = Design(taps: 96, attenuation: 100, cutoff: 0.47)
    }

    /// The most coefficients a filter may hold (1 MiB): beyond, the ratio's denominator is
    /// too large for a table and the caller uses another resampler.
    static let maximumCoefficients = 1 << 18

    let channels: Int
    let up: Int
    let down: Int
    /// Input frames each output frame reads.
    let taps: Int
    /// `up` rows of `taps × channels` coefficients, each repeated per channel so that a row
    /// multiplies interleaved frames element by element.
    private let table: UnsafeMutablePointer<Float>
    /// Input frames: `taps` of history before the new ones.
    private let buffer: UnsafeMutablePointer<Float>
    private let bufferCapacity: Int
    private var bufferFrames = 0
    /// The buffer's frame where the next output frame's first tap is.
    private var start = 0
    /// The next output frame's phase, `0..<up`.
    private var phase = 0
    private var inputFrames = 0
    private var outputFrames = 0

    /// A filter for `inputRate → outputRate`, or nil when the ratio's table would be larger
    /// than ``maximumCoefficients`` or `channels` is not 1 or 2.
    init?(channels: Int, inputRate: Int, outputRate: Int, design: Design) {
        guard channels == 1 || channels == 2, inputRate > 0, outputRate > 0 else { return nil }
        var (a, b) = (inputRate, outputRate)
        while b != 0 { (a, b) = (b, a % b) }
        up = outputRate / a
        down = inputRate / a
        let widening = max(1, Double(down) / Double(up))
        // A multiple of 8 frames, so that a row is whole 8-float vectors.
        taps = (Int((Double(design.taps) * widening).rounded(.up)) + 7) / 8 * 8
        guard up * taps * channels <= Self.maximumCoefficients else { return nil }
        self.channels = channels
        table = .allocate(capacity: up * taps * channels)
        // Room for the history and a block of new input, so that a block is taken in a few steps.
        bufferCapacity = taps + 2048
        buffer = .allocate(capacity: bufferCapacity * channels)
        buffer.initialize(repeating: 0, count: bufferCapacity * channels)
        fillTable(design: design, cutoff: design.cutoff * min(1, Double(up) / Double(down)))
        reset()
    }

    deinit {
        table.deallocate()
        buffer.deallocate()
    }

    /// Forgets the input held, for a new stream.
    func reset() {
        // The first output frame is the input at time 0: its first tap reads taps/2 - 1 frames
        // before the input starts, which are silence.
        bufferFrames = taps / 2 - 1
        buffer.update(repeating: 0, count: bufferFrames * channels)
        start = 0
        phase = 0
        inputFrames = 0
        outputFrames = 0
    }

    /// Converts up to `count` frames of `input` into `output` (room for `capacity` frames).
    /// With `drain` (no more input), pads silence to push out the last frames. Returns the
    /// input frames taken and the output frames made.
    func process(input: UnsafePointer<Float>, count: Int, output: UnsafeMutablePointer<Float>, capacity: Int,
                 drain: Bool) -> (consumed: Int, produced: Int) {
        var consumed = 0
        var produced = 0
        let target = drain ? (inputFrames * up + down - 1) / down : Int.max
        while true {
            produced += emit(into: output + produced * channels, capacity: min(capacity - produced, target - outputFrames))
            if produced == capacity || outputFrames >= target { break }
            compact()
            let room = bufferCapacity - bufferFrames
            if consumed < count {
                let n = min(room, count - consumed)
                (buffer + bufferFrames * channels).update(from: input + consumed * channels, count: n * channels)
                bufferFrames += n
                consumed += n
                inputFrames += n
            } else if drain {
                (buffer + bufferFrames * channels).update(repeating: 0, count: room * channels)
                bufferFrames += room
            } else {
                break
            }
        }
        return (consumed, produced)
    }

    /// Makes the output frames whose taps are all in the buffer, at most `capacity`.
    private func emit(into output: UnsafeMutablePointer<Float>, capacity: Int) -> Int {
        var made = 0
        let rowLength = taps * channels
        while made < capacity, start + taps <= bufferFrames {
            let row = UnsafeRawPointer(table + phase * rowLength)
            let frames = UnsafeRawPointer(buffer + start * channels)
            var sum = SIMD8<Float>(repeating: 0)
            var offset = 0
            while offset < rowLength * MemoryLayout<Float>.stride {
                sum += row.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
                    * frames.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
                offset += MemoryLayout<SIMD8<Float>>.stride
            }
            if channels == 2 {
                output[made * 2] = sum[0] + sum[2] + sum[4] + sum[6]
                output[made * 2 + 1] = sum[1] + sum[3] + sum[5] + sum[7]
            } else {
                output[made] = sum.sum()
            }
            made += 1
            phase += down
            start += phase / up
            phase %= up
        }
        outputFrames += made
        return made
    }

    /// Moves the frames still needed to the front of the buffer.
    private func compact() {
        guard start > 0 else { return }
        let keep = bufferFrames - start
        if keep > 0 { buffer.update(from: buffer + start * channels, count: keep * channels) }
        bufferFrames = keep
        start = 0
    }

    /// Row `p` holds the taps for the output time `p/up` of an input frame past the first
    /// tap's centre: tap `k` sits `k - taps/2 + 1 - p/up` input frames from it.
    private func fillTable(design: Design, cutoff: Double) {
        let half = Double(taps / 2)
        let beta = design.attenuation > 50 ? 0.1102 * (design.attenuation - 8.7)
            : 0.5842 * pow(design.attenuation - 21, 0.4) + 0.07886 * (design.attenuation - 21)
        let norm = Self.besselI0(beta)
        var row = [Double](repeating: 0, count: taps)
        for p in 0..<up {
            for k in 0..<taps {
                let distance = Double(k - taps / 2 + 1) - Double(p) / Double(up)
                let x = distance / half
                let window = abs(x) >= 1 ? 0 : Self.besselI0(beta * (1 - x * x).squareRoot()) / norm
                let argument = 2 * cutoff * distance
                let sinc = argument == 0 ? 1 : sin(Double.pi * argument) / (Double.pi * argument)
                row[k] = 2 * cutoff * sinc * window
            }
            // Unit gain at 0 Hz in every phase, so that no phase is louder than another.
            let total = row.reduce(0, +)
            for k in 0..<taps {
                let value = Float(row[k] / total)
                for c in 0..<channels { table[(p * taps + k) * channels + c] = value }
            }
        }
    }

    /// The modified Bessel function of the first kind, order 0 (its power series).
    private static func besselI0(_ x: Double) -> Double {
        var sum = 1.0
        var term = 1.0
        var k = 1.0
        while term > sum * 1e-12 {
            term *= (x / (2 * k)) * (x / (2 * k))
            sum += term
            k += 1
        }
        return sum
    }
}
