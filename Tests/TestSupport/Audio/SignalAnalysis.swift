import Foundation

/// Interleaved audio, as recorded by `Capture` or made by `TestSignals`, with the
/// measurements audio tests need. Times are seconds from the first frame; ranges are
/// half-open (`0.2..<0.8`), clamped to the audio, and `nil` means all of it.
///
/// Levels are dBFS relative to a sample value of 1.0: `peakDBFS` is the largest absolute
/// sample, `rmsDBFS` the plain RMS (a full-scale sine is −3.01 dBFS RMS), and
/// `sineLevelDBFS` the RMS + 3.01 dB (the AES17 convention: a sine's level equals its peak).
/// Exact silence is `-infinity`. Where a `channel` is optional, `nil` means the loudest
/// channel (levels) or any channel (activity).
public struct CapturedAudio: Sendable {
    /// Interleaved samples.
    public var samples: [Float]
    public let sampleRate: Int
    public let channels: Int
    /// For a capture: about when its first frame was played (later than the truth by at
    /// most the monitor's delivery delay, about 10–20 ms), so that a test can relate its
    /// own actions to times in the audio (`time(of:)`).
    public var origin: ContinuousClock.Instant?
    /// For a capture: seconds from launching `parec` until its first samples arrived.
    public var startupLag: Double?
    /// For a capture: the cycles the server's graph missed while it ran (PipeWire's "client
    /// too slow!"; see ``gapsAreGraphXruns(_:)``).
    public var graphXruns = 0

    public init(
        samples: [Float], sampleRate: Int, channels: Int, origin: ContinuousClock.Instant? = nil,
        startupLag: Double? = nil
    ) {
        precondition(channels > 0 && sampleRate > 0)
        self.samples = samples
        self.sampleRate = sampleRate
        self.channels = channels
        self.origin = origin
        self.startupLag = startupLag
    }

    public var frameCount: Int { samples.count / channels }
    public var duration: Double { Double(frameCount) / Double(sampleRate) }

    /// The time in this audio of an instant (for example when the test called `play()`).
    public func time(of instant: ContinuousClock.Instant) -> Double? {
        origin.map { seconds(instant - $0) }
    }

    /// One channel's samples.
    public func channel(_ channel: Int, range: Range<Double>? = nil) -> [Float] {
        let frames = frameRange(range)
        return samples.withUnsafeBufferPointer { p in
            frames.map { p[$0 * channels + channel] }
        }
    }

    /// The frames a time range covers.
    public func frameRange(_ range: Range<Double>?) -> Range<Int> {
        guard let range else { return 0..<frameCount }
        let rate = Double(sampleRate)
        let lower = min(frameCount, max(0, Int((range.lowerBound * rate).rounded())))
        let upper = min(frameCount, max(lower, Int((range.upperBound * rate).rounded())))
        return lower..<upper
    }
}

/// A stretch of sound between silences.
public struct AudioRegion: Sendable, Equatable, CustomStringConvertible {
    public let start: Double
    public let end: Double
    public var duration: Double { end - start }
    public init(start: Double, end: Double) {
        self.start = start
        self.end = end
    }
    public var description: String {
        String(format: "%.3f–%.3f s", start, end)
    }

    /// The region without `head` seconds at its start and `tail` at its end, to measure
    /// away from the onset and the release.
    ///
    /// - Throws: when the region is too short for that: a sound cut short is a failed
    ///   expectation, not a crash that takes the rest of the test run with it.
    public func inner(head: Double, tail: Double) throws -> Range<Double> {
        guard duration > head + tail else {
            throw TestFailure("the region \(self) is too short to measure inside (\(head) s + \(tail) s trimmed)")
        }
        return (start + head)..<(end - tail)
    }

    public func inner(trimming margin: Double) throws -> Range<Double> { try inner(head: margin, tail: margin) }
}

