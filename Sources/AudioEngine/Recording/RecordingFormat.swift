/// What a recording writes: the container and codec, the rate, the channels, and the bit
/// depth (PCM and FLAC) or quality (Vorbis and Opus). libsndfile writes every one.
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

        /// The type a file name's extension implies (`.wav`, `.aif`/`.aiff`, `.caf`, `.flac`,
        /// `.ogg`/`.oga`, `.opus`), or nil.
        public init?(fileExtension: String) {
            switch fileExtension.lowercased() {
            case "wav", "wave": self = .wav
            case "aif", "aiff", "aifc": self = .aiff
            case "caf": self = .caf
            case "flac": self = .flac
            case "ogg", "oga": self = .oggVorbis
            case "opus": self = .opus
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
            }
        }

        /// Whether samples are kept exactly (PCM or FLAC) with a ``RecordingFormat/bitDepth``.
        public var isLossless: Bool { self != .oggVorbis && self != .opus }
    }

    /// The container and codec.
    public var fileType: FileType
    /// Frames per second of the file (and of the capture: the sound server converts).
    public var sampleRate: Int
    /// The number of channels (1…8).
    public var channels: Int
    /// Bits per sample for WAV, AIFF, CAF (16, 24, or 32 for float) and FLAC (16 or 24).
    public var bitDepth: Int
    /// Encoder quality 0…1 for Ogg Vorbis and Opus (libsndfile's VBR quality).
    public var quality: Double

    /// A format; the defaults are 48 kHz stereo, 16 bits, quality 0.6.
    public init(fileType: FileType, sampleRate: Int = 48_000, channels: Int = 2, bitDepth: Int = 16, quality: Double = 0.6) {
        self.fileType = fileType
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitDepth = bitDepth
        self.quality = quality
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
        }
        guard quality.isFinite, (0...1).contains(quality) else { return "a quality of \(quality) (0…1)" }
        return nil
    }

    /// “FLAC, 48000 Hz, 2 channels, 16 bits” or “Opus, 48000 Hz, 1 channel, quality 0.6”.
    /// The format in words.
    public var description: String {
        let detail = fileType.isLossless ? "\(bitDepth) bit\(bitDepth == 32 && fileType != .flac ? "s float" : "s")" : "quality \(quality)"
        return "\(fileType.displayName), \(sampleRate) Hz, \(channels) channel\(channels == 1 ? "" : "s"), \(detail)"
    }
}
