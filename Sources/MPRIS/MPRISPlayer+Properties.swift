import DBus

/// Property values, derived from the now-playing info and the available commands.
extension MPRISPlayer {
    var isLoaded: Bool { nowPlaying.nowPlayingInfo != nil }

    var playbackStatus: String {
        guard let info = nowPlaying.nowPlayingInfo else { return "Stopped" }
        switch info.playbackState {
        case .playing: return "Playing"
        case .paused, .interrupted: return "Paused"
        case .stopped, .unknown: return "Stopped"
        }
    }

    var loopStatus: String {
        switch nowPlaying.nowPlayingInfo?.repeatMode ?? .off {
        case .off: "None"
        case .one: "Track"
        case .all: "Playlist"
        }
    }

    /// `MinimumRate` and `MaximumRate`: the extremes of the supported rates when rate
    /// changes are available, else 1; always containing 1 and the current rate.
    var rateRange: ClosedRange<Double> {
        var rates: [Double] = [1]
        if commands.changePlaybackRateCommand.isAvailable {
            rates += commands.changePlaybackRateCommand.supportedPlaybackRates
        }
        if let info = nowPlaying.nowPlayingInfo {
            rates.append(info.playbackRate > 0 ? info.playbackRate : info.defaultPlaybackRate)
        }
        return rates.min()!...rates.max()!
    }

    /// `Rate`, never 0: while paused it is the rate playback would resume at.
    var rate: Double {
        guard let info = nowPlaying.nowPlayingInfo else { return 1 }
        let rate = info.playbackRate > 0 ? info.playbackRate : info.defaultPlaybackRate
        return min(max(rate, rateRange.lowerBound), rateRange.upperBound)
    }

    func positionMicroseconds() -> Int64 {
        Int64(clampingSeconds: nowPlaying.currentElapsedTime)
    }

    var durationMicroseconds: Int64? {
        nowPlaying.nowPlayingInfo?.duration.map { Int64(clampingSeconds: $0) }
    }

    // The Can* properties follow the enabled handlers, whether or not now-playing info
    // is set: iOS delivers remote-control events to an app that set none (Programming
    // iOS 6, "Remote Control of Your Sound"), and MPRIS ignores Play, Next… while the
    // matching Can* is false, so these must be true for the commands to arrive. The info
    // narrows them where it says more (the queue position, a length to seek within).

    var canPlay: Bool { commands.playCommand.isAvailable || commands.togglePlayPauseCommand.isAvailable }
    var canPause: Bool { commands.pauseCommand.isAvailable || commands.togglePlayPauseCommand.isAvailable }
    var canStop: Bool { commands.stopCommand.isAvailable }
    /// Without info, only a relative seek can be delivered (there is no length and no
    /// track for `SetPosition`).
    var canSeek: Bool {
        guard isLoaded else { return commands.seekCommand.isAvailable }
        return (durationMicroseconds ?? 0) > 0
            && (commands.seekCommand.isAvailable || commands.changePlaybackPositionCommand.isAvailable)
    }

    var canGoNext: Bool {
        guard commands.nextTrackCommand.isAvailable else { return false }
        guard let info = nowPlaying.nowPlayingInfo, let index = info.queueIndex, let count = info.queueCount else { return true }
        return index + 1 < count || info.repeatMode == .all
    }

    var canGoPrevious: Bool {
        guard commands.previousTrackCommand.isAvailable else { return false }
        guard let info = nowPlaying.nowPlayingInfo, let index = info.queueIndex, info.queueCount != nil else { return true }
        return index > 0 || info.repeatMode == .all
    }

    /// The current item's track id, under the app's prefix.
    var currentTrackID: ObjectPath {
        guard let info = nowPlaying.nowPlayingInfo else { return MPRISPlayer.noTrack }
        return trackPath(info.trackID ?? "item\(nowPlaying.itemNumber)")
    }

    /// `Metadata`: empty when nothing is loaded; otherwise only the keys that have values.
    var metadata: DBusValue {
        guard let info = nowPlaying.nowPlayingInfo else { return .vardict([:]) }
        return metadata(for: info, trackID: currentTrackID)
    }

