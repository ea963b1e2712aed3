@testable import AudioEngine
import Foundation
import Testing
import TestSupport

// The decoding layer against real files made at run time (see DecodingFixtures.swift), compared
// with what sox (or ffmpeg, for Opus) decodes from the same files.

/// Decodes a whole file with `AudioFile.read` in blocks of an odd size (so that blocks straddle
/// libsndfile's internal ones and the last block is partial). Shared by the FFmpeg tests.
func decode(_ file: AudioFile, block: Int = 1000) throws -> [Float] {
    let channels = file.format.channelCount
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: block * channels)
    defer { buffer.deallocate() }
    var samples: [Float] = []
    while true {
        let frames = try file.read(into: buffer, frames: block)
        if frames == 0 { return samples }
        #expect(frames <= block)
        samples.append(contentsOf: UnsafeBufferPointer(start: buffer, count: frames * channels))
    }
}

/// Reads until the end or an error; returns the samples read and the error.
private func decodeUntilError(_ file: AudioFile) -> (samples: [Float], error: AudioFileError?) {
    let channels = file.format.channelCount
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 4096 * channels)
    defer { buffer.deallocate() }
    var samples: [Float] = []
    do {
        while true {
            let frames = try file.read(into: buffer, frames: 4096)
            if frames == 0 { return (samples, nil) }
            samples.append(contentsOf: UnsafeBufferPointer(start: buffer, count: frames * channels))
        }
    } catch {
        return (samples, error)
    }
}

/// Opens a file expecting failure; returns the error.
private func openError(_ path: String) -> AudioFileError? {
    do {
        _ = try AudioFile(contentsOf: path)
        return nil
    } catch {
        return error
    }
}

private func openError(data: [UInt8], name: String) -> AudioFileError? {
    do {
        _ = try AudioFile(data: data, name: name)
        return nil
    } catch {
        return error
    }
}

/// What a fixture file must decode to.
struct DecodingCase: Sendable, CustomTestStringConvertible {
    let file: String
    let container: String
    let encoding: String
    let bitDepth: Int?
    let sampleRate: Int
    let frames: Int64
    /// For lossless files without a sox reader (ALAC in CAF): compare with sox's decoding of this file instead.
    var reference: String? = nil
    var testDescription: String { file }
}

@Suite("Decoding: lossless formats match sox sample for sample")
struct DecodingLosslessTests {
    static let cases: [DecodingCase] = [
        DecodingCase(file: "pcm16.wav", container: "WAV", encoding: "PCM 16-bit", bitDepth: 16, sampleRate: 44100, frames: 44100),
        DecodingCase(file: "pcm24.wav", container: "WAV", encoding: "PCM 24-bit", bitDepth: 24, sampleRate: 44100, frames: 44100),
        DecodingCase(file: "float32.wav", container: "WAV", encoding: "float 32-bit", bitDepth: 32, sampleRate: 44100, frames: 44100),
        DecodingCase(file: "pcm16.aiff", container: "AIFF", encoding: "PCM 16-bit", bitDepth: 16, sampleRate: 44100, frames: 44100),
        // sox cannot read ALAC: compare with the 16-bit WAV it was encoded from.
        DecodingCase(file: "alac.caf", container: "CAF", encoding: "ALAC 16-bit", bitDepth: 16, sampleRate: 44100, frames: 44100,
                     reference: "pcm16.wav"),
        DecodingCase(file: "tagged.flac", container: "FLAC", encoding: "FLAC 16-bit", bitDepth: 16, sampleRate: 44100, frames: 44100),
    ]

