@testable import AudioEngine
import Foundation
import Testing

// Whether a WAV or AIFF file's chunks can hold tags (RIFFChunks): real files from sox and
// ffmpeg, and hand-edited ones (every way a file can say it has more than its audio).

@Suite("WAV and AIFF chunk lists: tags or none")
struct DecodingRIFFChunksTests {
    private static func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    private static func be32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }

    /// `file` with `chunk` (id and body, padded to even) appended and the form's size set to match.
    private static func appending(_ id: String, _ body: [UInt8], to file: [UInt8], bigEndian: Bool = false) -> [UInt8] {
        let size = bigEndian ? be32(body.count) : le32(body.count)
        var result = file + Array(id.utf8) + size + body + (body.count % 2 == 1 ? [0] : [])
        let form = bigEndian ? be32(result.count - 8) : le32(result.count - 8)
        result.replaceSubrange(4..<8, with: form)
        return result
    }

    private static func noTags(_ bytes: [UInt8]) -> Bool { RIFFChunks.carryNoTags(HeaderBytes.Memory(all: bytes)) }

    /// Expects `bytes` to carry no tags, or (`carryNoTags: false`) to be left to FFmpeg; a
    /// failure names `what`, not the bytes.
    private static func expect(_ bytes: [UInt8], carryNoTags expected: Bool, _ what: String,
                               sourceLocation: SourceLocation = #_sourceLocation) {
        let found = noTags(bytes)
        #expect(found == expected, "\(what): carryNoTags \(found)", sourceLocation: sourceLocation)
    }

    @Test("sox's WAV (16 and 24 bits) and AIFF (a COMT chunk), and ffmpeg's WAV (software name only) and AIFF, carry none")
    func plainFilesCarryNone() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let ffmpegWAV = fixtures.path("ffmpeg-plain-\(UUID().uuidString).wav")
        try await DecodingFixtures.ffmpeg(["-i", fixtures.pcm16, ffmpegWAV])
        let ffmpegAIFF = fixtures.path("ffmpeg-plain-\(UUID().uuidString).aiff")
        try await DecodingFixtures.ffmpeg(["-i", fixtures.pcm16, ffmpegAIFF])
        for path in [fixtures.pcm16, fixtures.pcm24, fixtures.aiff, ffmpegWAV, ffmpegAIFF] {
            let file = try #require(HeaderBytes.File(path: path))
            #expect(RIFFChunks.carryNoTags(file), "\(path)")
            // What FFmpeg would have added to libsndfile's tags: nothing.
            #expect(FFmpegTagReader.tags(path: path) == AudioFileTags(), "\(path)")
        }
        // ffmpeg's WAV really has a LIST/INFO (its ISFT), so that path is walked.
        #expect(try DecodingFixtures.bytes(ffmpegWAV).starts(with: Array("RIFF".utf8)))
        #expect(try String(decoding: DecodingFixtures.bytes(ffmpegWAV), as: UTF8.self).contains("ISFT"))
        // sox's AIFF has a COMT chunk ("Processed by SoX"), which neither libsndfile nor FFmpeg
        // reads (the loop above asserts FFmpeg's part).
        #expect(try DecodingFixtures.bytes(fixtures.aiff)[12..<16] == ArraySlice("COMT".utf8))
    }

    @Test("a WAV with a title, an ID3 or bext chunk, or an AIFF with a comment or name, carries tags; they are still read")
    func taggedFilesCarryTags() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let titled = fixtures.path("ffmpeg-titled-\(UUID().uuidString).wav")
        try await DecodingFixtures.ffmpeg(["-i", fixtures.pcm16, "-metadata", "title=Chunked", "-metadata", "artist=Earshot Tests", titled])
        #expect(!RIFFChunks.carryNoTags(try #require(HeaderBytes.File(path: titled))))
        let tags = try AudioFile(contentsOf: titled).tags
        #expect(tags.title == "Chunked" && tags.artist == "Earshot Tests", "\(tags)")
        #expect(!RIFFChunks.carryNoTags(try #require(HeaderBytes.File(path: fixtures.invalidUTF8Title))))

        let wav = try DecodingFixtures.bytes(fixtures.pcm16)
        let id3 = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 0]
        Self.expect(Self.appending("id3 ", id3, to: wav), carryNoTags: false, "an \"id3 \" chunk")
        Self.expect(Self.appending("ID3 ", id3, to: wav), carryNoTags: false, "an \"ID3 \" chunk")
        Self.expect(Self.appending("bext", [UInt8](repeating: 0x41, count: 602), to: wav), carryNoTags: false, "a bext chunk (its description is a comment)")
        let info = Array("INFO".utf8) + Array("ISFT".utf8) + Self.le32(4) + Array("sox!".utf8)
            + Array("ICMT".utf8) + Self.le32(2) + Array("hi".utf8)
        Self.expect(Self.appending("LIST", info, to: wav), carryNoTags: false, "a comment beside the software name")
        Self.expect(Self.appending("LIST", Array("adtl".utf8) + [0, 0, 0, 0], to: wav), carryNoTags: false, "a list that is not INFO")

        let ffmpegAIFF = fixtures.path("ffmpeg-named-\(UUID().uuidString).aiff")
        try await DecodingFixtures.ffmpeg(["-i", fixtures.pcm16, ffmpegAIFF])
        let aiff = try DecodingFixtures.bytes(ffmpegAIFF)
        let plain = Self.noTags(aiff)
        #expect(plain)
        let named = Self.noTags(Self.appending("NAME", Array("A name".utf8), to: aiff, bigEndian: true))
        let annotated = Self.noTags(Self.appending("ANNO", Array("Notes".utf8), to: aiff, bigEndian: true))
        #expect(!named && !annotated)
    }

    @Test("padding, cues and an odd-sized chunk with its pad byte carry none")
    func taglessChunksCarryNone() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let wav = try DecodingFixtures.bytes(fixtures.pcm16)
        let padded = Self.appending("JUNK", [1, 2, 3], to: wav)
        Self.expect(padded, carryNoTags: true, "a JUNK chunk of 3 bytes and its pad byte")
        Self.expect(Self.appending("cue ", Self.le32(0), to: padded), carryNoTags: true, "an empty cue list after it")
        let software = Array("INFO".utf8) + Array("ISFT".utf8) + Self.le32(5) + Array("Lavf6".utf8) + [0]
        Self.expect(Self.appending("LIST", software, to: wav), carryNoTags: true, "a LIST/INFO with only ISFT (an odd length, padded)")
    }

    @Test("files that do not fill their header's size exactly, or are not WAV or AIFF, are left to FFmpeg")
    func anythingElseIsLeftToFFmpeg() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let wav = try DecodingFixtures.bytes(fixtures.pcm16)
        Self.expect(wav + Array("TAG".utf8) + [UInt8](repeating: 0x20, count: 125), carryNoTags: false, "an ID3v1 tag after the RIFF form")
        Self.expect(Array(Self.appending("JUNK", [1, 2, 3], to: wav).dropLast()), carryNoTags: false, "an odd-sized last chunk without its pad byte")
        var overlong = Self.appending("JUNK", [1, 2], to: wav)
        overlong.replaceSubrange(overlong.count - 6..<overlong.count - 2, with: Self.le32(100))
        Self.expect(overlong, carryNoTags: false, "a chunk whose size runs past the end")
        var many = wav
        for _ in 0..<RIFFChunks.maximumChunks { many = Self.appending("JUNK", [0, 0], to: many) }
        Self.expect(many, carryNoTags: false, "more chunks than maximumChunks")
        for path in [fixtures.truncatedWAV, fixtures.streamedWAV, fixtures.truncatedAIFF, fixtures.randomWAV,
                     fixtures.empty, fixtures.flac, fixtures.mp3] {
            let file = try #require(HeaderBytes.File(path: path))
            #expect(!RIFFChunks.carryNoTags(file), "\(path)")
        }
        Self.expect([], carryNoTags: false, "no bytes")
        Self.expect(Array("RIFF".utf8) + Self.le32(36) + Array("WAVE".utf8), carryNoTags: false, "a header that declares more than there is")
    }
}
