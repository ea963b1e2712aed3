import Foundation
import TestSupport

/// Audio files for the decoding tests, made once per test run with sox and ffmpeg in a temporary
/// directory (removed when the test process exits). Nothing here is committed.
///
/// The reference signal is 1 s of stereo at 44100 Hz: left a 440 Hz sine, right a 1000 Hz sine,
/// both at -6 dBFS. Every lossless file holds it at 16 bits (or 24, or float); the lossy files are
/// encoded from the 16-bit version (Opus at 48000 Hz, the only rate Opus has).
struct DecodingFixtures: Sendable {
    let directory: String

    /// The shared fixtures, built by the first test that asks.
    static func shared() async throws -> DecodingFixtures { try await building.value }

    private static let building = Task { try await DecodingFixtures.build() }

    func path(_ name: String) -> String { directory + "/" + name }

    // The files, by concept.
    var pcm16: String { path("pcm16.wav") }
    var pcm24: String { path("pcm24.wav") }
    var float32: String { path("float32.wav") }
    var aiff: String { path("pcm16.aiff") }
    var alac: String { path("alac.caf") }
    var flac: String { path("tagged.flac") }
    var vorbis: String { path("tagged.ogg") }
    var opus: String { path("music.opus") }
    var mp3: String { path("music.mp3") }
    var aac: String { path("music.m4a") }
    var wavNamedMP3: String { path("really-a-wav.mp3") }
    var truncatedWAV: String { path("truncated.wav") }
    var randomWAV: String { path("random.wav") }
    var randomMP3: String { path("random.mp3") }
    var empty: String { path("empty.wav") }
    var folder: String { path("folder.wav") }
    var missing: String { path("missing.wav") }
    var invalidUTF8Title: String { path("latin1-title.wav") }
    /// 4 s versions (of the same signal, repeated) cut to 60 % of their bytes.
    var longFLAC: String { path("long.flac") }
    var truncatedFLAC: String { path("long-cut.flac") }
    var truncatedMP3: String { path("long-cut.mp3") }
    var truncatedVorbis: String { path("long-cut.ogg") }
    var truncatedOpus: String { path("long-cut.opus") }
    var damagedVorbis: String { path("long-damaged.ogg") }
    var damagedMP3: String { path("long-damaged.mp3") }
    /// A WAV whose RIFF and data sizes are 0xFFFFFFFF, as ffmpeg writes to a pipe.
    var streamedWAV: String { path("streamed.wav") }
    /// The 1 s AIFF and 24-bit WAV (WAVEX) cut to 60 % of their bytes.
    var truncatedAIFF: String { path("truncated.aiff") }
    var truncatedWAVEX: String { path("truncated24.wav") }

    /// The frames of the truncated WAV: 0.6 s.
    static let truncatedWAVFrames = 26460
    static let title = "Tëst — “Title” ✓"

