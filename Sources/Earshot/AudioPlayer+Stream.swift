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
    /// `StreamTitle`, when the server sends one, is ``NetworkStream/streamTitle``.
    public var stream: NetworkStream? { voice.file as? NetworkStream }

    /// Calls `handler` on the engine's event thread when the player's source runs dry (true:
    /// a stalled network stream, the player waits) and when it has refilled (false). See
    /// `Voice+Supply.swift` for the contract. For the playback-state event.
    package func onStarvation(_ handler: (@Sendable (_ starved: Bool) -> Void)?) {
        voice.setSupplyHandler(handler)
    }
}
