import AudioEngine
import Foundation
import Testing
import TestSupport

// The FFmpeg decoder behind AudioFile, against files ffmpeg makes at run time
// (DecodingFFmpegFixtures.swift), compared with what the ffmpeg command decodes from them.

/// Opens and decodes `path` to the end; the frames and the error, if any, where it stopped.
private func outcome(_ path: String) -> (frames: Int, error: AudioFileError?) {
    let file: AudioFile
    do {
        file = try AudioFile(contentsOf: path)
    } catch {
        return (0, error)
    }
    let channels = file.format.channelCount
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 4096 * channels)
    defer { buffer.deallocate() }
    var frames = 0
    do {
        while true {
            let count = try file.read(into: buffer, frames: 4096)
            if count == 0 { return (frames, nil) }
            frames += count
        }
    } catch {
        return (frames, error)
    }
}

private func channel(_ samples: [Float], _ index: Int, of channels: Int) -> [Float] {
    stride(from: index, to: samples.count, by: channels).map { samples[$0] }
}

/// What an FFmpeg-decoded fixture must be.
struct FFmpegCase: Sendable, CustomTestStringConvertible {
    let file: String
    let container: String
    let encoding: String
    let lossless: Bool
    /// Whether the container states the length exactly, so that the decode is trimmed to the
    /// source's 44100 frames (MP4 edit list, CAF packet table); otherwise it is as long as ffmpeg's.
    let exactLength: Bool
    var testDescription: String { file }
}

@Suite("Decoding with FFmpeg: what libsndfile cannot open")
struct DecodingFFmpegTests {
    static let cases = [
        FFmpegCase(file: "music.m4a", container: "MPEG-4", encoding: "AAC LC", lossless: false, exactLength: true),
        FFmpegCase(file: "alac.m4a", container: "MPEG-4", encoding: "ALAC 16-bit", lossless: true, exactLength: true),
        FFmpegCase(file: "alac-ffmpeg.caf", container: "CAF", encoding: "ALAC 16-bit", lossless: true, exactLength: true),
        FFmpegCase(file: "music.aac", container: "ADTS", encoding: "AAC LC", lossless: false, exactLength: false),
        FFmpegCase(file: "music.wma", container: "ASF", encoding: "WMA v2", lossless: false, exactLength: false),
    ]

    @Test(arguments: cases)
    func decodesLikeFFmpeg(_ expected: FFmpegCase) async throws {
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let path = fixtures.path(expected.file)
        let file = try AudioFile(contentsOf: path)
        #expect(file.format.container == expected.container)
        #expect(file.format.encoding == expected.encoding)
        #expect(file.format.sampleRate == 44100)
        #expect(file.format.channelCount == 2)
        #expect(file.format.bitDepth == (expected.lossless ? 16 : nil))
        let decoded = try decode(file)
        let frames = decoded.count / 2
        let reference = try await DecodingFixtures.ffmpegDecode(path)
        let source = try await DecodingFixtures.soxDecode(fixtures.base.pcm16)
        if expected.lossless {
            // Lossless: the source itself, sample for sample (16-bit integers scaled to ±1.0).
            #expect(frames == 44100)
            #expect(decoded == reference)
            #expect(DecodingSignal.maxDifference(decoded, source) == 0)
            return
        }
        // Lossy: the same decoder as the ffmpeg command, frame for frame from the first.
        let snr = DecodingSignal.snr(decoded, against: reference, lag: 0, channels: 2, margin: 0)
        print("decoding \(expected.file): \(frames) frames (ffmpeg \(reference.count / 2)), SNR against ffmpeg \(snr) dB")
        #expect(snr > 90)
        if expected.exactLength {
            // ffmpeg's command keeps the encoder's padding; the container says where the music ends.
            #expect(abs(frames - 44100) <= 2)
        } else {
            #expect(abs(frames - reference.count / 2) <= 441, "within 10 ms of ffmpeg's decode")
        }
        // And the music: each channel's tone, at a level near the source's.
        let left = channel(decoded, 0, of: 2), right = channel(decoded, 1, of: 2)
        #expect(abs(DecodingSignal.frequency(Array(left[4096..<40000]), sampleRate: 44100) - 440) < 2)
        #expect(abs(DecodingSignal.frequency(Array(right[4096..<40000]), sampleRate: 44100) - 1000) < 4)
        let level = DecodingSignal.rms(decoded[8192..<80000]) / DecodingSignal.rms(source[8192..<80000])
        #expect(abs(level - 1) < 0.05)
    }