extension Array where Element == AudioRegion {
    /// The silences between consecutive regions, in seconds.
    public var gaps: [Double] { zip(self, dropFirst()).map { $1.start - $0.end } }
    /// The total sounding time.
    public var totalDuration: Double { reduce(0) { $0 + $1.duration } }
}

/// One window of a `frequencyTrack`.
public struct FrequencyPoint: Sendable, CustomStringConvertible {
    public let start: Double
    public let end: Double
    /// The window's middle.
    public var time: Double { (start + end) / 2 }
    /// The dominant frequency; `nil` where the window is quieter than the threshold.
    public let frequency: Double?
    public let rmsDBFS: Double
    public var description: String {
        let f = frequency.map { String(format: "%.1f Hz", $0) } ?? "silent"
        return String(format: "%.3f s: ", time) + f
    }
}

public enum SignalAnalysis {
    /// 20·log10(amplitude); `-infinity` for 0.
    public static func dBFS(_ amplitude: Double) -> Double {
        amplitude > 0 ? 20 * log10(amplitude) : -.infinity
    }

    /// The linear amplitude of a dBFS value.
    public static func amplitude(dBFS: Double) -> Double { pow(10, dBFS / 20) }

    /// The frequency of the strongest spectral peak, or `nil` for silence.
    ///
    /// A Hann-windowed FFT zero-padded to at least twice the window, with Gaussian
    /// (log-parabolic) interpolation between bins. Measured (`HarnessTests`) on seven
    /// sines from 50 Hz to 15 kHz with −66 dBFS noise: error ≤ 0.001 Hz over 1 s and
    /// ≤ 0.01 Hz over 100 ms windows; a 1 kHz 16-bit file played by aplay and recorded
    /// from the monitor reads 999.9995 Hz. Tones closer than about 2/T Hz (T: the window's
    /// length in seconds, so 20 Hz for 100 ms) merge into one peak.
    /// Up to 65 536 samples (1.37 s at 48 kHz) are analysed as one window; longer input is
    /// averaged over up to 8 such windows spread evenly across it (Welch).
    public static func dominantFrequency(of samples: [Float], sampleRate: Int) -> Double? {
        var cache = SpectrumCache()
        return samples.withUnsafeBufferPointer { p in
            dominantFrequency(p, stride: 1, offset: 0, frames: 0..<samples.count, sampleRate: sampleRate, cache: &cache)
        }
    }

    static func dominantFrequency(
        _ p: UnsafeBufferPointer<Float>, stride: Int, offset: Int, frames: Range<Int>, sampleRate: Int,
        cache: inout SpectrumCache
    ) -> Double? {
        let count = frames.count
        guard count >= 32 else { return nil }
        let segment = min(count, 65536)
        var n = 1
        while n < segment { n *= 2 }
        n *= 2
        let starts: [Int]
        if count == segment {
            starts = [frames.lowerBound]
        } else {
            let possible = (count - segment) / (segment / 2) + 1
            let used = max(2, min(possible, 8))
            starts = (0..<used).map { frames.lowerBound + (count - segment) * $0 / (used - 1) }
        }
        let fft = cache.fft(size: n)
        let window = cache.hann(length: segment)
        var power = [Double](repeating: 0, count: n / 2 + 1)
        var re = [Double](repeating: 0, count: n)
        var im = [Double](repeating: 0, count: n)
        var loudest = 0.0
        for start in starts {
            var mean = 0.0
            for f in start..<(start + segment) { mean += Double(p[f * stride + offset]) }
            mean /= Double(segment)
            re.withUnsafeMutableBufferPointer { r in
                window.withUnsafeBufferPointer { w in
                    for i in 0..<segment {
                        let x = Double(p[(start + i) * stride + offset]) - mean
                        loudest = max(loudest, abs(x))
                        r[i] = x * w[i]
                    }
                    for i in segment..<n { r[i] = 0 }
                }
            }
            im.withUnsafeMutableBufferPointer { i in
                for k in 0..<n { i[k] = 0 }
            }
            fft.transform(&re, &im)
            power.withUnsafeMutableBufferPointer { pw in
                for k in 0...(n / 2) { pw[k] += re[k] * re[k] + im[k] * im[k] }
            }
        }
        guard loudest > 1e-7 else { return nil }
        var peak = 2
        for k in 2..<(n / 2) where power[k] > power[peak] { peak = k }
        let a = log(max(power[peak - 1], 1e-300))
        let b = log(max(power[peak], 1e-300))
        let c = log(max(power[peak + 1], 1e-300))
        let curvature = a - 2 * b + c
        let delta = curvature < 0 ? max(-0.5, min(0.5, 0.5 * (a - c) / curvature)) : 0
        return (Double(peak) + delta) * Double(sampleRate) / Double(n)
    }
}

