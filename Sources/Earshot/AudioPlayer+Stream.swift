public import AudioEngine
import FoundationEssentials

extension AudioPlayer {
    /// The source for `url`: a ``NetworkStream`` for `http://` and `https://`, otherwise the
    /// file at its path.
    static func openSource(_ url: URL) throws -> any FrameSource {
        if NetworkStream.handles(url.absoluteString) { return try NetworkStream(url: url.absoluteString) }
        return try AudioFile(contentsOf: url.path)
    }

    /// The network stream the player plays, when it was made from an `http://` or `https://` URL.
    ///
    /// An endless stream (a radio) has no ``duration`` (0) and cannot seek; its ICY
    /// `StreamTitle`, when the server sends one, is the stream's `streamTitle`.
    public var stream: NetworkStream? { voice.file as? NetworkStream }
}
