internal import CSndFile
import Glibc

/// Format facts of an opened file: what `AVAudioPlayer.settings` reports.
public struct AudioFileFormat: Sendable, Hashable {
    /// Frames per second.
    public var sampleRate: Int
    /// Interleaved channels per frame.
    public var channelCount: Int
    /// The number of frames, or `nil` when libsndfile cannot tell (a FLAC stream written to a
    /// pipe, a truncated Ogg file). For MP3 without a Xing/Info header it is an estimate from the
    /// file size and the first frame's bit rate (and libsndfile stops decoding there). For a
    /// WAV or AIFF whose data chunk is cut, it is the frames actually present. For files FFmpeg
    /// decodes it is the container's duration (an MP4's, without the encoder's priming and
    /// padding), or FFmpeg's estimate from the bit rate where the container states none (ADTS).
    public var frameCount: Int64?
    /// The container: "WAV", "AIFF", "CAF", "FLAC", "Ogg", "MPEG", "W64", "RF64", "AU", and
    /// from FFmpeg "MPEG-4", "ADTS", "ASF", "Matroska", …
    public var container: String
    /// The encoding: "PCM 16-bit", "float 32-bit", "ALAC 16-bit", "FLAC 24-bit", "Vorbis",
    /// "Opus", "MPEG Layer III", "u-law", "IMA ADPCM", and from FFmpeg "AAC LC", "HE-AAC",
    /// "HE-AACv2", "WMA v2", …
    public var encoding: String
    /// Bits per sample for PCM (integer or float), ALAC and FLAC; `nil` for lossy encodings.
    public var bitDepth: Int?

    /// Creates a format description.
    public init(
        sampleRate: Int, channelCount: Int, frameCount: Int64?, container: String, encoding: String, bitDepth: Int?
    ) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.frameCount = frameCount
        self.container = container
        self.encoding = encoding
        self.bitDepth = bitDepth
    }

    /// The length in seconds, when the frame count is known.
    public var duration: Double? {
        guard let frameCount, sampleRate > 0 else { return nil }
        return Double(frameCount) / Double(sampleRate)
    }
}

/// The text tags of a file: libsndfile's `sf_get_string` (RIFF INFO, AIFF, Vorbis comments in
/// FLAC and Ogg, ID3 in MP3), completed from FFmpeg's metadata (artist lists, album artists,
/// composer, disc number; and everything, MP4 atoms included, for the files FFmpeg decodes).
/// Absent or empty tags are `nil`. Invalid UTF-8 is repaired with replacement characters rather
/// than rejected.
public struct AudioFileTags: Sendable, Hashable {
    public var title: String?
    public var artist: String?
    public var album: String?
    public var genre: String?
    public var trackNumber: String?
    public var date: String?
    public var comment: String?
    /// The artists, one name each (several Vorbis `ARTIST` comments, an ID3v2.4 list); `[artist]`
    /// when the format has a single string.
    public var artists: [String] = []
    /// The album's artists (MP4 `aART`, ID3v2 `TPE2`, Vorbis `ALBUMARTIST`).
    public var albumArtists: [String] = []
    /// The composer.
    public var composer: String?
    /// The disc number as written ("1" or "1/2").
    public var discNumber: String?

    /// Creates tags.
    public init(
        title: String? = nil, artist: String? = nil, album: String? = nil, genre: String? = nil,
        trackNumber: String? = nil, date: String? = nil, comment: String? = nil
    ) {
        self.title = title
        self.artist = artist
        self.artists = artist.map { [$0] } ?? []
        self.album = album
        self.genre = genre
        self.trackNumber = trackNumber
        self.date = date
        self.comment = comment
    }
}

// MARK: - From libsndfile

extension AudioFileFormat {
    /// Describes an open file from its SF_INFO.
    init(info: SF_INFO, handle: OpaquePointer) {
        let major = Int(info.format) & Int(SF_FORMAT_TYPEMASK)
        let minor = Int(info.format) & Int(SF_FORMAT_SUBMASK)
        let known = info.frames >= 0 && info.frames != Int64.max
        let (encoding, bitDepth) = Self.encoding(minor: minor, major: major, handle: handle)
        self.init(
            sampleRate: Int(info.samplerate),
            channelCount: Int(info.channels),
            frameCount: known ? info.frames : nil,
            container: Self.container(major: major, handle: handle),
            encoding: encoding,
            bitDepth: bitDepth
        )
    }