/// FFTs and windows by size, reused across the windows of one analysis.
struct SpectrumCache {
    private var ffts: [Int: FFT] = [:]
    private var windows: [Int: [Double]] = [:]

    mutating func fft(size: Int) -> FFT {
        if let fft = ffts[size] { return fft }
        let fft = FFT(size: size)
        ffts[size] = fft
        return fft
    }

    mutating func hann(length: Int) -> [Double] {
        if let window = windows[length] { return window }
        let window = (0..<length).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(length)) }
        windows[length] = window
        return window
    }
}

/// An in-place iterative radix-2 complex FFT (forward; only magnitudes are used).
struct FFT {
    let size: Int
    private let cosines: [Double]
    private let sines: [Double]
    private let reversed: [Int]

    init(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0, "FFT size must be a power of two")
        self.size = size
        let half = size / 2
        cosines = (0..<half).map { cos(2 * Double.pi * Double($0) / Double(size)) }
        sines = (0..<half).map { -sin(2 * Double.pi * Double($0) / Double(size)) }
        var bits = 0
        while 1 << bits < size { bits += 1 }
        reversed = (0..<size).map { i in
            var r = 0
            for b in 0..<bits where i & (1 << b) != 0 { r |= 1 << (bits - 1 - b) }
            return r
        }
    }

    func transform(_ re: inout [Double], _ im: inout [Double]) {
        let n = size
        re.withUnsafeMutableBufferPointer { r in
            im.withUnsafeMutableBufferPointer { i in
                reversed.withUnsafeBufferPointer { rev in
                    for a in 0..<n {
                        let b = rev[a]
                        if a < b {
                            r.swapAt(a, b)
                            i.swapAt(a, b)
                        }
                    }
                }
                cosines.withUnsafeBufferPointer { cs in
                    sines.withUnsafeBufferPointer { sn in
                        var length = 2
                        while length <= n {
                            let half = length / 2
                            let step = n / length
                            var start = 0
                            while start < n {
                                var k = 0
                                for j in start..<(start + half) {
                                    let wr = cs[k]
                                    let wi = sn[k]
                                    let l = j + half
                                    let tr = wr * r[l] - wi * i[l]
                                    let ti = wr * i[l] + wi * r[l]
                                    r[l] = r[j] - tr
                                    i[l] = i[j] - ti
                                    r[j] += tr
                                    i[j] += ti
                                    k += step
                                }
                                start += length
                            }
                            length *= 2
                        }
                    }
                }
            }
        }
    }
}

extension CapturedAudio {
    /// The RMS level in dBFS of a channel (`nil`: the loudest channel).
    public func rmsDBFS(channel: Int? = nil, range: Range<Double>? = nil) -> Double {
        let frames = frameRange(range)
        guard !frames.isEmpty else { return -.infinity }
        return channelList(channel).map { c in
            samples.withUnsafeBufferPointer { p in
                var sum = 0.0
                for f in frames {
                    let x = Double(p[f * channels + c])
                    sum += x * x
                }
                return SignalAnalysis.dBFS((sum / Double(frames.count)).squareRoot())
            }
        }.max()!
    }