    private static func build() async throws -> DecodingFixtures {
        let directory = NSTemporaryDirectory() + "earshot-decoding-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        atexit {
            try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "earshot-decoding-\(getpid())")
        }
        let f = DecodingFixtures(directory: directory)

        // The reference, then lossless versions without dither (-D) so they are exactly comparable.
        try await tool("sox", ["-n", "-r", "44100", "-c", "2", "-e", "floating-point", "-b", "32", f.float32,
                               "synth", "1", "sine", "440", "sine", "1000", "gain", "-6"])
        try await tool("sox", ["-D", f.float32, "-b", "16", f.pcm16])
        try await tool("sox", ["-D", f.float32, "-b", "24", f.pcm24])
        try await tool("sox", ["-D", f.float32, "-b", "16", f.aiff])
        try await ffmpeg(["-i", f.pcm16, "-c:a", "alac", f.alac])
        try patchALACFormatFlags(f.alac, bitDepth: 16)
        try await ffmpeg(["-i", f.pcm16, "-metadata", "title=\(title)", "-metadata", "artist=Earshot Tests",
                          "-metadata", "track=7", f.flac])
        try await ffmpeg(["-i", f.pcm16, "-c:a", "libvorbis", "-q:a", "5", "-metadata", "title=Vorbis \(title)", f.vorbis])
        try await ffmpeg(["-i", f.float32, "-ar", "48000", "-c:a", "libopus", "-b:a", "128k",
                          "-metadata", "title=Opus \(title)", f.opus])
        try await ffmpeg(["-i", f.pcm16, "-c:a", "libmp3lame", "-b:a", "192k", "-metadata", "title=MP3 \(title)", f.mp3])
        try await ffmpeg(["-i", f.pcm16, "-c:a", "aac", f.aac])
        try FileManager.default.copyItem(atPath: f.pcm16, toPath: f.wavNamedMP3)

        // Broken files.
        let wav = try bytes(f.pcm16)
        let dataStart = try dataChunkStart(wav)
        try write(Array(wav.prefix(dataStart + truncatedWAVFrames * 4)), to: f.truncatedWAV)
        for (whole, cut) in [(f.aiff, f.truncatedAIFF), (f.pcm24, f.truncatedWAVEX)] {
            let all = try bytes(whole)
            try write(Array(all.prefix(all.count * 6 / 10)), to: cut)
        }
        var streamed = wav
        streamed.replaceSubrange(4..<8, with: [0xFF, 0xFF, 0xFF, 0xFF])
        streamed.replaceSubrange(dataStart - 4..<dataStart, with: [0xFF, 0xFF, 0xFF, 0xFF])
        try write(streamed, to: f.streamedWAV)
        var generator = SplitMix64(seed: 0x5EED)
        let noise = (0..<20_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        try write(noise, to: f.randomWAV)
        try write(noise, to: f.randomMP3)
        try write([], to: f.empty)
        try FileManager.default.createDirectory(atPath: f.folder, withIntermediateDirectories: false)
        try write(wavWithRawTitle(wav, title: [0x4C, 0x61, 0x20, 0xE9, 0x74, 0xE9]), to: f.invalidUTF8Title)  // "La été" in Latin-1

        // Longer files, cut short.
        let long = f.path("long.wav")
        try await tool("sox", [f.pcm16, long, "repeat", "3"])
        try await ffmpeg(["-i", long, f.longFLAC])
        try await ffmpeg(["-i", long, "-c:a", "libmp3lame", "-b:a", "192k", f.path("long.mp3")])
        try await ffmpeg(["-i", long, "-c:a", "libvorbis", f.path("long.ogg")])
        try await ffmpeg(["-i", long, "-ar", "48000", "-c:a", "libopus", f.path("long.opus")])
        for (whole, cut) in [(f.longFLAC, f.truncatedFLAC), (f.path("long.mp3"), f.truncatedMP3),
                             (f.path("long.ogg"), f.truncatedVorbis), (f.path("long.opus"), f.truncatedOpus)] {
            let all = try bytes(whole)
            try write(Array(all.prefix(all.count * 6 / 10)), to: cut)
        }
        for (whole, damagedCopy) in [(f.path("long.ogg"), f.damagedVorbis), (f.path("long.mp3"), f.damagedMP3)] {
            var damaged = try bytes(whole)
            for index in damaged.count / 2..<(damaged.count / 2 + 2000) {
                damaged[index] = UInt8(truncatingIfNeeded: generator.next())
            }
            try write(damaged, to: damagedCopy)
        }
        return f
    }

    // MARK: - References

    /// `sox -D file -t f32 -`: the file decoded by sox (libsndfile-independent readers for WAV,
    /// AIFF, FLAC; libvorbisfile; libmad), interleaved.
    static func soxDecode(_ file: String) async throws -> [Float] {
        // A file of its own per call: tests decoding the same fixture run in parallel, and a
        // shared output path let one read what another was rewriting.
        let output = file + ".sox.\(UUID().uuidString).f32"
        defer { try? FileManager.default.removeItem(atPath: output) }
        try await tool("sox", ["-D", file, "-t", "f32", output])
        return try floats(output)
    }

    /// `ffmpeg -i file -f f32le -`: for what sox cannot read (Opus).
    static func ffmpegDecode(_ file: String) async throws -> [Float] {
        let output = file + ".ffmpeg.\(UUID().uuidString).f32"
        defer { try? FileManager.default.removeItem(atPath: output) }
        try await ffmpeg(["-i", file, "-f", "f32le", output])
        return try floats(output)
    }

    // MARK: - Tools

    static func tool(_ name: String, _ arguments: [String]) async throws {
        let result = try await run(name, arguments, timeout: 60)
        guard result.status == 0 else {
            throw TestFailure("\(name) \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.stderr)")
        }
    }

    static func ffmpeg(_ arguments: [String]) async throws {
        try await tool("ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments)
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw TestFailure("cannot read \(path)") }
        return [UInt8](data)
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw TestFailure("cannot write \(path)")
        }
    }

    static func floats(_ path: String) throws -> [Float] {
        let raw = try bytes(path)
        return raw.withUnsafeBytes { buffer in
            (0..<raw.count / 4).map { Float(bitPattern: UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
        }
    }

    /// The offset of the first sample of a RIFF WAV file.
    static func dataChunkStart(_ wav: [UInt8]) throws -> Int {
        var offset = 12
        while offset + 8 <= wav.count {
            let size = Int(wav[offset + 4]) | Int(wav[offset + 5]) << 8 | Int(wav[offset + 6]) << 16 | Int(wav[offset + 7]) << 24
            if wav[offset..<offset + 4].elementsEqual("data".utf8) { return offset + 8 }
            offset += 8 + size + (size & 1)
        }
        throw TestFailure("no data chunk")
    }

    /// ffmpeg's CAF muxer writes ALAC with format flags 0 in the `desc` chunk; libsndfile 1.2
    /// rejects that ("Bad ALAC format flag value of 0": unsupported encoding). Apple's tools
    /// write the source bit depth there (1 = 16-bit, 2 = 20, 3 = 24, 4 = 32), so set it.
    static func patchALACFormatFlags(_ path: String, bitDepth: Int) throws {
        var caf = try bytes(path)
        // 'caff' header (8 bytes), then 'desc' + size (12), sample rate (8), format id (4), flags (4).
        guard caf.count > 32, caf[8..<12].elementsEqual("desc".utf8), caf[28..<32].elementsEqual("alac".utf8) else {
            throw TestFailure("\(path): not an ffmpeg ALAC CAF")
        }
        let flag: UInt8 = switch bitDepth { case 16: 1; case 20: 2; case 24: 3; default: 4 }
        caf[32..<36] = [0, 0, 0, flag]
        try write(caf, to: path)
    }

    /// A copy of a WAV with a LIST/INFO chunk whose INAM (title) holds `title` verbatim.
    static func wavWithRawTitle(_ wav: [UInt8], title: [UInt8]) -> [UInt8] {
        func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        var name = title + [0]
        if name.count % 2 == 1 { name.append(0) }
        let info = Array("INFO".utf8) + Array("INAM".utf8) + le32(name.count) + name
        var result = wav + Array("LIST".utf8) + le32(info.count) + info
        result.replaceSubrange(4..<8, with: le32(result.count - 8))
        return result
    }
}

/// Signal measurements for the comparisons.
enum DecodingSignal {
    /// The largest absolute difference over the common length (and whether the lengths match).
    static func maxDifference(_ a: [Float], _ b: [Float]) -> Float {
        zip(a, b).reduce(0) { max($0, abs($1.0 - $1.1)) }
    }

    /// The first frame in which any channel reaches `threshold`.
    static func onset(_ samples: [Float], channels: Int, threshold: Float = 0.05) -> Int {
        (samples.firstIndex { abs($0) >= threshold } ?? 0) / channels
    }

    /// The lag, in frames and fractions of a frame, by which `decoded` must be shifted to line up
    /// with `reference` (`reference[i] ≈ decoded[i + lag]`).
    ///
    /// The pure tones of the fixtures repeat (a 440 Hz and a 1000 Hz sine come nearly back in step
    /// every ~700 and ~1100 frames), so plain cross-correlation over a wide range can lock onto a
    /// wrong period. The signal's onset gives the coarse lag; the cross-correlation (as the
    /// smallest difference) within ±64 frames of it the exact one; then the best fraction of a
    /// frame, since decoders may differ by half a sample (libmad through sox against mpg123 does).
    static func alignment(of decoded: [Float], against reference: [Float], channels: Int, margin: Int) -> Double {
        let coarse = onset(decoded, channels: channels) - onset(reference, channels: channels)
        var best = (lag: Double(coarse), snr: -Double.infinity)
        for lag in coarse - 64...coarse + 64 {
            let value = snr(decoded, against: reference, lag: Double(lag), channels: channels, margin: margin)
            if value > best.snr { best = (Double(lag), value) }
        }
        let whole = best.lag
        for step in -10...10 where step != 0 {
            let lag = whole + Double(step) / 20
            let value = snr(decoded, against: reference, lag: lag, channels: channels, margin: margin)
            if value > best.snr { best = (lag, value) }
        }
        return best.lag
    }

    /// The SNR in dB of `decoded`, shifted by `lag` frames (cubic interpolation between frames),
    /// against `reference`, over their overlap without `margin` frames at each end (where
    /// encoders' priming and padding differ).
    static func snr(_ decoded: [Float], against reference: [Float], lag: Double, channels: Int, margin: Int) -> Double {
        let whole = Int(lag.rounded(.down)), fraction = lag - Double(whole)
        let referenceFrames = reference.count / channels, decodedFrames = decoded.count / channels
        let first = max(0, -whole + 1) + margin, last = min(referenceFrames, decodedFrames - whole - 2) - margin
        guard last > first else { return -Double.infinity }
        var signal = 0.0, noise = 0.0
        for frame in first..<last {
            for channel in 0..<channels {
                let r = Double(reference[frame * channels + channel])
                let at = (frame + whole) * channels + channel
                let p1 = Double(decoded[at])
                var d = p1
                if fraction != 0 {
                    let p0 = Double(decoded[at - channels]), p2 = Double(decoded[at + channels])
                    let p3 = Double(decoded[at + 2 * channels]), t = fraction
                    d = p1 + 0.5 * t * (p2 - p0 + t * (2 * p0 - 5 * p1 + 4 * p2 - p3 + t * (3 * (p1 - p2) + p3 - p0)))
                }
                signal += r * r
                noise += (r - d) * (r - d)
            }
        }
        return noise == 0 ? .infinity : 10 * log10(signal / noise)
    }

    static func rms(_ samples: ArraySlice<Float>) -> Double {
        (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(samples.count, 1))).squareRoot()
    }

    /// Upward zero crossings per second of a mono signal.
    static func frequency(_ samples: [Float], sampleRate: Double) -> Double {
        var crossings = 0, first = -1, last = -1
        for index in 1..<samples.count where samples[index - 1] < 0 && samples[index] >= 0 {
            crossings += 1
            if first < 0 { first = index }
            last = index
        }
        guard crossings > 1 else { return 0 }
        return Double(crossings - 1) * sampleRate / Double(last - first)
    }
}
