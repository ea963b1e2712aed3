import AudioEngine
import Platform
import MPRIS
import FoundationEssentials

extension QueuePlayer {
    /// An item for an `http://` or `https://` URL, made without connecting (the stream is
    /// opened when the item is played): titled by the URL's last path component, or its host.
    static func networkItem(_ url: URL) -> Item {
        let name = url.lastPathComponent
        let title = name.isEmpty || name == "/" ? (url.host ?? url.absoluteString) : name
        return Item(id: 0, url: url, title: title, artist: nil, album: nil, duration: 0, tags: AudioFileTags())
    }

    /// Adds a stream for MPRIS `OpenUri` and `AddTrack`: refused (no such content) when the
    /// URL does not parse or names no host.
    func addStream(uri: String, after: Item?, setAsCurrent: Bool, atStart: Bool) -> RemoteCommandHandlerStatus {
        guard let url = URL(string: uri), let host = url.host, !host.isEmpty else { return .noSuchContent }
        let item: Item
        do {
            item = try insert(url, name: nil, holding: nil, after: after, atStart: atStart)
        } catch is FullError {
            return .commandFailed
        } catch {
            return .noSuchContent
        }
        return setAsCurrent ? go(to: item.id, discardsOnFailure: true) : .success
    }

    /// Runs `advance` (called on the engine's event thread, when an item ends) at once, or on a
    /// thread of its own when the queue holds a network stream, whose opening waits for the
    /// server (up to the open timeout): the event thread, which reports every player's events,
    /// never waits on the network.
    func offTheEventThreadIfStreaming(_ advance: @escaping @Sendable () -> Void) {
        guard items.contains(where: { NetworkStream.handles($0.url.absoluteString) }) else { return advance() }
        startThread(name: "earshot-queue-advance", advance)
    }

}

extension NowPlayingInfo {
    /// What a stream adds to an item's info: its ICY title (the station's name as album), and
    /// its length once known; none for an endless stream or one the server will not let seek
    /// (so that MPRIS says CanSeek false).
    mutating func describe(_ stream: NetworkStream) {
        if let title = stream.streamTitle ?? stream.tags.title { self.title = title }
        if artists.isEmpty, let artist = stream.tags.artist { artists = [artist] }
        if album == nil, let station = stream.tags.album { album = station }
        duration = stream.isSeekable ? stream.format.duration : nil
    }
}
