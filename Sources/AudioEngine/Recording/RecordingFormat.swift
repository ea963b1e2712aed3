/// What a recording writes: the container and codec, the rate, the channels, and the bit
/// depth (PCM, FLAC, Apple Lossless), quality (Vorbis and Opus) or bit rate (AAC). libsndfile
/// writes WAV, AIFF, CAF, FLAC, Ogg Vorbis and Opus; FFmpeg (loaded at run time, as for
/// decoding) encodes AAC and Apple Lossless into MPEG-4 (`.m4a`) files.
public struct RecordingFormat: Sendable, Hashable, CustomStringConvertible {
    /// The file type.
    public enum FileType: String, Sendable, Hashable, CaseIterable {
        /// RIFF WAVE (PCM or float).
        case wav
        /// AIFF (PCM or float, AIFF-C for float).
        case aiff
        /// Core Audio Format.
        case caf
        /// FLAC, lossless.
        case flac
        /// Ogg Vorbis.
        case oggVorbis = "ogg"
        /// Opus in Ogg (48, 24, 16, 12 or 8 kHz).
        case opus
        /// AAC (Low Complexity) in an MPEG-4 audio file (`.m4a`), as iOS records by default,
        /// encoded by FFmpeg's `aac` encoder at ``RecordingFormat/bitRate``. The file's edit
        /// list states the encoder's priming and padding, so that it decodes to the frames
        /// recorded, no more. Rates: 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100,
        /// 48000, 64000, 88200 or 96000 Hz. The file's sample table is written when the
        /// recording ends: one that fails on a full disk leaves an unreadable file.
        case aac = "m4a"
        /// Apple Lossless (ALAC) in an MPEG-4 audio file (`.m4a`), 16 or 24 bits, encoded by
        /// FFmpeg's `alac` encoder. Chosen by name only: the `.m4a` extension means ``aac``.
        case appleLossless = "alac"

        /// The type a file name's extension implies (`.wav`, `.aif`/`.aiff`, `.caf`, `.flac`,
        /// `.ogg`/`.oga`, `.opus`, `.m4a` for AAC), or nil.
        public init?(fileExtension: String) {
            switch fileExtension.lowercased() {
            case "wav", "wave": self = .wav
            case "aif", "aiff", "aifc": self = .aiff
            case "caf": self = .caf
            case "flac": self = .flac
            case "ogg", "oga": self = .oggVorbis
            case "opus": self = .opus
            case "m4a": self = .aac
            default: return nil
            }
        }

        /// The type's name as people know it (“FLAC”, “Ogg Vorbis”).
        public var displayName: String {
            switch self {
            case .wav: "WAV"
            case .aiff: "AIFF"
            case .caf: "CAF"
            case .flac: "FLAC"
            case .oggVorbis: "Ogg Vorbis"
            case .opus: "Opus"
            case .aac: "AAC"
            case .appleLossless: "Apple Lossless"
            }
        }

        /// Whether samples are kept exactly (PCM, FLAC, Apple Lossless) with a ``RecordingFormat/bitDepth``.
        public var isLossless: Bool { self != .oggVorbis && self != .opus && self != .aac }

        /// Whether FFmpeg encodes the type (AAC and Apple Lossless); libsndfile writes the others.
        public var isEncodedByFFmpeg: Bool { self == .aac || self == .appleLossless }
    }

    /// The container and codec.
    public var fileType: FileType
    /// Frames per second of the file (and of the capture: the sound server converts).
    public var sampleRate: Int
    /// The number of channels (1…8).
    public var channels: Int
    /// Bits per sample for WAV, AIFF, CAF (16, 24, or 32 for float), FLAC (16 or 24) and
    /// Apple Lossless (16 or 24).
    public var bitDepth: Int
    /// Encoder quality 0…1 for Ogg Vorbis and Opus (libsndfile's VBR quality).
    public var quality: Double
    /// AAC's bit rate in bits per second (constant); nil for 64 kb/s per channel (128 kb/s
    /// stereo). A rate above AAC's limit for the sample rate (6 bits per sample and channel)
    /// is lowered to it. Other types ignore it.
    public var bitRate: Int?

    /// A format; the defaults are 48 kHz stereo, 16 bits, quality 0.6, and for AAC 64 kb/s
    /// per channel.
    public init(fileType: FileType, sampleRate: Int = 48_000, channels: Int = 2, bitDepth: Int = 16, quality: Double = 0.6,
                bitRate: Int? = nil) {
        self.fileType = fileType
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitDepth = bitDepth
        self.quality = quality
        self.bitRate = bitRate
    }

    /// The sample rates AAC (MPEG-4 audio's sampling-frequency table) can be written at.
    public static let aacSampleRates = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000]

    /// The bit rate AAC is encoded at: ``bitRate``, or 64 kb/s per channel, within AAC's
    /// limit of 6 bits per sample and channel.
    public var aacBitRate: Int {
        let limit = 6 * sampleRate * channels
        return min(bitRate ?? 64_000 * channels, limit)
    }

    /// Why the format cannot be written, or nil.
    public var problem: String? {
        guard (1...8).contains(channels) else { return "\(channels) channels (1…8 are supported)" }
        guard (8000...192_000).contains(sampleRate) else { return "a sample rate of \(sampleRate) Hz (8000…192000 are supported)" }
        switch fileType {
        case .wav, .aiff, .caf:
            guard [8, 16, 24, 32].contains(bitDepth) else { return "\(bitDepth)-bit \(fileType.displayName) (8, 16, 24 or 32 bits)" }
        case .flac:
            guard [8, 16, 24].contains(bitDepth) else { return "\(bitDepth)-bit FLAC (8, 16 or 24 bits)" }
        case .opus:
            guard [8000, 12000, 16000, 24000, 48000].contains(sampleRate) else {
                return "Opus at \(sampleRate) Hz (8000, 12000, 16000, 24000 or 48000 Hz)"
            }
        case .oggVorbis: break
        case .aac:
            guard Self.aacSampleRates.contains(sampleRate) else {
                return "AAC at \(sampleRate) Hz (\(Self.aacSampleRates.map(String.init).joined(separator: ", ")) Hz)"
            }
            if let bitRate, bitRate < 8000 { return "AAC at \(bitRate) b/s (8000 b/s at least)" }
        case .appleLossless:
            guard [16, 24].contains(bitDepth) else { return "\(bitDepth)-bit Apple Lossless (16 or 24 bits)" }
        }
        guard quality.isFinite, (0...1).contains(quality) else { return "a quality of \(quality) (0…1)" }
        return nil
    }

    /// “FLAC, 48000 Hz, 2 channels, 16 bits”, “Opus, 48000 Hz, 1 channel, quality 0.6” or
    /// “AAC, 44100 Hz, 2 channels, 128 kb/s”. The format in words.
    public var description: String {
        let detail = fileType == .aac ? "\(aacBitRate / 1000) kb/s"
            : fileType.isLossless ? "\(bitDepth) bit\(bitDepth == 32 && [.wav, .aiff, .caf].contains(fileType) ? "s float" : "s")"
            : "quality \(quality)"
        return "\(fileType.displayName), \(sampleRate) Hz, \(channels) channel\(channels == 1 ? "" : "s"), \(detail)"
    }
}
