import Foundation

/// Test signals written as WAV files (16-bit PCM or 32-bit float, any rate and channel
/// count) into a temporary folder of this test process, removed when it exits.
///
/// Levels are the peak of each tone in dBFS (−6 dBFS: amplitude 0.501). Tones keep their
/// phase across consecutive tone segments (no clicks at steps) and start at phase 0 after
/// silence.
public enum TestSignals {
    public enum SampleFormat: Sendable {
        /// 16-bit signed PCM (format tag 1).
        case int16
        /// 32-bit IEEE float (format tag 3, with a `fact` chunk).
        case float32
    }

    /// A piece of a signal.
    public enum Segment: Sendable {
        /// The same sine on every channel.
        case tone(frequency: Double, duration: Double, level: Double = -6)
        /// One frequency on the left (even) channels, another on the right (odd) ones.
        case stereoTone(left: Double, right: Double, duration: Double, level: Double = -6)
        /// A linear sweep from one frequency to another.
        case sweep(from: Double, to: Double, duration: Double, level: Double = -6)
        case silence(duration: Double)
    }

    /// The rate files are written at unless a test says otherwise: the test server's sink's
    /// (``TestSoundServerKind/sinkRate``), at which the engine runs, so that nothing
    /// resamples a test's signal unless the test asks for it (a test of resampling names its
    /// rate). A debug build's resampler is slow: primed through it, a long buffer's restart
    /// after a seek in its last buffer was heard 0.3–0.46 s late at PulseAudio's defaults,
    /// where a release build takes 10–30 ms.
    public static var sinkRate: Int { TestSoundServerKind.selected.sinkRate }

    /// The folder the files go to.
    public static var directory: String {
        get throws { try folder.get() }
    }

    private static let folder = Result { try TemporaryDirectories.make("earshot-signals") }
    private static let counter = Locked(0)

    // MARK: Files

    /// A sine on every channel.
    public static func sine(
        frequency: Double = 1000, duration: Double = 1, level: Double = -6, sampleRate: Int = TestSignals.sinkRate,
        channels: Int = 2, format: SampleFormat = .int16
    ) throws -> String {
        try write(
            [.tone(frequency: frequency, duration: duration, level: level)], sampleRate: sampleRate,
            channels: channels, format: format, name: "sine-\(Int(frequency))Hz")
    }

    /// A stereo file with a different sine on each channel.
    public static func stereoSine(
        left: Double = 440, right: Double = 880, duration: Double = 1, level: Double = -6,
        sampleRate: Int = TestSignals.sinkRate, format: SampleFormat = .int16
    ) throws -> String {
        try write(
            [.stereoTone(left: left, right: right, duration: duration, level: level)], sampleRate: sampleRate,
            channels: 2, format: format, name: "stereo-\(Int(left))-\(Int(right))Hz")
    }

    /// A tone that steps up by `step` Hz every `stepDuration` seconds, starting at `start`
    /// Hz: with the defaults, second *n* plays 200 + 100·*n* Hz, so the frequency heard
    /// tells the position played (see `steppedTonePosition`).
    public static func steppedTone(
        start: Double = 200, step: Double = 100, stepDuration: Double = 1, steps: Int = 5, level: Double = -6,
        sampleRate: Int = TestSignals.sinkRate, channels: Int = 2, format: SampleFormat = .int16
    ) throws -> String {
        let segments = (0..<steps).map {
            Segment.tone(frequency: start + step * Double($0), duration: stepDuration, level: level)
        }
        return try write(segments, sampleRate: sampleRate, channels: channels, format: format, name: "stepped")
    }

    /// The frequency a stepped tone plays at `position` seconds.
    public static func steppedToneFrequency(
        at position: Double, start: Double = 200, step: Double = 100, stepDuration: Double = 1
    ) -> Double {
        start + step * (position / stepDuration).rounded(.down)
    }

    /// Where in a stepped tone the step with `frequency` begins, in seconds (rounded to the
    /// nearest step).
    public static func steppedTonePosition(
        frequency: Double, start: Double = 200, step: Double = 100, stepDuration: Double = 1
    ) -> Double {
        ((frequency - start) / step).rounded() * stepDuration
    }

    /// Digital silence.
    public static func silence(
        duration: Double = 1, sampleRate: Int = TestSignals.sinkRate, channels: Int = 2, format: SampleFormat = .int16
    ) throws -> String {
        try write([.silence(duration: duration)], sampleRate: sampleRate, channels: channels, format: format, name: "silence")
    }

    /// Any sequence of segments, for example two bursts:
    /// `[.tone(frequency: 1000, duration: 0.5), .silence(duration: 0.5), .tone(frequency: 1000, duration: 0.5)]`.
    public static func write(
        _ segments: [Segment], sampleRate: Int = TestSignals.sinkRate, channels: Int = 2, format: SampleFormat = .int16,
        name: String = "signal"
    ) throws -> String {
        try writeWAV(render(segments, sampleRate: sampleRate, channels: channels), sampleRate: sampleRate,
                     channels: channels, format: format, name: name)
    }

    // MARK: Samples

