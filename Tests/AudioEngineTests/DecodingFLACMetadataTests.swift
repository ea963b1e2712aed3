@testable import AudioEngine
import Foundation
import Testing

// A FLAC file's Vorbis comments and pictures, read without FFmpeg: from hand-built metadata
// blocks (every length rule, hostile values), and against FFmpeg's reading of real files.

/// A FLAC stream's metadata, built block by block.
private struct FLACBuilder {
    var blocks: [(type: UInt8, body: [UInt8])] = [(0, [UInt8](repeating: 0, count: 34))]

    static func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    static func be32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }

    mutating func comments(_ fields: [String], vendor: String = "earshot tests") {
        var body = Self.le32(vendor.utf8.count) + Array(vendor.utf8) + Self.le32(fields.count)
        for field in fields { body += Self.le32(field.utf8.count) + Array(field.utf8) }
        blocks.append((4, body))
    }

    mutating func picture(type: Int, data: [UInt8], mime: String = "image/png") {
        let description = Array("a picture".utf8)
        let body = Self.be32(type) + Self.be32(mime.utf8.count) + Array(mime.utf8) + Self.be32(description.count) + description
            + Self.be32(32) + Self.be32(32) + Self.be32(24) + Self.be32(0) + Self.be32(data.count) + data
        blocks.append((6, body))
    }

    /// `fLaC`, the blocks (the last one flagged), then the start of an audio frame.
    var bytes: [UInt8] {
        var bytes = Array("fLaC".utf8)
        for (index, block) in blocks.enumerated() {
            let last: UInt8 = index == blocks.count - 1 ? 0x80 : 0
            let length = block.body.count
            bytes += [last | block.type, UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + block.body
        }
        return bytes + [0xFF, 0xF8, 0x69, 0x08]
    }
}

@Suite("Decoding: FLAC metadata without FFmpeg")
struct DecodingFLACMetadataTests {
    private static let front: [UInt8] = [0x89, 0x50, 0x4E, 0x47] + [UInt8](repeating: 7, count: 60)
    private static let back: [UInt8] = [0xFF, 0xD8, 0xFF] + [UInt8](repeating: 9, count: 40)

    private static var sample: FLACBuilder {
        var builder = FLACBuilder()
        builder.blocks.append((1, [UInt8](repeating: 0, count: 100))) // padding
        builder.comments(["TITLE=Tëst ✓", "ARTIST=Ann Arbor", "artist=Bo Bell", "ALBUMARTIST=The Band", "COMPOSER=Cy Cole",
                          "TRACKNUMBER=3/12", "DISCNUMBER=1/2", "DESCRIPTION=Live", "NOEQUALS", "DATE=2019"])
        builder.picture(type: 4, data: back)
        builder.picture(type: 3, data: front)
        return builder
    }

