/// The chunk list of a WAV or AIFF file, walked from its header to its last byte without
/// reading the audio: whether the file can hold tags beyond the ones libsndfile reads, or an
/// embedded picture (which comes in an ID3 chunk).
///
/// libsndfile reads a WAV's LIST/INFO and an AIFF's name and author itself; FFmpeg is asked
/// for the rest (ID3 chunks, the fields libsndfile has no name for: album artists, composer,
/// disc) and for cover art. Loading FFmpeg costs a start dozens of libraries: `earshot play`
/// of a plain WAV reached the sink 76 ms after the command, against 30 ms for the same audio
/// as FLAC. Most WAV and AIFF files carry no tags at all, and their chunks say so.
enum RIFFChunks {
    /// True only when `source` is a RIFF WAVE (or big-endian RIFX) or an AIFF/AIFC file whose
    /// chunks all carry no tags: format, audio, peaks, padding, cues, loops, instrument, an
    /// AIFF's timestamped comments, and a WAV's LIST/INFO that names only the encoding
    /// software (ISFT, which Earshot does not show). The chunks must fill the file exactly, as its header declares. False for
    /// anything else (then FFmpeg reads the tags, as before): another container, an ID3,
    /// bext or other chunk, a LIST with tags, a chunk that runs past the end, bytes after the
    /// last chunk (a tag appended to the file), a size a streaming writer left unknown, or
    /// more than ``maximumChunks`` chunks.
    static func carryNoTags(_ source: some HeaderByteSource) -> Bool {
        guard let header = source.bytes(at: 0, count: 12) else { return false }
        let kind = (fourCC(header[0..<4]), fourCC(header[8..<12]))
        let layout: Layout
        switch kind {
        case ("RIFF", "WAVE"): layout = .wave(bigEndian: false)
        case ("RIFX", "WAVE"): layout = .wave(bigEndian: true)
        case ("FORM", "AIFF"), ("FORM", "AIFC"): layout = .aiff
        default: return false
        }
        // The form's size counts everything after its first eight bytes.
        guard 8 + Int(layout.size(header[4..<8])) == source.count else { return false }
        var offset = 12, chunks = 0
        while offset < source.count {
            chunks += 1
            guard chunks <= maximumChunks, let chunk = source.bytes(at: offset, count: 8) else { return false }
            let id = fourCC(chunk[0..<4]), size = Int(layout.size(chunk[4..<8]))
            let body = offset + 8
            // Chunks start on even offsets: an odd-sized chunk is followed by a pad byte.
            let next = body + size + size % 2
            guard next <= source.count else { return false }
            switch layout {
            case .wave(let bigEndian):
                if id == "LIST" {
                    guard listNamesOnlySoftware(source, at: body, size: size, bigEndian: bigEndian) else { return false }
                } else if !taglessWAVEChunks.contains(id) {
                    return false
                }
            case .aiff:
                guard taglessAIFFChunks.contains(id) else { return false }
            }
            offset = next
        }
        return offset == source.count
    }

    /// More chunks than a WAV or AIFF file without tags has: a file that has them is read by
    /// FFmpeg, not walked a chunk at a time.
    static let maximumChunks = 32

    /// WAV chunks with no text in them: the format, the audio, its length in frames, peak
    /// levels, padding, cue points, sampler loops, instrument and ACID loop data.
    static let taglessWAVEChunks: Set<String> = ["fmt ", "data", "fact", "PEAK", "JUNK", "junk", "PAD ", "FLLR",
                                                  "cue ", "smpl", "inst", "acid"]
    /// AIFF chunks with no tags in them: the format, the audio, the AIFC version, markers,
    /// instrument data, and timestamped comments (COMT: sox writes "Processed by SoX"), which
    /// neither libsndfile nor FFmpeg reads as tags (FFmpeg takes NAME, AUTH, ANNO, "(c) " and
    /// ID3 chunks).
    static let taglessAIFFChunks: Set<String> = ["COMM", "SSND", "FVER", "MARK", "INST", "COMT"]

    /// Whether a LIST chunk (its body at `offset`, `size` bytes) is an INFO list whose only
    /// entry names the software (ISFT: ffmpeg writes "Lavf…" into every WAV it makes).
    private static func listNamesOnlySoftware(_ source: some HeaderByteSource, at offset: Int, size: Int,
                                              bigEndian: Bool) -> Bool {
        guard size >= 4, size <= 4096, let body = source.bytes(at: offset, count: size),
              fourCC(body[0..<4]) == "INFO" else { return false }
        let layout = Layout.wave(bigEndian: bigEndian)
        var index = 4
        while index < body.count {
            guard index + 8 <= body.count, fourCC(body[index..<index + 4]) == "ISFT" else { return false }
            let length = Int(layout.size(body[index + 4..<index + 8]))
            index += 8 + length + length % 2
        }
        return index == body.count
    }

    private enum Layout {
        case wave(bigEndian: Bool)
        case aiff

        /// A chunk's size field: little-endian in RIFF, big-endian in RIFX and AIFF.
        func size(_ bytes: ArraySlice<UInt8>) -> UInt32 {
            switch self {
            case .wave(bigEndian: false): return bytes.reversed().reduce(0) { $0 << 8 | UInt32($1) }
            case .wave(bigEndian: true), .aiff: return bytes.reduce(0) { $0 << 8 | UInt32($1) }
            }
        }
    }

    /// Four bytes as ASCII; a byte outside printable ASCII makes an identifier no chunk has.
    private static func fourCC(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.map { (0x20...0x7E).contains($0) ? $0 : 0x3F }, as: UTF8.self)
    }
}
