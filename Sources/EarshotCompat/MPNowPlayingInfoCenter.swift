package import Earshot

/// The playback state the app reports, with Apple's raw values.
public enum MPNowPlayingPlaybackState: UInt, Sendable {
    /// The app has not said: the state follows the info's playback rate (0 is paused).
    case unknown = 0
    /// Playing.
    case playing = 1
    /// Paused.
    case paused = 2
    /// Stopped.
    case stopped = 3
    /// Interrupted (MPRIS shows it as paused).
    case interrupted = 4
}

/// What plays now, with `MPNowPlayingInfoCenter`'s names over Earshot's
/// `NowPlayingInfoCenter.default`, which MPRIS exports (`Metadata`, `PlaybackStatus`,
/// `Position`).
///
/// The dictionary reads back as it was set. The keys Earshot shows are listed at
/// ``MPMediaItemPropertyTitle`` and the others nearby; other keys are kept and not shown.
/// The first info set publishes the app on MPRIS, as iOS needs no call for the lock screen
/// to show it.
///
/// `@unchecked Sendable`: its mutable state (the dictionary as set, the playback state)
/// lives under a lock.
public final class MPNowPlayingInfoCenter: NSObject, @unchecked Sendable {
    private static let shared = MPNowPlayingInfoCenter(center: .default, publishes: true)

    /// The process's now-playing center.
    public static func `default`() -> MPNowPlayingInfoCenter { shared }

    /// Earshot's center the info goes to.
    let center: NowPlayingInfoCenter
    private let publishes: Bool
    private let state = Locked<(info: Unchecked<[String: Any]>?, playbackState: MPNowPlayingPlaybackState)>((nil, .unknown))

    /// A center over Earshot's `center` (the package's tests make their own, which do not
    /// publish; apps use ``default()``).
    package init(center: NowPlayingInfoCenter, publishes: Bool = false) {
        self.center = center
        self.publishes = publishes
    }

    /// The info on what plays, keyed by `MPMediaItemProperty…` and
    /// `MPNowPlayingInfoProperty…`; nil when nothing does. Setting it replaces what MPRIS
    /// shows; the elapsed time is the position at that moment, extrapolated with the
    /// playback rate until the next set.
    public var nowPlayingInfo: [String: Any]? {
        get { state.withLock { $0.info?.value } }
        set {
            state.withLock { $0.info = newValue.map(Unchecked.init) }
            apply()
            if publishes, newValue != nil { RemoteControlPublication.publishIfNeeded() }
        }
    }

    /// The playback state (`unknown` until set: the state then follows the info's playback
    /// rate).
    public var playbackState: MPNowPlayingPlaybackState {
        get { state.withLock { $0.playbackState } }
        set {
            state.withLock { $0.playbackState = newValue }
            apply()
        }
    }

    /// The repeat or shuffle type shown by the shared command center changed.
    func modesChanged() { apply() }

    /// Gives Earshot's center the info as it is now.
    private func apply() {
        let (info, playbackState) = state.withLock { ($0.info?.value, $0.playbackState) }
        let commands = MPRemoteCommandCenter.shared()
        let repeatType = commands.changeRepeatModeCommand.currentRepeatType
        let shuffleType = commands.changeShuffleModeCommand.currentShuffleType
        center.nowPlayingInfo = info.map { NowPlayingInfo(info: $0, state: playbackState, repeatType: repeatType, shuffleType: shuffleType) }
    }
}

extension NowPlayingInfo {
    /// Earshot's info for an iOS dictionary.
    init(info: [String: Any], state: MPNowPlayingPlaybackState, repeatType: MPRepeatType, shuffleType: MPShuffleType) {
        self.init()
        func string(_ key: String) -> String? {
            switch info[key] {
            case let value as String: value
            case let value as NSString: value as String
            default: nil
            }
        }
        title = string(MPMediaItemPropertyTitle)
        artists = string(MPMediaItemPropertyArtist).map { [$0] } ?? []
        album = string(MPMediaItemPropertyAlbumTitle)
        albumArtists = string(MPMediaItemPropertyAlbumArtist).map { [$0] } ?? []
        genres = string(MPMediaItemPropertyGenre).map { [$0] } ?? []
        composers = string(MPMediaItemPropertyComposer).map { [$0] } ?? []
        comment = string(MPMediaItemPropertyComments)
        trackNumber = number(info[MPMediaItemPropertyAlbumTrackNumber]).map { Int($0) }
        discNumber = number(info[MPMediaItemPropertyDiscNumber]).map { Int($0) }
        let isLive = (info[MPNowPlayingInfoPropertyIsLiveStream] as? Bool) ?? false
        duration = isLive ? nil : number(info[MPMediaItemPropertyPlaybackDuration])
        elapsedTime = number(info[MPNowPlayingInfoPropertyElapsedPlaybackTime]) ?? 0
        let rate = number(info[MPNowPlayingInfoPropertyPlaybackRate])
        playbackRate = rate ?? 1
        defaultPlaybackRate = number(info[MPNowPlayingInfoPropertyDefaultPlaybackRate]) ?? 1
        queueIndex = number(info[MPNowPlayingInfoPropertyPlaybackQueueIndex]).map { Int($0) }
        queueCount = number(info[MPNowPlayingInfoPropertyPlaybackQueueCount]).map { Int($0) }
        trackID = string(MPNowPlayingInfoPropertyExternalContentIdentifier)
            ?? number(info[MPMediaItemPropertyPersistentID]).map { String(UInt64($0)) }
        url = (info[MPNowPlayingInfoPropertyAssetURL] as? URL)?.absoluteString
            ?? (info[MPMediaItemPropertyAssetURL] as? URL)?.absoluteString
        artworkPath = (info[MPMediaItemPropertyArtwork] as? MPMediaItemArtwork)?.filePath
        playbackState = switch state {
        case .playing: .playing
        case .paused: .paused
        case .stopped: .stopped
        case .interrupted: .interrupted
        case .unknown: rate == 0 ? .paused : .playing
        }
        if state == .paused || state == .stopped || state == .interrupted { playbackRate = 0 }
        repeatMode = switch repeatType { case .off: .off; case .one: .one; case .all: .all }
        shuffleMode = shuffleType == .off ? .off : .items
    }
}