    @Test func commentsAndPicturesAreRead() throws {
        let metadata = try #require(FLACMetadata.read(HeaderBytes.Memory(all: Self.sample.bytes), pictures: true))
        #expect(metadata.comments.map(\.key) == ["TITLE", "ARTIST", "artist", "ALBUMARTIST", "COMPOSER", "TRACKNUMBER",
                                                 "DISCNUMBER", "DESCRIPTION", "DATE"], "a field without = is dropped")
        let tags = metadata.tags
        #expect(tags.title == "Tëst ✓")
        #expect(tags.artist == "Ann Arbor")
        #expect(tags.artists == ["Ann Arbor", "Bo Bell"], "keys compare without case")
        #expect(tags.albumArtists == ["The Band"])
        #expect(tags.composer == "Cy Cole")
        #expect(tags.trackNumber == "3/12")
        #expect(tags.discNumber == "1/2")
        #expect(tags.comment == "Live")
        #expect(tags.date == "2019")
        #expect(metadata.pictures.map(\.type) == [4, 3])
        #expect(metadata.coverPicture?.data == Self.front, "the front cover, though it comes second")

        let withoutPictures = try #require(FLACMetadata.read(HeaderBytes.Memory(all: Self.sample.bytes), pictures: false))
        #expect(withoutPictures.pictures.isEmpty)
        #expect(withoutPictures.tags == tags)
    }

    @Test func everyCutInsideTheMetadataIsRefused() {
        let bytes = Self.sample.bytes
        let metadataEnd = bytes.count - 4
        for length in 0..<metadataEnd {
            #expect(FLACMetadata.read(HeaderBytes.Memory(all: Array(bytes.prefix(length))), pictures: true) == nil,
                    "cut at \(length) of \(metadataEnd)")
        }
        #expect(FLACMetadata.read(HeaderBytes.Memory(all: Array(bytes.prefix(metadataEnd))), pictures: true) != nil)
    }

    @Test func lengthsBeyondTheirBlockAreRefused() {
        func read(_ fields: (inout [UInt8]) -> Void) -> FLACMetadata? {
            var builder = FLACBuilder()
            var body = FLACBuilder.le32(0) + FLACBuilder.le32(1) + FLACBuilder.le32(3) + Array("A=B".utf8)
            fields(&body)
            builder.blocks.append((4, body))
            return FLACMetadata.read(HeaderBytes.Memory(all: builder.bytes), pictures: true)
        }
        #expect(read { _ in } != nil)
        #expect(read { $0.replaceSubrange(0..<4, with: FLACBuilder.le32(0x7FFF_FFFF)) } == nil, "vendor length")
        #expect(read { $0.replaceSubrange(4..<8, with: [0xFF, 0xFF, 0xFF, 0xFF]) } == nil, "comment count of 4 G")
        #expect(read { $0.replaceSubrange(8..<12, with: FLACBuilder.le32(4)) } == nil, "comment length")

        var picture = FLACBuilder()
        picture.picture(type: 3, data: Self.front)
        var body = picture.blocks[1].body
        body.replaceSubrange((body.count - Self.front.count - 4)..<(body.count - Self.front.count), with: FLACBuilder.be32(0xFFFF_FFF0))
        picture.blocks[1].body = body
        #expect(FLACMetadata.read(HeaderBytes.Memory(all: picture.bytes), pictures: true) == nil, "picture length")
        #expect(FLACMetadata.read(HeaderBytes.Memory(all: picture.bytes), pictures: false) != nil, "a picture skipped is not parsed")
    }

    @Test func notAFLACStreamFromItsFirstByte() {
        let bytes = Self.sample.bytes
        // An ID3v2 tag before fLaC: left to FFmpeg.
        let id3 = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 0]
        #expect(FLACMetadata.read(HeaderBytes.Memory(all: id3 + bytes), pictures: true) == nil)
        // The first block is not STREAMINFO, or has the wrong length.
        var noStreamInfo = FLACBuilder()
        noStreamInfo.blocks[0] = (4, FLACBuilder.le32(0) + FLACBuilder.le32(0))
        #expect(FLACMetadata.read(HeaderBytes.Memory(all: noStreamInfo.bytes), pictures: true) == nil)
        var shortStreamInfo = FLACBuilder()
        shortStreamInfo.blocks[0].body.removeLast()
        #expect(FLACMetadata.read(HeaderBytes.Memory(all: shortStreamInfo.bytes), pictures: true) == nil)
        // No last-block flag: the reader runs into the audio frame (type 127) and stops.
        var unterminated = Self.sample.bytes
        let lastHeader = unterminated.count - 4 - (Self.sample.blocks.last!.body.count + 4)
        unterminated[lastHeader] &= 0x7F
        #expect(FLACMetadata.read(HeaderBytes.Memory(all: unterminated), pictures: true) == nil)
        #expect(FLACMetadata.read(HeaderBytes.Memory(all: Array("RIFF....WAVE".utf8)), pictures: true) == nil)
        #expect(FLACMetadata.read(HeaderBytes.Memory(all: []), pictures: true) == nil)
    }

    @Test func aPictureOverTheLimitIsIgnored() throws {
        // A FLAC block holds at most 16 MiB - 1 (a 24-bit length), under the limit with its
        // fields: the block body is checked on its own here.
        var builder = FLACBuilder()
        builder.picture(type: 3, data: [UInt8](repeating: 1, count: CoverArt.maximumSize + 1))
        let body = builder.blocks[1].body
        let ignored = FLACMetadata.picture(body[...])
        #expect(ignored != nil, "a picture too large is not damage")
        #expect(ignored??.data == nil, "but it is left out")
        builder.blocks[1].body = Array(body.prefix(body.count - 2))
        let cut = FLACMetadata.picture(builder.blocks[1].body[...])
        #expect(cut == nil, "a picture cut short is damage")
    }

    @Test func invalidUTF8AndControlCharactersAreRepaired() throws {
        var builder = FLACBuilder()
        var body = FLACBuilder.le32(0) + FLACBuilder.le32(1)
        let field = Array("TITLE=La ".utf8) + [0xE9, 0x01] + Array("t\u{7}e".utf8)
        body += FLACBuilder.le32(field.count) + field
        builder.blocks.append((4, body))
        let metadata = try #require(FLACMetadata.read(HeaderBytes.Memory(all: builder.bytes), pictures: false))
        #expect(metadata.tags.title == "La \u{FFFD}te")
    }

    /// ffmpeg's own FLAC files, tags and picture: the same as FFmpeg reads them.
    @Test func realFilesReadAsFFmpegReadsThem() async throws {
        let fixtures = try await DecodingFFmpegFixtures.shared()
        for path in [fixtures.taggedFLAC, fixtures.base.flac] {
            let file = try #require(HeaderBytes.File(path: path))
            let native = try #require(FLACMetadata.read(file, pictures: true), "\(path)")
            let ffmpeg = try #require(FFmpegTagReader.tags(path: path))
            #expect(native.tags == ffmpeg, "\(path)")
        }
        let tags = try AudioFile(contentsOf: fixtures.taggedFLAC).tags
        #expect(tags.artists == ["First Artist", "Second Artist"])
        #expect(tags.albumArtists == ["The Band"])
        #expect(tags.composer == "A Composer")
        #expect(tags.discNumber == "1/2")
        #expect(tags.comment == "A comment")
        let fromMemory = try AudioFile(data: DecodingFixtures.bytes(fixtures.taggedFLAC), name: "tagged")
        #expect(fromMemory.tags == tags)
    }
}
