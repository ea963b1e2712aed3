// The now-playing dictionary's keys, with MediaPlayer's names and values. The ones listed
// reach MPRIS; any other key is kept in the dictionary and not shown.

/// The item's title (a `String`; MPRIS `xesam:title`).
public let MPMediaItemPropertyTitle = "title"
/// The item's artist (a `String`; MPRIS `xesam:artist`).
public let MPMediaItemPropertyArtist = "artist"
/// The album's title (a `String`; MPRIS `xesam:album`).
public let MPMediaItemPropertyAlbumTitle = "albumTitle"
/// The album's artist (a `String`; MPRIS `xesam:albumArtist`).
public let MPMediaItemPropertyAlbumArtist = "albumArtist"
/// The item's genre (a `String`; MPRIS `xesam:genre`).
public let MPMediaItemPropertyGenre = "genre"
/// The item's composer (a `String`; MPRIS `xesam:composer`).
public let MPMediaItemPropertyComposer = "composer"
/// A comment (a `String`; MPRIS `xesam:comment`).
public let MPMediaItemPropertyComments = "comments"
/// The item's length in seconds (a number; MPRIS `mpris:length`).
public let MPMediaItemPropertyPlaybackDuration = "playbackDuration"
/// The item's track number on its album (a number; MPRIS `xesam:trackNumber`).
public let MPMediaItemPropertyAlbumTrackNumber = "albumTrackNumber"
/// The item's disc number (a number; MPRIS `xesam:discNumber`).
public let MPMediaItemPropertyDiscNumber = "discNumber"
/// The item's art (an ``MPMediaItemArtwork``; MPRIS `mpris:artUrl`, a file).
public let MPMediaItemPropertyArtwork = "artwork"
/// The item's identifier (a number; MPRIS `mpris:trackid`, unless
/// ``MPNowPlayingInfoPropertyExternalContentIdentifier`` is set).
public let MPMediaItemPropertyPersistentID = "persistentID"
/// Where the item is (a `URL`; MPRIS `xesam:url`).
public let MPMediaItemPropertyAssetURL = "assetURL"

/// The position in seconds when the info was set (a number; MPRIS `Position`, extrapolated
/// with the playback rate).
public let MPNowPlayingInfoPropertyElapsedPlaybackTime = "MPNowPlayingInfoPropertyElapsedPlaybackTime"
/// The rate: 0 paused, 1 normal speed (a number; MPRIS `Rate`, and `PlaybackStatus` while
/// the playback state is unknown).
public let MPNowPlayingInfoPropertyPlaybackRate = "MPNowPlayingInfoPropertyPlaybackRate"
/// The rate playback resumes at (a number; MPRIS `Rate` while paused).
public let MPNowPlayingInfoPropertyDefaultPlaybackRate = "MPNowPlayingInfoPropertyDefaultPlaybackRate"
/// The item's place in the queue, from 0 (a number).
public let MPNowPlayingInfoPropertyPlaybackQueueIndex = "MPNowPlayingInfoPropertyPlaybackQueueIndex"
/// The number of items in the queue (a number).
public let MPNowPlayingInfoPropertyPlaybackQueueCount = "MPNowPlayingInfoPropertyPlaybackQueueCount"
/// Where the item is (a `URL`; MPRIS `xesam:url`).
public let MPNowPlayingInfoPropertyAssetURL = "MPNowPlayingInfoPropertyAssetURL"
/// The app's own identifier of the item (a `String`; MPRIS `mpris:trackid`).
public let MPNowPlayingInfoPropertyExternalContentIdentifier = "MPNowPlayingInfoPropertyExternalContentIdentifier"
/// Whether the item is a live stream (a `Bool`; its length is then unknown).
public let MPNowPlayingInfoPropertyIsLiveStream = "MPNowPlayingInfoPropertyIsLiveStream"
/// The item's media type (kept; not shown).
public let MPNowPlayingInfoPropertyMediaType = "MPNowPlayingInfoPropertyMediaType"
