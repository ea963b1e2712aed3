/// A queue as MPRIS `org.mpris.MediaPlayer2.TrackList` shows it.
///
/// The app's queue (``QueuePlayer`` in Earshot) implements it; ``MPRISPlayer`` exports the
/// interface when given one, and the app calls ``MPRISPlayer/trackListChanged()`` after
/// the queue changes. Track ids are the app's own (``NowPlayingInfo/trackID``); MPRIS
/// sees them escaped under the app's track-id prefix, the same ids `Metadata` uses.
public protocol TrackListSource: AnyObject, Sendable {
    /// The items in order, each with its ``NowPlayingInfo/trackID`` set.
    var trackListItems: [NowPlayingInfo] { get }
    /// Whether ``addTrack(uri:after:setAsCurrent:)`` and ``removeTrack(_:)`` work.
    var canEditTracks: Bool { get }
    /// Makes the item with `trackID` the current one.
    func goTo(_ trackID: String) -> RemoteCommandHandlerStatus
    /// Inserts `uri` after the item `trackID` (at the start when nil).
    func addTrack(uri: String, after trackID: String?, setAsCurrent: Bool) -> RemoteCommandHandlerStatus
    /// Removes the item with `trackID`.
    func removeTrack(_ trackID: String) -> RemoteCommandHandlerStatus
    /// The most items the list takes: `AddTrack` past it is `LimitsExceeded`, so that no
    /// client can grow the list (and the work each change costs) without bound.
    var maximumTrackCount: Int { get }
}

extension TrackListSource {
    /// 10,000 items unless the source says otherwise.
    public var maximumTrackCount: Int { 10_000 }
}