    private static func container(major: Int, handle: OpaquePointer) -> String {
        switch major {
        case Int(SF_FORMAT_WAV), Int(SF_FORMAT_WAVEX): "WAV"
        case Int(SF_FORMAT_RF64): "RF64"
        case Int(SF_FORMAT_W64): "W64"
        case Int(SF_FORMAT_AIFF): "AIFF"
        case Int(SF_FORMAT_CAF): "CAF"
        case Int(SF_FORMAT_FLAC): "FLAC"
        case Int(SF_FORMAT_OGG): "Ogg"
        case Int(SF_FORMAT_MPEG): "MPEG"
        case Int(SF_FORMAT_AU): "AU"
        default: formatName(major, handle: handle)
        }
    }

    private static func encoding(minor: Int, major: Int, handle: OpaquePointer) -> (String, Int?) {
        let pcm = major == Int(SF_FORMAT_FLAC) ? "FLAC" : "PCM"
        return switch minor {
        case Int(SF_FORMAT_PCM_S8), Int(SF_FORMAT_PCM_U8): ("\(pcm) 8-bit", 8)
        case Int(SF_FORMAT_PCM_16): ("\(pcm) 16-bit", 16)
        case Int(SF_FORMAT_PCM_24): ("\(pcm) 24-bit", 24)
        case Int(SF_FORMAT_PCM_32): ("\(pcm) 32-bit", 32)
        case Int(SF_FORMAT_FLOAT): ("float 32-bit", 32)
        case Int(SF_FORMAT_DOUBLE): ("float 64-bit", 64)
        case Int(SF_FORMAT_ALAC_16): ("ALAC 16-bit", 16)
        case Int(SF_FORMAT_ALAC_20): ("ALAC 20-bit", 20)
        case Int(SF_FORMAT_ALAC_24): ("ALAC 24-bit", 24)
        case Int(SF_FORMAT_ALAC_32): ("ALAC 32-bit", 32)
        case Int(SF_FORMAT_VORBIS): ("Vorbis", nil)
        case Int(SF_FORMAT_OPUS): ("Opus", nil)
        case Int(SF_FORMAT_MPEG_LAYER_I): ("MPEG Layer I", nil)
        case Int(SF_FORMAT_MPEG_LAYER_II): ("MPEG Layer II", nil)
        case Int(SF_FORMAT_MPEG_LAYER_III): ("MPEG Layer III", nil)
        case Int(SF_FORMAT_ULAW): ("u-law", nil)
        case Int(SF_FORMAT_ALAW): ("A-law", nil)
        case Int(SF_FORMAT_IMA_ADPCM): ("IMA ADPCM", nil)
        case Int(SF_FORMAT_MS_ADPCM): ("MS ADPCM", nil)
        case Int(SF_FORMAT_GSM610): ("GSM 6.10", nil)
        default: (formatName(minor, handle: handle), nil)
        }
    }

    /// libsndfile's own name for a major or minor format ("SD2 (Sound Designer II)").
    private static func formatName(_ format: Int, handle: OpaquePointer) -> String {
        var info = SF_FORMAT_INFO(format: Int32(format), name: nil, extension: nil)
        let status = sf_command(handle, Int32(SFC_GET_FORMAT_INFO), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size))
        guard status == 0, let name = info.name else { return "format 0x\(String(format, radix: 16))" }
        return String(cString: name)
    }
}

extension AudioFileTags {
    /// Reads the tags of an open file.
    init(handle: OpaquePointer) {
        func tag(_ kind: Int) -> String? {
            guard let text = sf_get_string(handle, Int32(kind)) else { return nil }
            let bytes = UnsafeRawBufferPointer(start: text, count: strlen(text))
            let string = String(decoding: bytes, as: UTF8.self)
            return string.isEmpty ? nil : string
        }
        self.init(
            title: tag(Int(SF_STR_TITLE)), artist: tag(Int(SF_STR_ARTIST)), album: tag(Int(SF_STR_ALBUM)),
            genre: tag(Int(SF_STR_GENRE)), trackNumber: tag(Int(SF_STR_TRACKNUMBER)),
            date: tag(Int(SF_STR_DATE)), comment: tag(Int(SF_STR_COMMENT))
        )
    }
}
