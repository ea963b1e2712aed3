/// Where a voice's frames come from: a decoder over a file, or PCM already in memory.
/// Read by the engine's reader thread only.
public protocol FrameSource: AnyObject, Sendable {
    var format: AudioFileFormat { get }
    /// The path or name, for messages.
    var source: String { get }
    /// Reads up to `frames` interleaved frames; 0 at the end.
    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int
    func seek(toFrame frame: Int64) throws(AudioFileError)
}

extension AudioFile: FrameSource {}

/// Decoded audio kept in memory (for system sounds): decode once, play many times.
public final class PCMAudio: Sendable {
    public let format: AudioFileFormat
    public let source: String
    let samples: [Float]

    /// Decodes the whole of `file`.
    public init(decoding file: AudioFile) throws(AudioFileError) {
        samples = try file.readAll()
        var format = file.format
        format.frameCount = Int64(samples.count / max(1, format.channelCount))
        self.format = format
        source = file.source
    }

    /// A new read position over the same samples, for one voice.
    public func makeCursor() -> FrameSource { PCMCursor(audio: self) }
}

/// A read position over ``PCMAudio``.
///
/// `@unchecked Sendable`: the samples are immutable; `frame` is read and written only by
/// the thread that reads the source (the engine's reader thread, one voice per cursor).
final class PCMCursor: FrameSource, @unchecked Sendable {
    let audio: PCMAudio
    private var frame = 0
    init(audio: PCMAudio) { self.audio = audio }

    var format: AudioFileFormat { audio.format }
    var source: String { audio.source }

    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
        let channels = max(1, audio.format.channelCount)
        let total = audio.samples.count / channels
        let count = max(0, min(frames, total - frame))
        audio.samples.withUnsafeBufferPointer { all in
            buffer.update(from: all.baseAddress! + frame * channels, count: count * channels)
        }
        frame += count
        return count
    }

    func seek(toFrame target: Int64) throws(AudioFileError) {
        frame = Int(max(0, min(target, Int64(audio.samples.count / max(1, audio.format.channelCount)))))
    }
}