    @Test(arguments: cases)
    func decodesExactly(_ expected: DecodingCase) async throws {
        let fixtures = try await DecodingFixtures.shared()
        let file = try AudioFile(contentsOf: fixtures.path(expected.file))
        #expect(file.format.container == expected.container)
        #expect(file.format.encoding == expected.encoding)
        #expect(file.format.bitDepth == expected.bitDepth)
        #expect(file.format.sampleRate == expected.sampleRate)
        #expect(file.format.channelCount == 2)
        #expect(file.format.frameCount == expected.frames)
        #expect(file.format.duration == 1.0)
        #expect(file.source == fixtures.path(expected.file))

        let samples = try decode(file)
        let reference = try await DecodingFixtures.soxDecode(fixtures.path(expected.reference ?? expected.file))
        #expect(samples.count == reference.count)
        #expect(file.framePosition == expected.frames)
        let difference = DecodingSignal.maxDifference(samples, reference)
        print("decoding \(expected.file): \(samples.count / 2) frames, max |difference| from \(expected.reference.map { "sox(\($0))" } ?? "sox") = \(difference)")
        #expect(difference <= 1e-4)
        // The signal is really there: -6 dBFS sines have an RMS of about 0.354.
        #expect(abs(DecodingSignal.rms(samples[...]) - 0.3545) < 0.01)
    }
}

@Suite("Decoding: lossy formats agree with other decoders")
struct DecodingLossyTests {
    static let cases: [DecodingCase] = [
        DecodingCase(file: "tagged.ogg", container: "Ogg", encoding: "Vorbis", bitDepth: nil, sampleRate: 44100, frames: 44100),
        DecodingCase(file: "music.opus", container: "Ogg", encoding: "Opus", bitDepth: nil, sampleRate: 48000, frames: 48000),
        DecodingCase(file: "music.mp3", container: "MPEG", encoding: "MPEG Layer III", bitDepth: nil, sampleRate: 44100, frames: 44100),
    ]

    @Test(arguments: cases)
    func agreesWithReferenceDecoder(_ expected: DecodingCase) async throws {
        let fixtures = try await DecodingFixtures.shared()
        let path = fixtures.path(expected.file)
        let file = try AudioFile(contentsOf: path)
        #expect(file.format.container == expected.container)
        #expect(file.format.encoding == expected.encoding)
        #expect(file.format.bitDepth == nil)
        #expect(file.format.sampleRate == expected.sampleRate)
        #expect(file.format.channelCount == 2)
        // MP3 lengths may be estimates; LAME's Info header makes this one exact, allow a frame either way.
        let frameCount = try #require(file.format.frameCount)
        #expect(abs(frameCount - expected.frames) <= (expected.encoding.hasPrefix("MPEG") ? 1152 : 0))

        let samples = try decode(file)
        #expect(Int64(samples.count / 2) == frameCount)
        let isOpus = expected.encoding == "Opus"
        let reference = isOpus
            ? try await DecodingFixtures.ffmpegDecode(path) : try await DecodingFixtures.soxDecode(path)
        let lag = DecodingSignal.alignment(of: samples, against: reference, channels: 2, margin: 2048)
        let snr = DecodingSignal.snr(samples, against: reference, lag: lag, channels: 2, margin: 2048)
        var line = "decoding \(expected.file): \(samples.count / 2) frames (\(isOpus ? "ffmpeg" : "sox") \(reference.count / 2)), "
            + "lag \(lag) frames, SNR against \(isOpus ? "ffmpeg/libopus" : "sox") \(String(format: "%.1f", snr)) dB"
        if !isOpus {
            // And against the signal before encoding (the codec's own loss).
            let original = try await DecodingFixtures.soxDecode(fixtures.pcm16)
            let originalLag = DecodingSignal.alignment(of: samples, against: original, channels: 2, margin: 2048)
            let codecSNR = DecodingSignal.snr(samples, against: original, lag: originalLag, channels: 2, margin: 2048)
            line += "; against the original: lag \(originalLag), SNR \(String(format: "%.1f", codecSNR)) dB"
            #expect(originalLag == 0, "libsndfile removes encoder delay and padding (gapless)")
        }
        if expected.encoding.hasPrefix("MPEG") {
            // A second opinion: ffmpeg's own MP3 decoder.
            let other = try await DecodingFixtures.ffmpegDecode(path)
            let otherLag = DecodingSignal.alignment(of: samples, against: other, channels: 2, margin: 2048)
            let otherSNR = DecodingSignal.snr(samples, against: other, lag: otherLag, channels: 2, margin: 2048)
            line += "; against ffmpeg: lag \(otherLag), SNR \(String(format: "%.1f", otherSNR)) dB"
            #expect(otherSNR >= 30)
        }
        print(line)
        #expect(snr >= 30)
    }
}