    /// The peak level in dBFS: the largest absolute sample.
    public func peakDBFS(channel: Int? = nil, range: Range<Double>? = nil) -> Double {
        let frames = frameRange(range)
        return channelList(channel).map { c in
            samples.withUnsafeBufferPointer { p in
                var peak: Float = 0
                for f in frames { peak = max(peak, abs(p[f * channels + c])) }
                return SignalAnalysis.dBFS(Double(peak))
            }
        }.max() ?? -.infinity
    }

    /// The level of a sine as its peak in dBFS, from the RMS (RMS + 3.01 dB).
    public func sineLevelDBFS(channel: Int? = nil, range: Range<Double>? = nil) -> Double {
        rmsDBFS(channel: channel, range: range) + 10 * log10(2.0)
    }

    /// Whether every sample in the range is quieter than `threshold` dBFS.
    public func isSilent(range: Range<Double>? = nil, threshold: Double = -60) -> Bool {
        peakDBFS(range: range) < threshold
    }

    /// The dominant frequency of a channel over a range (see
    /// `SignalAnalysis.dominantFrequency(of:sampleRate:)` for the method and its accuracy),
    /// or `nil` for silence.
    public func dominantFrequency(channel: Int = 0, range: Range<Double>? = nil) -> Double? {
        var cache = SpectrumCache()
        return samples.withUnsafeBufferPointer { p in
            SignalAnalysis.dominantFrequency(
                p, stride: channels, offset: channel, frames: frameRange(range), sampleRate: sampleRate, cache: &cache)
        }
    }

    /// The dominant frequency in consecutive windows of `window` seconds, every `hop`
    /// seconds (default: `window`), for stepped tones and sweeps: where a seek landed,
    /// whether playback repeated or skipped. Windows quieter than `threshold` dBFS RMS get
    /// `nil`. A window straddling a step shows the stronger side's frequency.
    public func frequencyTrack(
        window: Double = 0.1, hop: Double? = nil, channel: Int = 0, range: Range<Double>? = nil,
        threshold: Double = -50
    ) -> [FrequencyPoint] {
        let frames = frameRange(range)
        let rate = Double(sampleRate)
        let length = max(32, Int((window * rate).rounded()))
        let step = max(1, Int(((hop ?? window) * rate).rounded()))
        var cache = SpectrumCache()
        var points: [FrequencyPoint] = []
        var start = frames.lowerBound
        while start + length <= frames.upperBound {
            let span = start..<(start + length)
            let time = Double(start) / rate..<Double(start + length) / rate
            let level = rmsDBFS(channel: channel, range: time)
            let frequency =
                level < threshold
                ? nil
                : samples.withUnsafeBufferPointer { p in
                    SignalAnalysis.dominantFrequency(
                        p, stride: channels, offset: channel, frames: span, sampleRate: sampleRate, cache: &cache)
                }
            points.append(FrequencyPoint(start: time.lowerBound, end: time.upperBound, frequency: frequency, rmsDBFS: level))
            start += step
        }
        return points
    }

