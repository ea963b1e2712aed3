/// What is playing (the `MPNowPlayingInfoCenter` dictionary, typed).
///
/// Times are in seconds. `elapsedTime` is the position at the moment the info is set;
/// ``NowPlayingInfoCenter`` extrapolates it with `playbackRate` while playing.
public struct NowPlayingInfo: Sendable, Hashable {
    /// The app's own stable identifier of the item; MPRIS publishes it escaped under the
    /// app's track-id prefix. When `nil`, the center numbers items as they change.
    public var trackID: String?
    /// The item's title (MPRIS `xesam:title`).
    public var title: String?
    /// The item's artists, one name each (MPRIS `xesam:artist`).
    public var artists: [String] = []
    /// The album the item is on (MPRIS `xesam:album`).
    public var album: String?
    /// The album's artists, one name each (MPRIS `xesam:albumArtist`).
    public var albumArtists: [String] = []
    /// The item's genres (MPRIS `xesam:genre`).
    public var genres: [String] = []
    /// The item's track number on its album (MPRIS `xesam:trackNumber`).
    public var trackNumber: Int?
    /// The disc of the album the item is on (MPRIS `xesam:discNumber`).
    public var discNumber: Int?
    /// The composers, one name each (MPRIS `xesam:composer`).
    public var composers: [String] = []
    /// A free-text comment (MPRIS `xesam:comment`, published as a one-string list).
    public var comment: String?
    /// When the item was created, as an ISO 8601 date or date-time (`2019`, `2019-05-01`,
    /// `2019-05-01T12:00:00Z`): MPRIS `xesam:contentCreated`.
    public var contentCreated: String?
    /// Where the item is, as a URI (`file:///music/a.flac`, `https://…`): MPRIS `xesam:url`.
    public var url: String?
    /// The item's length; `nil` when unknown (a stream).
    public var duration: Double?
    /// The position, in seconds from the start of the item, when the info was set.
    public var elapsedTime: Double = 0
    /// The current rate: 0 when paused, 1 at normal speed.
    public var playbackRate: Double = 1
    /// The rate playback resumes at (MPRIS `Rate` while paused).
    public var defaultPlaybackRate: Double = 1
    /// A local image file for the item's art.
    public var artworkPath: String?
    /// The item's place in the queue, from 0, and the queue's length.
    public var queueIndex: Int?
    /// The number of items in the queue.
    public var queueCount: Int?
    /// Whether the item plays, is paused or stopped (MPRIS `PlaybackStatus`).
    public var playbackState: PlaybackState = .playing
    /// How the queue repeats (MPRIS `LoopStatus`).
    public var repeatMode: RepeatMode = .off
    /// Whether the queue plays shuffled (MPRIS `Shuffle`).
    public var shuffleMode: ShuffleMode = .off
    /// The player's volume, 0 or more (1 is full scale).
    public var volume: Double = 1

    /// Info for an item with the common fields set; the others keep their defaults.
    public init(
        title: String? = nil, artists: [String] = [], album: String? = nil, duration: Double? = nil,
        elapsedTime: Double = 0, playbackState: PlaybackState = .playing
    ) {
        self.title = title
        self.artists = artists
        self.album = album
        self.duration = duration
        self.elapsedTime = elapsedTime
        self.playbackState = playbackState
        self.playbackRate = playbackState == .playing ? 1 : 0
    }

    /// Whether two infos describe the same item (so a change between them is not a new track).
    func isSameItem(as other: NowPlayingInfo) -> Bool {
        if trackID != nil || other.trackID != nil { return trackID == other.trackID }
        return title == other.title && artists == other.artists && album == other.album
            && duration == other.duration && queueIndex == other.queueIndex
    }
}

/// The `MPNowPlayingPlaybackState` analog.
public enum PlaybackState: String, Sendable, Hashable {
    /// The item plays.
    case playing
    /// The item is paused where it is.
    case paused
    /// Nothing plays; the position is back at the start.
    case stopped
    /// Playback was interrupted (by another session or the screen lock); MPRIS shows it
    /// as paused.
    case interrupted
    /// The app has not said.
    case unknown
}

/// Repeat modes (`MPRepeatType`): MPRIS `LoopStatus` None, Track, Playlist.
public enum RepeatMode: String, Sendable, Hashable, CaseIterable {
    /// No repeat.
    case off
    /// The current item repeats (MPRIS `Track`).
    case one
    /// The whole queue repeats (MPRIS `Playlist`).
    case all
}

/// Shuffle modes (`MPShuffleType`): MPRIS `Shuffle` false or true.
public enum ShuffleMode: String, Sendable, Hashable, CaseIterable {
    /// The queue plays in order.
    case off
    /// The queue's items play in a shuffled order.
    case items
}
