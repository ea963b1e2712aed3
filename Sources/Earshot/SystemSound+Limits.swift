import AudioEngine
import FoundationEssentials

/// Why a file cannot be a ``SystemSound``, naming the file.
public struct SystemSoundError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why the file was refused.
    public enum Reason: Sendable, Hashable {
        /// The decoded audio would take `decodedBytes`, past `limit`
        /// (``SystemSound/maximumDecodedBytes``); it lasts `duration` seconds.
        case tooLong(duration: Double, decodedBytes: Int64, limit: Int64)
        /// The engine cannot play it (a sample rate it cannot convert, too many sources…).
        case cannotPlay(String)
    }

    /// The file.
    public let path: String
    /// Why it was refused.
    public let reason: Reason

    /// An error for the file at `path`.
    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// A sentence naming the file and the reason.
    public var description: String {
        switch reason {
        case .tooLong(let duration, let bytes, let limit):
            "cannot use \(path) as a system sound: it lasts \(duration.fixed(1)) s, "
                + "\(SystemSoundError.size(bytes)) decoded, past the \(SystemSoundError.size(limit)) limit for system sounds "
                + "(play it with earshot play)"
        case .cannotPlay(let detail):
            "cannot play \(path): \(detail)"
        }
    }

    /// Bytes as MiB or GiB with one decimal.
    static func size(_ bytes: Int64) -> String {
        let mib = Double(bytes) / 1_048_576
        return mib >= 1024 ? "\((mib / 1024).fixed(1)) GiB" : "\(mib.fixed(1)) MiB"
    }
}

extension SystemSound {
    /// The most decoded audio a system sound holds in memory: 16 MiB, about 43 s of
    /// 48 kHz stereo. Alerts and feedback sounds last a second or two.
    public static let maximumDecodedBytes: Int64 = 16 << 20

    /// Refuses a format whose decoded samples (Float32, interleaved) would pass
    /// ``maximumDecodedBytes``. An unknown length passes (such files stream).
    static func checkSize(of format: AudioFileFormat, path: String) throws(SystemSoundError) {
        guard let frames = format.frameCount else { return }
        let channels = Int64(max(1, format.channelCount))
        let (perFrame, overflow1) = channels.multipliedReportingOverflow(by: Int64(MemoryLayout<Float>.size))
        let (bytes, overflow2) = frames.multipliedReportingOverflow(by: perFrame)
        let decoded = overflow1 || overflow2 ? Int64.max : bytes
        guard decoded > maximumDecodedBytes else { return }
        throw SystemSoundError(path: path, reason: .tooLong(duration: format.duration ?? 0, decodedBytes: decoded,
                                                            limit: maximumDecodedBytes))
    }
}
