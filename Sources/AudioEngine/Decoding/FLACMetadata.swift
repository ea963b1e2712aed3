import Glibc

/// The metadata blocks of a FLAC file that Earshot reads itself: the Vorbis comments and the
/// pictures, so that playing a FLAC file never loads FFmpeg (its dozens of libraries cost a
/// `earshot play` about 35 ms of CPU to load, more than ten seconds of playing).
///
/// A FLAC stream opens with `fLaC` and a chain of metadata blocks, each a 4-byte header (the
/// last-block flag, the type, a 24-bit big-endian length) and its body (RFC 9639, section 8).
/// `VORBIS_COMMENT` (type 4) holds little-endian lengths and `KEY=value` strings in UTF-8;
/// `PICTURE` (type 6) holds big-endian fields and the image's bytes. Nothing past the last
/// block is read, and no audio frame.
///
/// Every length is checked against the block it sits in and the block against the file: a
/// file that breaks a rule is not FLAC as far as this reader goes (``read(_:pictures:)``
/// returns nil), and the caller asks FFmpeg instead, as for any other format. A file with
/// tags before `fLaC` (an ID3v2 tag, which some taggers add) is left to FFmpeg the same way.
struct FLACMetadata: Sendable, Equatable {
    /// The Vorbis comments in file order: the field name as written, and the value.
    var comments: [(key: String, value: String)] = []
    /// The pictures whose bytes were read (with `pictures: true`), in file order.
    var pictures: [Picture] = []

    /// An embedded picture: its role (the ID3v2 picture type, 3 for the front cover) and bytes.
    struct Picture: Sendable, Equatable {
        var type: UInt32
        var data: [UInt8]
    }

    static func == (a: FLACMetadata, b: FLACMetadata) -> Bool {
        a.pictures == b.pictures && a.comments.elementsEqual(b.comments) { $0.key == $1.key && $0.value == $1.value }
    }

    /// Reads the metadata blocks of the FLAC stream in `source`, with the pictures' bytes when
    /// `pictures` is true (otherwise picture blocks are skipped unread). Nil when `source` is
    /// not a FLAC stream that starts at its first byte, or breaks one of the format's rules.
    static func read(_ source: some HeaderByteSource, pictures wantPictures: Bool) -> FLACMetadata? {
        guard let magic = source.bytes(at: 0, count: 4), magic.elementsEqual("fLaC".utf8) else { return nil }
        var metadata = FLACMetadata()
        var offset = 4
        var sawStreamInfo = false
        // A chain without its last-block flag, or longer than any real file's, is not trusted.
        for _ in 0..<maximumBlocks {
            guard let header = source.bytes(at: offset, count: 4) else { return nil }
            let isLast = header[0] & 0x80 != 0
            let type = header[0] & 0x7F
            let length = Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            let body = offset + 4
            guard body + length <= source.count else { return nil }
            // STREAMINFO must come first (RFC 9639, 8.2); type 127 is forbidden.
            if !sawStreamInfo { guard type == 0, length == 34 else { return nil } }
            sawStreamInfo = true
            switch type {
            case 4:
                guard let bytes = source.bytes(at: body, count: length),
                      let comments = vorbisComments(bytes[...]) else { return nil }
                metadata.comments += comments
            case 6 where wantPictures:
                guard let bytes = source.bytes(at: body, count: length), let found = picture(bytes[...]) else { return nil }
                if let found { metadata.pictures.append(found) }
            case 127:
                return nil
            default:
                break
            }
            offset = body + length
            if isLast { return metadata }
        }
        return nil
    }

    /// More blocks than this and the chain is taken for damage: real files have a handful (and
    /// each picture or padding is one).
    static let maximumBlocks = 1024

    /// A `VORBIS_COMMENT` block's fields; nil when a length overruns the block.
    static func vorbisComments(_ bytes: ArraySlice<UInt8>) -> [(key: String, value: String)]? {
        var reader = BlockReader(bytes: bytes)
        guard let vendorLength = reader.littleEndian32(), reader.skip(Int(vendorLength)),
              let count = reader.littleEndian32() else { return nil }
        // Each comment takes 4 bytes at least: a count the block cannot hold is damage.
        guard Int(count) <= reader.remaining / 4 else { return nil }
        var comments: [(key: String, value: String)] = []
        comments.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let length = reader.littleEndian32(), let field = reader.take(Int(length)) else { return nil }
            // A comment without "=" is invalid; it is dropped, as FFmpeg drops it.
            guard let equals = field.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = AudioFileTags.repairedText(field[field.startIndex..<equals])
            let value = AudioFileTags.repairedText(field[(equals + 1)...])
            comments.append((key, value))
        }
        return comments
    }

    /// A `PICTURE` block's type and image; `.some(nil)` for a picture larger than
    /// ``CoverArt/maximumSize`` or without bytes (ignored, as FFmpeg's reading is), nil when a
    /// length overruns the block.
    static func picture(_ bytes: ArraySlice<UInt8>) -> Picture?? {
        var reader = BlockReader(bytes: bytes)
        guard let type = reader.bigEndian32(),
              let mimeLength = reader.bigEndian32(), reader.skip(Int(mimeLength)),
              let descriptionLength = reader.bigEndian32(), reader.skip(Int(descriptionLength)),
              reader.skip(16), // width, height, colour depth, colours used
              let dataLength = reader.bigEndian32(), let data = reader.take(Int(dataLength)) else { return nil }
        guard !data.isEmpty, data.count <= CoverArt.maximumSize else { return .some(nil) }
        return Picture(type: type, data: Array(data))
    }

    /// The picture a player shows: the front cover (type 3), else the first one.
    var coverPicture: Picture? {
        pictures.first { $0.type == 3 } ?? pictures.first
    }

    /// The comments as tags, with the field names FFmpeg's Vorbis comment reader gives (see
    /// ``AudioFileTags/init(fields:)``).
    var tags: AudioFileTags {
        var fields: [String: [String]] = [:]
        for (key, value) in comments where !key.isEmpty && !value.isEmpty {
            fields[key.lowercased(), default: []].append(value)
        }
        return AudioFileTags(fields: fields)
    }
}

/// Reads a block's fields front to back; every read checks the bytes left.
private struct BlockReader {
    var bytes: ArraySlice<UInt8>
    var remaining: Int { bytes.count }

    mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, count <= bytes.count else { return nil }
        defer { bytes = bytes.dropFirst(count) }
        return bytes.prefix(count)
    }

    mutating func skip(_ count: Int) -> Bool { take(count) != nil }

    mutating func littleEndian32() -> UInt32? {
        take(4).map { $0.reversed().reduce(0) { $0 << 8 | UInt32($1) } }
    }

    mutating func bigEndian32() -> UInt32? {
        take(4).map { $0.reduce(0) { $0 << 8 | UInt32($1) } }
    }
}