@Suite("Decoding: tags")
struct DecodingTagTests {
    @Test func flacVorbisCommentsAreRead() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let tags = try AudioFile(contentsOf: fixtures.flac).tags
        #expect(tags.title == DecodingFixtures.title)
        #expect(tags.artist == "Earshot Tests")
        #expect(tags.trackNumber == "7")
        #expect(tags.album == nil)
        #expect(tags.genre == nil)
    }

    @Test func oggOpusAndMP3TitlesAreRead() async throws {
        let fixtures = try await DecodingFixtures.shared()
        #expect(try AudioFile(contentsOf: fixtures.vorbis).tags.title == "Vorbis \(DecodingFixtures.title)")
        #expect(try AudioFile(contentsOf: fixtures.opus).tags.title == "Opus \(DecodingFixtures.title)")
        #expect(try AudioFile(contentsOf: fixtures.mp3).tags.title == "MP3 \(DecodingFixtures.title)")
    }

    @Test func invalidUTF8IsRepairedNotRejected() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let file = try AudioFile(contentsOf: fixtures.invalidUTF8Title)
        // "La été" in Latin-1: the two é bytes are not UTF-8.
        #expect(file.tags.title == "La \u{FFFD}t\u{FFFD}")
        #expect(file.format.frameCount == 44100)
    }

    @Test func untaggedFileHasNoTags() async throws {
        let fixtures = try await DecodingFixtures.shared()
        #expect(try AudioFile(contentsOf: fixtures.pcm16).tags == AudioFileTags())
    }
}