    @Test func aacInMP4StartsOnTheSourceFrame() async throws {
        // The edit list's priming frames are dropped: the decode lines up with the source at lag 0.
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let decoded = try decode(AudioFile(contentsOf: fixtures.aac))
        let source = try await DecodingFixtures.soxDecode(fixtures.base.pcm16)
        let lag = DecodingSignal.alignment(of: decoded, against: source, channels: 2, margin: 2048)
        let snr = DecodingSignal.snr(decoded, against: source, lag: 0, channels: 2, margin: 2048)
        print("decoding music.m4a against its source: lag \(lag) frames, SNR \(snr) dB")
        #expect(lag == 0)
        #expect(snr > 25)
    }

    @Test(.enabled(if: DecodingFFmpegFixtures.heAACEncoder, "this ffmpeg has no HE-AAC encoder (libfdk_aac)"))
    func heAACDecodesAtTheFullRate() async throws {
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let path = try #require(fixtures.heAAC)
        let file = try AudioFile(contentsOf: path)
        #expect(file.format.encoding == "HE-AAC")
        #expect(file.format.sampleRate == 44100, "SBR doubles the core rate of 22050 Hz")
        let decoded = try decode(file)
        #expect(abs(decoded.count / 2 - 44100) <= 441)
        let reference = try await DecodingFixtures.ffmpegDecode(path)
        #expect(DecodingSignal.snr(decoded, against: reference, lag: 0, channels: 2, margin: 0) > 90)
    }

    @Test func libsndfileKeepsWhatItDecodes() async throws {
        // The patched CAF (format flags set) is libsndfile's; ffmpeg's own CAF falls to FFmpeg,
        // and both decode to the same samples.
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let patched = try AudioFile(contentsOf: fixtures.base.alac)
        let ffmpegMade = try AudioFile(contentsOf: fixtures.ffmpegCAF)
        #expect(patched.format.encoding == "ALAC 16-bit" && ffmpegMade.format.encoding == "ALAC 16-bit")
        #expect(try decode(patched) == decode(ffmpegMade))
    }