    /// The interleaved samples of a sequence of segments.
    public static func render(_ segments: [Segment], sampleRate: Int = TestSignals.sinkRate, channels: Int = 2) -> [Float] {
        let rate = Double(sampleRate)
        var samples: [Float] = []
        var phases = [Double](repeating: 0, count: channels)
        for segment in segments {
            switch segment {
            case .silence(let duration):
                samples.append(contentsOf: repeatElement(0, count: frames(duration, rate) * channels))
                phases = [Double](repeating: 0, count: channels)
            case .tone(let frequency, let duration, let level):
                append(frames(duration, rate), level: level, rate: rate, to: &samples, phases: &phases) { _, _ in frequency }
            case .stereoTone(let left, let right, let duration, let level):
                append(frames(duration, rate), level: level, rate: rate, to: &samples, phases: &phases) { channel, _ in
                    channel % 2 == 0 ? left : right
                }
            case .sweep(let from, let to, let duration, let level):
                let count = frames(duration, rate)
                append(count, level: level, rate: rate, to: &samples, phases: &phases) { _, frame in
                    from + (to - from) * Double(frame) / Double(max(1, count))
                }
            }
        }
        return samples
    }

    private static func frames(_ duration: Double, _ rate: Double) -> Int { Int((duration * rate).rounded()) }

    private static func append(
        _ count: Int, level: Double, rate: Double, to samples: inout [Float], phases: inout [Double],
        frequency: (_ channel: Int, _ frame: Int) -> Double
    ) {
        let amplitude = SignalAnalysis.amplitude(dBFS: level)
        let channels = phases.count
        samples.reserveCapacity(samples.count + count * channels)
        for frame in 0..<count {
            for channel in 0..<channels {
                samples.append(Float(amplitude * sin(phases[channel])))
                phases[channel] += 2 * Double.pi * frequency(channel, frame) / rate
                if phases[channel] > 2 * Double.pi { phases[channel] -= 2 * Double.pi }
            }
        }
    }

    // MARK: WAV

    /// Writes interleaved samples as a WAV file in `directory` and returns its path.
    public static func writeWAV(
        _ samples: [Float], sampleRate: Int, channels: Int, format: SampleFormat = .int16, name: String = "signal"
    ) throws -> String {
        let number = counter.withLock { n -> Int in
            n += 1
            return n
        }
        let path = "\(try directory)/\(name)-\(number).wav"
        try writeWAV(samples, sampleRate: sampleRate, channels: channels, format: format, to: path)
        return path
    }

    /// Writes interleaved samples as a WAV file at `path`.
    public static func writeWAV(
        _ samples: [Float], sampleRate: Int, channels: Int, format: SampleFormat, to path: String
    ) throws {
        precondition(samples.count % channels == 0, "samples must be whole frames")
        let bytesPerSample = format == .int16 ? 2 : 4
        let frames = samples.count / channels
        var data = Data()
        func put32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { data.append(contentsOf: $0) } }
        func put16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { data.append(contentsOf: $0) } }
        let payload = samples.count * bytesPerSample
        let fmtSize = format == .int16 ? 16 : 18
        let factSize = format == .int16 ? 0 : 12
        data.append(contentsOf: Array("RIFF".utf8))
        put32(4 + (8 + fmtSize) + factSize + 8 + payload + payload % 2)
        data.append(contentsOf: Array("WAVE".utf8))
        data.append(contentsOf: Array("fmt ".utf8))
        put32(fmtSize)
        put16(format == .int16 ? 1 : 3)
        put16(channels)
        put32(sampleRate)
        put32(sampleRate * channels * bytesPerSample)
        put16(channels * bytesPerSample)
        put16(bytesPerSample * 8)
        if format == .float32 {
            put16(0)  // cbSize
            data.append(contentsOf: Array("fact".utf8))
            put32(4)
            put32(frames)
        }
        data.append(contentsOf: Array("data".utf8))
        put32(payload)
        data.reserveCapacity(data.count + payload + 1)
        switch format {
        case .int16:
            for x in samples {
                let v = Int16(max(-32768, min(32767, (Double(x) * 32767).rounded())))
                withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) }
            }
        case .float32:
            for x in samples { withUnsafeBytes(of: x.bitPattern.littleEndian) { data.append(contentsOf: $0) } }
        }
        if payload % 2 == 1 { data.append(0) }
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// Reads a WAV file of 16-bit PCM or 32-bit float samples (plain or extensible format).
    public static func readWAV(_ path: String) throws -> CapturedAudio {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u32(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 | Int(data[at + 2]) << 16 | Int(data[at + 3]) << 24 }
        func u16(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 }
        guard data.count >= 12, data[0..<4].elementsEqual("RIFF".utf8), data[8..<12].elementsEqual("WAVE".utf8) else {
            throw TestFailure("\(path) is not a WAV file")
        }
        var tag = 0, channels = 0, rate = 0, bits = 0
        var offset = 12
        while offset + 8 <= data.count {
            let id = String(decoding: data[offset..<(offset + 4)], as: UTF8.self)
            let size = u32(offset + 4)
            let body = offset + 8
            if id == "fmt " {
                tag = u16(body)
                channels = u16(body + 2)
                rate = u32(body + 4)
                bits = u16(body + 14)
                if tag == 0xFFFE { tag = u16(body + 24) }
            } else if id == "data" {
                guard channels > 0, (tag == 1 && bits == 16) || (tag == 3 && bits == 32) else {
                    throw TestFailure("\(path): unsupported WAV format \(tag), \(bits) bits")
                }
                let end = min(data.count, body + size)
                var samples: [Float] = []
                if tag == 1 {
                    samples = stride(from: body, to: end - 1, by: 2).map { Float(Int16(bitPattern: UInt16(u16($0)))) / 32767 }
                } else {
                    samples = stride(from: body, to: end - 3, by: 4).map { Float(bitPattern: UInt32(u32($0))) }
                }
                samples.removeLast(samples.count % channels)
                return CapturedAudio(samples: samples, sampleRate: rate, channels: channels)
            }
            offset = body + size + size % 2
        }
        throw TestFailure("\(path) has no data chunk")
    }
}