@Suite("Decoding: errors name the file and the reason")
struct DecodingErrorTests {
    @Test func missingFile() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let error = try #require(openError(fixtures.missing))
        #expect(error.reason == .notFound)
        #expect(error.source == fixtures.missing)
        #expect(error.description == "cannot open \(fixtures.missing): no such file")
        #expect(openError(fixtures.pcm16 + "/inside")?.reason == .notFound)
    }

    @Test func directory() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let error = try #require(openError(fixtures.folder))
        #expect(error.reason == .isDirectory)
        #expect(error.description == "cannot open \(fixtures.folder): it is a directory")
    }

    @Test func emptyFile() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let error = try #require(openError(fixtures.empty))
        #expect(error.reason == .empty)
        #expect(error.description == "cannot open \(fixtures.empty): the file is empty")
        #expect(openError(data: [], name: "nothing.wav")?.reason == .empty)
    }

    // Root passes every permission check (access(2) and open(2) alike), so the case cannot be
    // produced when the tests run as root, as they do in the container: it runs for other users.
    @Test(.enabled(if: getuid() != 0, "root may read any file, so permission cannot be denied"))
    func unreadableFile() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let path = fixtures.path("unreadable.wav")
        try FileManager.default.copyItem(atPath: fixtures.pcm16, toPath: path)
        chmod(path, 0o000)
        defer { chmod(path, 0o600) }
        let error = try #require(openError(path))
        #expect(error.reason == .permissionDenied)
        #expect(error.description == "cannot open \(path): permission denied")
    }

    @Test func fifoIsNotAFile() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let path = fixtures.path("pipe.wav")
        #expect(mkfifo(path, 0o600) == 0)
        let error = try #require(openError(path))
        #expect(error.reason == .readFailed("not a regular file"))
    }

    @Test(arguments: ["random.wav", "random.mp3"])
    func randomBytes(_ name: String) async throws {
        let fixtures = try await DecodingFixtures.shared()
        let error = try #require(openError(fixtures.path(name)))
        guard case .unsupportedFormat(let detail) = error.reason else {
            Issue.record("expected unsupportedFormat, got \(error)")
            return
        }
        #expect(detail.hasPrefix("libsndfile: "))
        #expect(!detail.contains("does not exist"), "libsndfile's misleading MPEG message is replaced")
        #expect(error.description.hasPrefix("cannot open \(fixtures.path(name)): not a supported audio format (libsndfile: "))
        // The same bytes from memory.
        let bytes = try DecodingFixtures.bytes(fixtures.path(name))
        guard case .unsupportedFormat = openError(data: bytes, name: name)?.reason else {
            Issue.record("expected unsupportedFormat from memory")
            return
        }
    }

    @Test func aacInMPEG4FallsToFFmpeg() async throws {
        // libsndfile cannot open it (it used to fail "unsupported format"); FFmpeg decodes it
        // (DecodingFFmpegTests.swift has the rest).
        let fixtures = try await DecodingFixtures.shared()
        let file = try AudioFile(contentsOf: fixtures.aac)
        #expect(file.format.container == "MPEG-4" && file.format.encoding == "AAC LC")
    }

    @Test func wavNamedMP3DecodesAsWAV() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let file = try AudioFile(contentsOf: fixtures.wavNamedMP3)
        #expect(file.format.container == "WAV")
        let samples = try decode(file)
        #expect(samples == (try decode(AudioFile(contentsOf: fixtures.pcm16))))
    }

    @Test func truncatedWAVThrowsAtTheCut() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let file = try AudioFile(contentsOf: fixtures.truncatedWAV)
        // libsndfile shortens the frame count to the frames present.
        #expect(file.format.frameCount == Int64(DecodingFixtures.truncatedWAVFrames))
        let (samples, error) = decodeUntilError(file)
        let thrown = try #require(error)
        guard case .truncated(let seconds) = thrown.reason else {
            Issue.record("expected truncated, got \(thrown)")
            return
        }
        #expect(abs(seconds - 0.6) < 1e-9)
        #expect(thrown.description == "cannot decode \(fixtures.truncatedWAV): truncated at 0.6 s")
        // Everything before the cut was delivered, and is right.
        let reference = try await DecodingFixtures.soxDecode(fixtures.pcm16)
        #expect(samples.count == DecodingFixtures.truncatedWAVFrames * 2)
        #expect(samples[...] == reference.prefix(samples.count))
        // Reading again throws again.
        #expect(throws: AudioFileError.self) { try decode(file) }
        // The same from memory.
        let fromMemory = try AudioFile(data: DecodingFixtures.bytes(fixtures.truncatedWAV), name: "cut.wav")
        #expect(decodeUntilError(fromMemory).error == AudioFileError(source: "cut.wav", reason: .truncated(atSeconds: seconds)))
    }

    @Test(arguments: ["long-cut.flac", "long-cut.mp3", "long-cut.ogg", "long-cut.opus"])
    func truncatedCompressedFilesThrowAtTheCut(_ name: String) async throws {
        let fixtures = try await DecodingFixtures.shared()
        let file = try AudioFile(contentsOf: fixtures.path(name))
        let (samples, error) = decodeUntilError(file)
        let thrown = try #require(error)
        print("decoding \(name): \(samples.count / 2) frames, then: \(thrown)")
        guard case .truncated(let seconds) = thrown.reason else {
            Issue.record("expected truncated, got \(thrown)")
            return
        }
        // 60 % of the bytes of 4 s: somewhere in the middle, where the frames delivered end.
        #expect(seconds > 1 && seconds < 3.5)
        #expect(abs(seconds - Double(samples.count / 2) / Double(file.format.sampleRate)) < 1e-9)
    }

    @Test(arguments: ["truncated.aiff", "truncated24.wav"])
    func truncatedAIFFAndWAVEXThrowAtTheCut(_ name: String) async throws {
        let fixtures = try await DecodingFixtures.shared()
        let file = try AudioFile(contentsOf: fixtures.path(name))
        let (samples, error) = decodeUntilError(file)
        let frames = samples.count / 2
        #expect(Int64(frames) == file.format.frameCount)
        #expect(error == AudioFileError(source: fixtures.path(name), reason: .truncated(atSeconds: Double(frames) / 44100)))
        #expect(abs(Double(frames) / 44100 - 0.6) < 0.01)
    }

    @Test func streamedWAVWithPlaceholderSizesIsNotTruncated() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let file = try AudioFile(contentsOf: fixtures.streamedWAV)
        #expect(file.format.frameCount == 44100)
        #expect(try decode(file).count == 44100 * 2)
    }

    @Test func damagedVorbisIsADecodeError() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let (samples, error) = decodeUntilError(try AudioFile(contentsOf: fixtures.damagedVorbis))
        let thrown = try #require(error)
        print("decoding long-damaged.ogg: \(samples.count / 2) frames, then: \(thrown)")
        guard case .decodeFailed(let detail) = thrown.reason else {
            Issue.record("expected decodeFailed, got \(thrown)")
            return
        }
        #expect(detail.hasPrefix("damaged data at "))
    }

    @Test func damagedMP3IsADecodeError() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let (samples, error) = decodeUntilError(try AudioFile(contentsOf: fixtures.damagedMP3))
        let thrown = try #require(error)
        print("decoding long-damaged.mp3: \(samples.count / 2) frames, then: \(thrown)")
        guard case .decodeFailed(let detail) = thrown.reason else {
            Issue.record("expected decodeFailed, got \(thrown)")
            return
        }
        // mpg123 gives up resyncing; libsndfile reports its error, named with the position.
        #expect(detail.hasPrefix("decoding failed at ") && detail.contains(" s (libsndfile: "))
    }

    @Test func descriptions() {
        func text(_ reason: AudioFileError.Reason) -> String { AudioFileError(source: "/x/y.mp3", reason: reason).description }
        #expect(text(.truncated(atSeconds: 12.44)) == "cannot decode /x/y.mp3: truncated at 12.4 s")
        #expect(text(.permissionDenied) == "cannot open /x/y.mp3: permission denied")
        #expect(text(.unsupportedFormat("libsndfile: Format not recognised"))
            == "cannot open /x/y.mp3: not a supported audio format (libsndfile: Format not recognised)")
        #expect(text(.decodeFailed("damaged data at 3.0 s")) == "cannot decode /x/y.mp3: damaged data at 3.0 s")
        #expect(text(.readFailed("Input/output error")) == "cannot read /x/y.mp3: Input/output error")
    }
}