    @Test(arguments: ["music.m4a", "alac.m4a", "alac-ffmpeg.caf", "music.wma", "music.aac"])
    func seekThenReadMatchesStraightDecoding(_ name: String) async throws {
        // Lossless: exactly. Lossy: to within the decoder's own randomness (AAC's perceptual
        // noise substitution draws from a generator whose state a flush does not reset; up to
        // 0.015 in ADTS's priming), well under the 0.07 by which the 1000 Hz tone at -6 dBFS
        // moves in one frame.
        let tolerance: Float = name.contains("alac") ? 1e-6 : 3e-2
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let whole = try decode(AudioFile(contentsOf: fixtures.path(name)))
        for start in [Int64(22050), 30000, 0, 1] {
            let file = try AudioFile(contentsOf: fixtures.path(name))
            try file.seek(toFrame: 40000)  // somewhere else first
            try file.seek(toFrame: start)
            #expect(file.framePosition == start)
            let block = 8192
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: block * 2)
            defer { buffer.deallocate() }
            #expect(try file.read(into: buffer, frames: block) == block)
            #expect(file.framePosition == start + Int64(block))
            let afterSeek = Array(UnsafeBufferPointer(start: buffer, count: block * 2))
            let difference = DecodingSignal.maxDifference(afterSeek, Array(whole[Int(start) * 2..<(Int(start) + block) * 2]))
            if difference > 0 { print("decoding \(name): seek to frame \(start) differs from straight decoding by \(difference)") }
            #expect(difference <= tolerance)
        }
    }

    @Test func seekClampsAndReadsToTheEnd() async throws {
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let file = try AudioFile(contentsOf: fixtures.aac)
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
        defer { buffer.deallocate() }
        try file.seek(toFrame: 1_000_000)
        #expect(file.framePosition == 44100)
        #expect(try file.read(into: buffer, frames: 1024) == 0)
        try file.seek(toFrame: 44000)
        #expect(try file.read(into: buffer, frames: 2048) == 100)
        try file.seek(toFrame: -5)
        #expect(file.framePosition == 0)
        #expect(try file.read(into: buffer, frames: 1024) == 1024)
    }

    @Test(arguments: ["music.m4a", "alac.m4a", "music.wma"])
    func memoryDecodesLikeTheFile(_ name: String) async throws {
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let fromFile = try AudioFile(contentsOf: fixtures.path(name))
        let fromMemory = try AudioFile(data: DecodingFixtures.bytes(fixtures.path(name)), name: "memory:\(name)")
        #expect(fromMemory.source == "memory:\(name)")
        #expect(fromMemory.format == fromFile.format)
        #expect(try decode(fromMemory) == decode(fromFile))
        try fromMemory.seek(toFrame: 22050)
        try fromFile.seek(toFrame: 22050)
        #expect(try decode(fromMemory) == decode(fromFile))
    }

    @Test func readAllOfAnM4A() async throws {
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let expected = try decode(AudioFile(contentsOf: fixtures.aac))
        let file = try AudioFile(contentsOf: fixtures.aac)
        try file.seek(toFrame: 30000)
        let all = try file.readAll()
        #expect(all.count == expected.count)
        #expect(DecodingSignal.maxDifference(all, expected) < 1e-2, "as decoded straight, less AAC's noise substitution")
        #expect(file.framePosition == 44100)
    }
}

@Suite("Decoding with FFmpeg: gapless AAC albums")
struct DecodingGaplessTests {
    @Test func eachItemIsAsLongAsItsSource() async throws {
        let fixtures = try await DecodingFFmpegFixtures.shared()
        for item in fixtures.albumItems {
            let file = try AudioFile(contentsOf: item)
            let frames = try decode(file).count / 2
            #expect(file.format.frameCount == Int64(DecodingFFmpegFixtures.albumItemFrames))
            #expect(abs(frames - DecodingFFmpegFixtures.albumItemFrames) <= 2, "\(item): \(frames) frames")
        }
    }

    @Test func theItemsJoinIntoTheSource() async throws {
        // Played back to back, the items line up with the continuous source, across the joins too:
        // no gap, no overlap (either would shift everything after a join by the priming's 1024
        // frames or the padding's, and the SNR there would collapse).
        let fixtures = try await DecodingFFmpegFixtures.shared()
        var joined: [Float] = []
        for item in fixtures.albumItems { joined += try decode(AudioFile(contentsOf: item)) }
        let source = try await DecodingFixtures.soxDecode(fixtures.albumSource)
        #expect(abs(joined.count - source.count) <= 6)
        let join = DecodingFFmpegFixtures.albumItemFrames
        for (index, at) in [join, 2 * join].enumerated() {
            // 50 ms either side of the join.
            let window = 2205
            let decoded = Array(joined[(at - window) * 2..<(at + window) * 2])
            let reference = Array(source[(at - window) * 2..<(at + window) * 2])
            let snr = DecodingSignal.snr(decoded, against: reference, lag: 0, channels: 2, margin: 0)
            let shifted = DecodingSignal.snr(decoded, against: reference, lag: 3, channels: 2, margin: 8)
            print("gapless join \(index + 1): SNR \(snr) dB at lag 0, \(shifted) dB at lag 3")
            #expect(snr > 20)
            #expect(snr > shifted + 6)
        }
    }
}

