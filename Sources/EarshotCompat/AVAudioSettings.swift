// The settings keys and format identifiers of AVFoundation and Core Audio, as
// `AVAudioPlayer.settings` fills them.

/// A Core Audio format identifier: a four-character code (`'lpcm'`, `'aac '`, …).
public typealias AudioFormatID = UInt32

/// Linear PCM (`'lpcm'`).
public let kAudioFormatLinearPCM: AudioFormatID = 0x6C70_636D
/// MPEG-4 AAC (`'aac '`).
public let kAudioFormatMPEG4AAC: AudioFormatID = 0x6161_6320
/// Apple Lossless (`'alac'`).
public let kAudioFormatAppleLossless: AudioFormatID = 0x616C_6163
/// FLAC (`'flac'`).
public let kAudioFormatFLAC: AudioFormatID = 0x666C_6163
/// Opus (`'opus'`).
public let kAudioFormatOpus: AudioFormatID = 0x6F70_7573
/// MPEG-1/2 Layer 3 (`'.mp3'`).
public let kAudioFormatMPEGLayer3: AudioFormatID = 0x2E6D_7033

/// The settings key of the format: an `NSNumber` holding an ``AudioFormatID``.
public let AVFormatIDKey = "AVFormatIDKey"
/// The settings key of the sample rate, in hertz: an `NSNumber` holding a `Double`.
public let AVSampleRateKey = "AVSampleRateKey"
/// The settings key of the channel count: an `NSNumber` holding an `Int`.
public let AVNumberOfChannelsKey = "AVNumberOfChannelsKey"
/// The settings key of linear PCM's bit depth: an `NSNumber` holding an `Int`.
public let AVLinearPCMBitDepthKey = "AVLinearPCMBitDepthKey"

extension AudioFormatID {
    /// The identifier for an Earshot encoding name ("PCM_16", "AAC", "FLAC", …); 0 when
    /// Core Audio has none for it (Vorbis).
    init(encoding: String) {
        let name = encoding.uppercased()
        self = if name.hasPrefix("PCM") || name.hasPrefix("FLOAT") || name.hasPrefix("DOUBLE") { kAudioFormatLinearPCM }
        else if name.contains("AAC") { kAudioFormatMPEG4AAC }
        else if name.contains("ALAC") { kAudioFormatAppleLossless }
        else if name.contains("FLAC") { kAudioFormatFLAC }
        else if name.contains("OPUS") { kAudioFormatOpus }
        else if name.contains("MP3") || name.contains("MPEG") { kAudioFormatMPEGLayer3 }
        else { 0 }
    }
}