@Suite("Decoding: from memory, seeking, readAll")
struct DecodingAccessTests {
    @Test(arguments: ["pcm16.wav", "pcm16.aiff", "alac.caf", "tagged.flac", "tagged.ogg", "music.opus", "music.mp3"])
    func memoryDecodesLikeTheFile(_ name: String) async throws {
        let fixtures = try await DecodingFixtures.shared()
        let fromFile = try AudioFile(contentsOf: fixtures.path(name))
        let fromMemory = try AudioFile(data: DecodingFixtures.bytes(fixtures.path(name)), name: "memory:\(name)")
        #expect(fromMemory.source == "memory:\(name)")
        #expect(fromMemory.format == fromFile.format)
        #expect(fromMemory.tags == fromFile.tags)
        #expect(try decode(fromMemory) == decode(fromFile))
    }

    @Test(arguments: ["pcm16.wav", "pcm24.wav", "float32.wav", "pcm16.aiff", "alac.caf", "tagged.flac",
                      "tagged.ogg", "music.opus", "music.mp3"])
    func seekThenReadMatchesTheReference(_ name: String) async throws {
        let fixtures = try await DecodingFixtures.shared()
        let whole = try decode(AudioFile(contentsOf: fixtures.path(name)))
        for file in [try AudioFile(contentsOf: fixtures.path(name)),
                     try AudioFile(data: DecodingFixtures.bytes(fixtures.path(name)), name: name)] {
            let start = Int64(file.format.sampleRate / 2)  // 0.5 s
            try file.seek(toFrame: start)
            #expect(file.framePosition == start)
            let block = 4096
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: block * 2)
            defer { buffer.deallocate() }
            #expect(try file.read(into: buffer, frames: block) == block)
            #expect(file.framePosition == start + Int64(block))
            let afterSeek = Array(UnsafeBufferPointer(start: buffer, count: block * 2))
            let expected = Array(whole[Int(start) * 2..<(Int(start) + block) * 2])
            let difference = DecodingSignal.maxDifference(afterSeek, expected)
            if difference > 0 { print("decoding \(name): seek to 0.5 s differs from straight decoding by \(difference)") }
            // Sample-accurate seeking in every format libsndfile decodes here.
            #expect(difference <= 1e-6)
        }
        // And against sox, for the lossless ones: the 0.5 s of the reference.
        if let lossless = DecodingLosslessTests.cases.first(where: { $0.file == name }) {
            let reference = try await DecodingFixtures.soxDecode(fixtures.path(lossless.reference ?? name))
            #expect(DecodingSignal.maxDifference(Array(whole[44100...]), Array(reference[44100...])) <= 1e-4)
        }
    }

    /// `sox file -t s16 -`: the 16-bit samples themselves, whose float value libsndfile's
    /// normalized read gives exactly (divided by 32768).
    @Test("a 16-bit file reads as exactly its samples divided by 32768, whatever the block size and byte order",
          arguments: ["pcm16.wav", "pcm16.aiff", "tagged.flac"])
    func sixteenBitReadsExactly(_ name: String) async throws {
        let fixtures = try await DecodingFixtures.shared()
        let output = fixtures.path(name) + ".\(UUID().uuidString).s16"
        defer { try? FileManager.default.removeItem(atPath: output) }
        try await DecodingFixtures.tool("sox", ["-D", fixtures.path(name), "-t", "s16", "-e", "signed-integer", "-L", output])
        let raw = try DecodingFixtures.bytes(output)
        let expected = raw.withUnsafeBytes { buffer in
            (0..<raw.count / 2).map { Float(Int16(littleEndian: buffer.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self))) / 32768 }
        }
        // Blocks around the file's 4096-frame 16-bit chunks, and one larger than several.
        for block in [1, 4095, 4097, 10_000] {
            #expect(try decode(AudioFile(contentsOf: fixtures.path(name)), block: block) == expected, "blocks of \(block)")
        }
    }

    @Test func seekClampsToTheFile() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let file = try AudioFile(contentsOf: fixtures.flac)
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2048)
        defer { buffer.deallocate() }
        try file.seek(toFrame: 1_000_000)
        #expect(file.framePosition == 44100)
        #expect(try file.read(into: buffer, frames: 1024) == 0)
        try file.seek(toFrame: -5)
        #expect(file.framePosition == 0)
        #expect(try file.read(into: buffer, frames: 1024) == 1024)
        #expect(try file.read(into: buffer, frames: 0) == 0)
    }

    @Test(arguments: ["pcm16.wav", "tagged.flac", "music.mp3"])
    func readAllDecodesTheWholeFileFromTheStart(_ name: String) async throws {
        let fixtures = try await DecodingFixtures.shared()
        let expected = try decode(AudioFile(contentsOf: fixtures.path(name)))
        let file = try AudioFile(contentsOf: fixtures.path(name))
        try file.seek(toFrame: 30000)
        let all = try file.readAll()
        #expect(all == expected)
        #expect(file.framePosition == Int64(all.count / 2))
        #expect(try AudioFile(data: DecodingFixtures.bytes(fixtures.path(name)), name: name).readAll() == expected)
    }

    @Test func readAllOfATruncatedFileThrows() async throws {
        let fixtures = try await DecodingFixtures.shared()
        #expect(throws: AudioFileError(source: fixtures.truncatedWAV, reason: .truncated(atSeconds: 0.6))) {
            try AudioFile(contentsOf: fixtures.truncatedWAV).readAll()
        }
    }
}