    /// The `a{sv}` metadata of one item.
    func metadata(for info: NowPlayingInfo, trackID: ObjectPath) -> DBusValue {
        var entries: [String: DBusValue] = ["mpris:trackid": .objectPath(trackID)]
        if let duration = info.duration { entries["mpris:length"] = .int64(Int64(clampingSeconds: duration)) }
        if let art = info.artworkPath { entries["mpris:artUrl"] = .string(FileURI.encode(path: art)) }
        if let title = info.title { entries["xesam:title"] = .string(title) }
        if !info.artists.isEmpty { entries["xesam:artist"] = .strings(info.artists) }
        if let album = info.album { entries["xesam:album"] = .string(album) }
        if !info.albumArtists.isEmpty { entries["xesam:albumArtist"] = .strings(info.albumArtists) }
        if !info.genres.isEmpty { entries["xesam:genre"] = .strings(info.genres) }
        if let n = info.trackNumber { entries["xesam:trackNumber"] = .int32(Int32(clamping: n)) }
        if let n = info.discNumber { entries["xesam:discNumber"] = .int32(Int32(clamping: n)) }
        if !info.composers.isEmpty { entries["xesam:composer"] = .strings(info.composers) }
        if let comment = info.comment { entries["xesam:comment"] = .strings([comment]) }
        if let date = info.contentCreated { entries["xesam:contentCreated"] = .string(date) }
        if let url = info.url { entries["xesam:url"] = .string(url) }
        return .vardict(entries.mapValues(\.withoutNUL))
    }

    /// The MPRIS track id of an item with the app's `trackID`.
    func trackPath(_ trackID: String) -> ObjectPath {
        trackIDPrefix.appending(escaped: trackID)
    }

    /// The values of the Player properties that emit PropertiesChanged.
    func playerSnapshot() -> [String: DBusValue] {
        let range = rateRange
        return [
            "PlaybackStatus": .string(playbackStatus),
            "LoopStatus": .string(loopStatus),
            "Rate": .double(rate),
            "Shuffle": .boolean(nowPlaying.nowPlayingInfo?.shuffleMode == .items),
            "Metadata": metadata,
            "Volume": .double(nowPlaying.nowPlayingInfo?.volume ?? 1),
            "MinimumRate": .double(range.lowerBound),
            "MaximumRate": .double(range.upperBound),
            "CanGoNext": .boolean(canGoNext),
            "CanGoPrevious": .boolean(canGoPrevious),
            "CanPlay": .boolean(canPlay),
            "CanPause": .boolean(canPause),
            "CanSeek": .boolean(canSeek),
        ]
    }

    /// The values of the root properties that emit PropertiesChanged.
    func rootSnapshot() -> [String: DBusValue] {
        var values: [String: DBusValue] = [
            "CanQuit": .boolean(commands.quitCommand.isAvailable),
            "CanRaise": .boolean(commands.raiseCommand.isAvailable),
            "HasTrackList": .boolean(trackList != nil),
            "Identity": .string(configuration.identity),
            "SupportedUriSchemes": .strings(configuration.supportedURISchemes),
            "SupportedMimeTypes": .strings(configuration.supportedMIMETypes),
        ]
        if let entry = configuration.desktopEntry { values["DesktopEntry"] = .string(entry) }
        return values.mapValues(\.withoutNUL)
    }
}

extension Int64 {
    /// Microseconds from seconds, saturating instead of trapping.
    init(clampingSeconds seconds: Double) {
        let micros = (seconds * 1_000_000).rounded()
        if micros.isNaN { self = 0 } else if micros >= 9.2e18 { self = .max } else if micros <= -9.2e18 { self = .min } else { self = Int64(micros) }
    }
}

extension DBusValue {
    /// Strings with NUL bytes truncated at the NUL (tags read from files may hold them;
    /// D-Bus strings cannot).
    var withoutNUL: DBusValue {
        switch self {
        case .string(let s) where s.utf8.contains(0):
            return .string(String(decoding: s.utf8.prefix { $0 != 0 }, as: UTF8.self))
        case .variant(let inner): return .variant(inner.withoutNUL)
        case .array(let t, let items): return .array(t, items.map(\.withoutNUL))
        case .dictionary(let k, let v, let entries):
            return .dictionary(key: k, value: v, entries.map { .init($0.key.withoutNUL, $0.value.withoutNUL) })
        default: return self
        }
    }
}

/// `file://` URIs for local paths, percent-encoding everything outside the unreserved set.
enum FileURI {
    static func encode(path: String) -> String {
        var out = "file://"
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }
}