@Suite("Decoding with FFmpeg: broken and odd MP4s")
struct DecodingFFmpegErrorTests {
    @Test func moovMissingIsANamedError() async throws {
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let (frames, error) = outcome(fixtures.moovMissing)
        #expect(frames == 0)
        let reason = try #require(error, "a cut MP4 without its moov atom must not open").reason
        guard case .decodeFailed(let detail) = reason else {
            Issue.record("expected decodeFailed, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("moov atom not found"))
        #expect(error!.description.hasPrefix("cannot decode \(fixtures.moovMissing): corrupt or incomplete file"))
    }

    @Test func cutAfterTheMoovIsTruncatedAtTheCut() async throws {
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let (frames, error) = outcome(fixtures.cutAfterMoov)
        guard case .truncated(let seconds) = error?.reason else {
            Issue.record("expected truncated, got \(String(describing: error))")
            return
        }
        // 60 % of the bytes, most of them audio at a constant rate: about 60 % of 4 s.
        #expect(seconds > 2.0 && seconds < 2.6)
        #expect(abs(Double(frames) / 44100 - seconds) < 0.06)
    }

    @Test(arguments: ["huge-moov.m4a", "huge-stsz.m4a", "huge-count.m4a"])
    func hugeAtomSizesEndInAnErrorOrTheRightAudio(_ name: String) async throws {
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let started = ContinuousClock.now
        let (frames, error) = outcome(fixtures.path(name))
        let elapsed = ContinuousClock.now - started
        print("decoding \(name): \(frames) frames, \(error.map { "\($0)" } ?? "no error") in \(elapsed)")
        #expect(elapsed < .seconds(10))
        if let error {
            #expect(error.source == fixtures.path(name))
            #expect(error.description.contains(fixtures.path(name)))
        } else {
            #expect(frames == Int(DecodingFFmpegFixtures.longSeconds * 44100))
        }
    }

    @Test func damagedMediaDataIsConcealedOrANamedError() async throws {
        // AAC's decoder rejects or conceals damaged packets; a run of 8 rejected ones is an error.
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let (frames, error) = outcome(fixtures.damagedMedia)
        print("decoding damaged-media.m4a: \(frames) frames, \(error.map { "\($0)" } ?? "no error")")
        if let error {
            guard case .decodeFailed(let detail) = error.reason else {
                Issue.record("expected decodeFailed, got \(error)")
                return
            }
            #expect(detail.hasPrefix("damaged data at "))
            #expect(frames > 44100, "the frames before the damage were delivered")
        } else {
            #expect(frames == Int(DecodingFFmpegFixtures.longSeconds * 44100), "concealed: the whole length")
        }
    }

    @Test func manyTracksDecodeTheFirstAudioTrack() async throws {
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let started = ContinuousClock.now
        let file = try AudioFile(contentsOf: fixtures.manyTracks)
        let decoded = try decode(file)
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(try decode(AudioFile(contentsOf: fixtures.aac)) == decoded)
    }

    @Test func videoWithoutAudioSaysSo() async throws {
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let (_, error) = outcome(fixtures.videoOnly)
        guard case .unsupportedFormat(let detail) = error?.reason else {
            Issue.record("expected unsupportedFormat, got \(String(describing: error))")
            return
        }
        #expect(detail.hasPrefix("no audio stream"))
        #expect(error!.description.contains(fixtures.videoOnly))
    }

    @Test func randomBytesKeepLibsndfilesVerdict() async throws {
        // FFmpeg does not recognise them either: the error is libsndfile's, as before.
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let error = try #require(outcome(fixtures.base.randomWAV).error)
        #expect(error.reason == .unsupportedFormat("libsndfile: Format not recognised"))
    }
}