@Suite("Decoding: sample-rate conversion")
struct DecodingResamplerTests {
    /// `frames` of a stereo sine at `frequency` Hz, amplitude 0.5.
    private func sine(frequency: Double, rate: Double, frames: Int) -> [Float] {
        (0..<frames).flatMap { index -> [Float] in
            let value = Float(0.5 * sin(2 * Double.pi * frequency * Double(index) / rate))
            return [value, value]
        }
    }

    /// Converts `input` in blocks of `block` frames, as the reader thread would, then drains.
    private func convert(_ input: [Float], with converter: SampleRateConverter, block: Int) -> [Float] {
        let channels = 2
        let totalFrames = input.count / channels
        let capacity = block * 4
        let output = UnsafeMutablePointer<Float>.allocate(capacity: capacity * channels)
        defer { output.deallocate() }
        var result: [Float] = []
        input.withUnsafeBufferPointer { input in
            var offset = 0
            while true {
                let frames = min(block, totalFrames - offset)
                let last = offset + frames >= totalFrames
                let (consumed, produced) = converter.process(
                    input: input.baseAddress! + offset * channels, inputFrames: frames,
                    output: output, outputCapacity: capacity, endOfInput: last)
                result.append(contentsOf: UnsafeBufferPointer(start: output, count: produced * channels))
                offset += consumed
                if last && consumed == frames && produced == 0 { break }
            }
        }
        return result
    }

