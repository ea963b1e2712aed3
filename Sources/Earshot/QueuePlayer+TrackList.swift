public import MPRIS
import FoundationEssentials

/// A queue is an MPRIS track list: clients list its items, go to one, add files and remove
/// items.
extension QueuePlayer: TrackListSource {
    public var trackListItems: [NowPlayingInfo] {
        itemsWithArtwork.map { $0.item.nowPlayingInfo(artworkPath: $0.artworkPath, playbackState: .paused) }
    }

    public var canEditTracks: Bool { true }

    public var maximumTrackCount: Int { QueuePlayer.maximumItemCount }

    public func goTo(_ trackID: String) -> RemoteCommandHandlerStatus {
        guard let id = UInt64(trackID), loadItem(id: id) else { return .noSuchContent }
        return .success
    }

    /// Adds a local file (`file://` URIs only).
    public func addTrack(uri: String, after trackID: String?, setAsCurrent: Bool) -> RemoteCommandHandlerStatus {
        // A NUL in the path would end it early for the C calls that open it: another file.
        guard let url = URL(string: uri), url.isFileURL, !url.path.utf8.contains(0) else { return .noSuchContent }
        let after = trackID.flatMap { id in items.first { "\($0.id)" == id } }
        // A stale `after` (removed since the caller looked) is refused, not taken as "at the end".
        if trackID != nil, after == nil { return .noSuchContent }
        let item: Item
        do {
            item = try insert(url, after: after, atStart: trackID == nil)
        } catch is FullError {
            return .commandFailed
        } catch {
            return .noSuchContent
        }
        if setAsCurrent { return goTo("\(item.id)") }
        return .success
    }

    public func removeTrack(_ trackID: String) -> RemoteCommandHandlerStatus {
        guard let item = items.first(where: { "\($0.id)" == trackID }) else { return .noSuchContent }
        remove(item)
        return .success
    }
}
