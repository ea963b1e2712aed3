public import MPRIS
import AudioEngine
import FoundationEssentials

// Spelled with the module selector: a conformance written through the `TrackListSource`
// typealias is not seen by clients (Swift 6.3).
/// A queue is an MPRIS track list: clients list its items, go to one, add files and remove
/// items.
extension QueuePlayer: MPRIS::TrackListSource {
    /// The items as MPRIS lists them, each with its track id and cached cover art.
    public var trackListItems: [NowPlayingInfo] {
        state.withLock { s in
            if let made = s.trackList { return made }
            let made = s.items.map { $0.nowPlayingInfo(artworkPath: s.artwork[$0.id], playbackState: .paused) }
            s.trackList = made
            return made
        }
    }

    /// A queue takes added and removed tracks.
    public var canEditTracks: Bool { true }

    /// ``QueuePlayer/maximumItemCount``.
    public var maximumTrackCount: Int { QueuePlayer.maximumItemCount }

    /// Loads the item with `trackID` (its ``QueuePlayer/Item/id``); `noSuchContent` when
    /// there is none, or when it cannot be opened: the queue then goes back to the item it
    /// played, where it was.
    public func goTo(_ trackID: String) -> RemoteCommandHandlerStatus {
        guard let id = UInt64(trackID) else { return .noSuchContent }
        return go(to: id, discardsOnFailure: false)
    }

    /// Makes the item `id` current as a remote move (``QueuePlayer/loadItem(id:discardsOnFailure:)``):
    /// `noSuchContent` when there is no such item or it could not be opened (the queue went
    /// back to where it was).
    func go(to id: UInt64, discardsOnFailure: Bool) -> RemoteCommandHandlerStatus {
        guard loadItem(id: id, discardsOnFailure: discardsOnFailure) else { return .noSuchContent }
        return currentItem?.id == id ? .success : .noSuchContent
    }

    /// Adds a local file (a `file://` URI) or an HTTP stream after the item `trackID` (at
    /// the start when nil); `noSuchContent` when the file cannot be played or `trackID` is
    /// gone, `commandFailed` when the queue is full. Made current (`setAsCurrent`), an item
    /// that then cannot be opened (a stream whose server does not answer) leaves the queue
    /// again, which goes back to the item it played, where it was: `noSuchContent`.
    public func addTrack(uri: String, after trackID: String?, setAsCurrent: Bool) -> RemoteCommandHandlerStatus {
        let after = trackID.flatMap { id in items.first { "\($0.id)" == id } }
        // A stale `after` (removed since the caller looked) is refused, not taken as "at the end".
        if trackID != nil, after == nil { return .noSuchContent }
        if NetworkStream.handles(uri) { return addStream(uri: uri, after: after, setAsCurrent: setAsCurrent, atStart: trackID == nil) }
        // The file is found by the bytes of its path, which need not be UTF-8 (LocalFile).
        guard let file = try? LocalFile(uri: uri) else { return .noSuchContent }
        let item: Item
        do {
            item = try insert(file.url, name: file.name, holding: file.heldDescriptor, after: after, atStart: trackID == nil)
        } catch is FullError {
            return .commandFailed
        } catch {
            return .noSuchContent
        }
        return setAsCurrent ? go(to: item.id, discardsOnFailure: true) : .success
    }

    /// Removes the item with `trackID`; `noSuchContent` when there is none.
    public func removeTrack(_ trackID: String) -> RemoteCommandHandlerStatus {
        guard let item = items.first(where: { "\($0.id)" == trackID }) else { return .noSuchContent }
        remove(item)
        return .success
    }
}