    @Test func upsamples44100To48000() throws {
        let input = sine(frequency: 1000, rate: 44100, frames: 44100)
        let converter = try SampleRateConverter(channels: 2, inputRate: 44100, outputRate: 48000)
        #expect(abs(converter.ratio - 48000.0 / 44100.0) < 1e-12)
        let output = convert(input, with: converter, block: 512)
        let frames = output.count / 2
        print("resampling 44100→48000: \(input.count / 2) frames in, \(frames) out (expected 48000)")
        #expect(abs(frames - 48000) <= 2 * 512)

        let left = stride(from: 0, to: output.count, by: 2).map { output[$0] }
        let middle = Array(left[4800..<43200])
        let frequency = DecodingSignal.frequency(middle, sampleRate: 48000)
        #expect(abs(frequency - 1000) < 1)
        let inputRMS = DecodingSignal.rms(input[8820..<79380])
        let outputRMS = DecodingSignal.rms(output[9600..<86400])
        let change = 20 * log10(outputRMS / inputRMS)
        print("resampling 44100→48000: \(String(format: "%.2f", frequency)) Hz, RMS change \(String(format: "%.4f", change)) dB")
        #expect(abs(change) < 0.1)
        // The channels stay apart and in step.
        #expect(stride(from: 0, to: output.count, by: 2).allSatisfy { output[$0] == output[$0 + 1] })
    }

    @Test func resetStartsAFreshStream() throws {
        let input = sine(frequency: 1000, rate: 48000, frames: 4800)
        let converter = try SampleRateConverter(channels: 2, inputRate: 48000, outputRate: 44100, quality: .fastest)
        let first = convert(input, with: converter, block: 512)
        converter.reset()
        let second = convert(input, with: converter, block: 512)
        #expect(first == second)
        #expect(abs(first.count / 2 - 4410) <= 2 * 512)
    }

    @Test(arguments: [SampleRateConverter.Quality.best, .medium, .fastest])
    func sameRateIsExact(_ quality: SampleRateConverter.Quality) throws {
        let input = sine(frequency: 1000, rate: 48000, frames: 4800)
        let converter = try SampleRateConverter(channels: 2, inputRate: 48000, outputRate: 48000, quality: quality)
        #expect(converter.ratio == 1)
        #expect(convert(input, with: converter, block: 512) == input)
    }

    /// The level of `frequency` in the left channel of interleaved stereo `samples`, dB relative
    /// to a full-scale sine, from a Blackman–Harris-windowed DFT (sidelobes below −92 dB).
    private func level(of frequency: Double, in samples: [Float], rate: Double) -> Double {
        let left = stride(from: 0, to: samples.count, by: 2).map { Double(samples[$0]) }
        let n = Double(left.count)
        var re = 0.0, im = 0.0, weights = 0.0
        for (i, x) in left.enumerated() {
            let t = 2 * Double.pi * Double(i) / (n - 1)
            let w = 0.35875 - 0.48829 * cos(t) + 0.14128 * cos(2 * t) - 0.01168 * cos(3 * t)
            let angle = 2 * Double.pi * frequency * Double(i) / rate
            re += w * x * cos(angle)
            im -= w * x * sin(angle)
            weights += w
        }
        return 20 * log10(2 * (re * re + im * im).squareRoot() / weights)
    }

    /// The middle of a conversion, away from the filter's start and end.
    private func middle(_ samples: [Float], frames: Int) -> [Float] {
        let start = (samples.count / 2 - frames) / 2 * 2
        return Array(samples[start..<start + frames * 2])
    }