    /// The stretches of sound: windows of `window` seconds (5 ms) whose RMS reaches
    /// `threshold` dBFS, joined across silences shorter than `minGap` seconds, without
    /// regions shorter than `minDuration`. Each region's ends are then refined to the first
    /// and last sample whose magnitude reaches the threshold, so durations and gaps are
    /// exact to a sample for tones (a sine at −6 dBFS crosses −50 dBFS within its first
    /// sample or two).
    public func activeRegions(
        threshold: Double = -50, minGap: Double = 0.02, minDuration: Double = 0, channel: Int? = nil,
        range: Range<Double>? = nil, window: Double = 0.005
    ) -> [AudioRegion] {
        let frames = frameRange(range)
        guard !frames.isEmpty else { return [] }
        let rate = Double(sampleRate)
        let length = max(1, Int((window * rate).rounded()))
        let amplitude = Float(SignalAnalysis.amplitude(dBFS: threshold))
        let power = Double(amplitude) * Double(amplitude)
        let list = channelList(channel)
        let windowCount = (frames.count + length - 1) / length
        return samples.withUnsafeBufferPointer { p -> [AudioRegion] in
            func windowFrames(_ w: Int) -> Range<Int> {
                let lower = frames.lowerBound + w * length
                return lower..<min(lower + length, frames.upperBound)
            }
            func loud(_ f: Int) -> Bool {
                for c in list where abs(p[f * channels + c]) >= amplitude { return true }
                return false
            }
            // Active windows, as runs [first, last].
            var runs: [(first: Int, last: Int)] = []
            for w in 0..<windowCount {
                let span = windowFrames(w)
                var active = false
                for c in list {
                    var sum = 0.0
                    for f in span {
                        let x = Double(p[f * channels + c])
                        sum += x * x
                    }
                    if sum / Double(span.count) >= power {
                        active = true
                        break
                    }
                }
                guard active else { continue }
                if let last = runs.last, last.last == w - 1 {
                    runs[runs.count - 1].last = w
                } else {
                    runs.append((w, w))
                }
            }
            // Refine each run's ends to samples.
            var regions: [AudioRegion] = []
            for run in runs {
                let searchStart = windowFrames(max(0, run.first - 1)).lowerBound
                let searchEnd = windowFrames(min(windowCount - 1, run.last + 1)).upperBound
                var first = windowFrames(run.first).lowerBound
                for f in searchStart..<searchEnd where loud(f) {
                    first = f
                    break
                }
                var last = windowFrames(run.last).upperBound - 1
                for f in stride(from: searchEnd - 1, through: first, by: -1) where loud(f) {
                    last = f
                    break
                }
                let region = AudioRegion(start: Double(first) / rate, end: Double(last + 1) / rate)
                if let previous = regions.last, region.start - previous.end < minGap {
                    regions[regions.count - 1] = AudioRegion(start: previous.start, end: max(previous.end, region.end))
                } else {
                    regions.append(region)
                }
            }
            return regions.filter { $0.duration >= minDuration }
        }
    }

    /// The time of the first sound at or after `after` seconds (the start of the first
    /// active region there), or `nil` if there is none.
    public func onset(after: Double = 0, threshold: Double = -50, channel: Int? = nil) -> Double? {
        activeRegions(threshold: threshold, minGap: 0, channel: channel, range: after..<max(after, duration)).first?.start
    }

    private func channelList(_ channel: Int?) -> [Int] {
        if let channel {
            precondition(channel >= 0 && channel < channels, "no channel \(channel)")
            return [channel]
        }
        return Array(0..<channels)
    }
}

extension CapturedAudio {
    /// Whether every gap between `regions` is one the sound server made, not the player: the
    /// server's graph missed as many cycles while the capture ran (``graphXruns``), and no
    /// gap is longer than `maximumGap`, two cycles of the largest quantum the harness's
    /// streams run at (1024 frames at 48 kHz).
    ///
    /// On the CI machine (2 cores, a kernel built without preemption) PipeWire's real-time
    /// threads are sometimes woken late: the graph misses a 5–11 ms cycle, and the sink
    /// plays silence in place of what a stream gave it, content lost, the timeline kept. A
    /// player cannot prevent that, and it is not a gap of the player's. A gap that the log
    /// does not account for, or longer than that, is.
    public func gapsAreGraphXruns(_ regions: [AudioRegion], maximumGap: Double = 0.045) -> Bool {
        let gaps = regions.gaps
        return !gaps.isEmpty && gaps.count <= graphXruns && gaps.allSatisfy { $0 <= maximumGap }
    }

    /// The most a sound's span in the capture can lose at its ends to the server's missed
    /// graph cycles (``graphXruns``): a cycle of the largest quantum the harness's streams run
    /// at (1024 frames at 48 kHz) each. A missed cycle at a sound's first or last frames is
    /// silence in their place, as one in its middle is a gap (see ``gapsAreGraphXruns(_:maximumGap:)``),
    /// but no gap shows it: the sound's region is shorter. 0 when the log counts none.
    public var graphXrunEdgeLoss: Double { Double(graphXruns) * 1024 / 48_000 }
}