    @Test("44.1 → 48 kHz: a 15 kHz tone's image (at 18.9 kHz after the output's sampling) is 85 dB down or more; 10 kHz passes within 0.1 dB")
    func upsamplingRejectsImages() throws {
        for quality in [SampleRateConverter.Quality.fastest, .medium] {
            let converter = try SampleRateConverter(channels: 2, inputRate: 44100, outputRate: 48000, quality: quality)
            let tone = middle(convert(sine(frequency: 15000, rate: 44100, frames: 44100), with: converter, block: 1000), frames: 32768)
            converter.reset()
            let passband = middle(convert(sine(frequency: 10000, rate: 44100, frames: 44100), with: converter, block: 1000), frames: 32768)
            let signal = level(of: 15000, in: tone, rate: 48000)
            let image = level(of: 48000 - (44100 - 15000), in: tone, rate: 48000)
            let gain = level(of: 10000, in: passband, rate: 48000) - 20 * log10(0.5)
            print("resampling 44100→48000 \(quality): 15 kHz at \(String(format: "%.2f", signal)) dBFS, its image \(String(format: "%.1f", image - signal)) dB; 10 kHz gain \(String(format: "%.3f", gain)) dB")
            #expect(image - signal < -85)
            #expect(abs(gain) < 0.1)
        }
    }

    @Test("48 → 44.1 kHz: a 23 kHz tone (above the output's Nyquist) is 85 dB down or more where it would alias (21.1 kHz)")
    func downsamplingRejectsAliases() throws {
        for quality in [SampleRateConverter.Quality.fastest, .medium] {
            let converter = try SampleRateConverter(channels: 2, inputRate: 48000, outputRate: 44100, quality: quality)
            let output = middle(convert(sine(frequency: 23000, rate: 48000, frames: 48000), with: converter, block: 1000), frames: 32768)
            let alias = level(of: 44100 - 23000, in: output, rate: 44100) - 20 * log10(0.5)
            print("resampling 48000→44100 \(quality): 23 kHz aliased at \(String(format: "%.1f", alias)) dB")
            #expect(alias < -85)
        }
    }

    @Test("every common pair of rates: exactly ceil(in × out / in) frames, in step with the input (a click lands where it should)",
          arguments: [(44100, 48000), (48000, 44100), (22050, 48000), (8000, 48000), (96000, 48000), (48000, 16000)])
    func lengthAndAlignment(_ rates: (Int, Int)) throws {
        let (inputRate, outputRate) = rates
        let converter = try SampleRateConverter(channels: 2, inputRate: Double(inputRate), outputRate: Double(outputRate), quality: .fastest)
        let frames = inputRate / 2 + 7
        var input = [Float](repeating: 0, count: frames * 2)
        let click = inputRate / 4
        input[click * 2] = 1
        input[click * 2 + 1] = 1
        let output = convert(input, with: converter, block: 333)
        let expected = (frames * outputRate + inputRate - 1) / inputRate
        #expect(output.count / 2 == expected)
        let peak = stride(from: 0, to: output.count, by: 2).max { output[$0] < output[$1] }! / 2
        let expectedPeak = Double(click) * Double(outputRate) / Double(inputRate)
        #expect(abs(Double(peak) - expectedPeak) <= 1, "the click is at \(peak), expected \(expectedPeak)")
    }

    @Test("a ratio whose table would be too large (a file's odd rate) makes no polyphase table: speexdsp converts it, as long as it should")
    func oddRatioFallsBack() throws {
        // 44100 → 47999: 47999 phases of 48 taps, over PolyphaseFilter.maximumCoefficients.
        #expect(PolyphaseFilter(channels: 2, inputRate: 44100, outputRate: 47999, design: .fast) == nil)
        #expect(PolyphaseFilter(channels: 3, inputRate: 44100, outputRate: 48000, design: .fast) == nil)
        let converter = try SampleRateConverter(channels: 2, inputRate: 44100, outputRate: 47999, quality: .fastest)
        let output = convert(sine(frequency: 1000, rate: 44100, frames: 4410), with: converter, block: 512)
        #expect(abs(output.count / 2 - 4800) <= 2, "\(output.count / 2) frames for 0.1 s")
    }

    @Test func impossibleConversionsThrow() {
        #expect(throws: SampleRateConverterError.self) { try SampleRateConverter(channels: 2, inputRate: 44100, outputRate: 0) }
        #expect(throws: SampleRateConverterError.self) { try SampleRateConverter(channels: 0, inputRate: 44100, outputRate: 48000) }
        #expect(throws: SampleRateConverterError.self) { try SampleRateConverter(channels: 2, inputRate: 1000, outputRate: 1_000_000) }
    }
}
