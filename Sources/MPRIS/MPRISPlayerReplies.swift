package import DBus

/// Another player's `PlaybackStatus`, as the MPRIS specification spells it.
package enum MPRISPlaybackStatus: String, Sendable, Hashable, CaseIterable {
    /// `Playing`.
    case playing = "Playing"
    /// `Paused`.
    case paused = "Paused"
    /// `Stopped`.
    case stopped = "Stopped"

    /// The status a property value holds (bare or in a variant); nil for anything else: a
    /// foreign player's value is not trusted to be one of the three.
    package init?(_ value: DBusValue?) {
        guard let text = value?.unwrapped.string, let status = MPRISPlaybackStatus(rawValue: text) else { return nil }
        self = status
    }
}

/// Why a call to another app's player gave no usable answer: it answered with an error or
/// not at all (``call(_:)``), or its answer is not what MPRIS says it is (``malformed(_:)``).
/// Another app is not trusted: no answer of it traps or is taken on faith.
package enum MPRISClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The player (or the bus about it) answered with an error, or did not answer in time.
    case call(DBusError)
    /// The player answered something MPRIS does not allow there.
    case malformed(String)

    /// The bus's message for a failed call (as the bus layer words it), or what was wrong.
    package var description: String {
        switch self {
        case .call(let error): error.description
        case .malformed(let detail): "malformed MPRIS reply: \(detail)"
        }
    }
}

/// What a player said of itself in `GetAll`, or changed in `PropertiesChanged`, of the
/// properties its followers act on. A property it did not name, or named with a value of
/// the wrong type, is nil: one bad property does not hide the others.
package struct MPRISPlayerProperties: Sendable, Hashable {
    /// `PlaybackStatus`.
    package var playbackStatus: MPRISPlaybackStatus?
    /// `CanPause`.
    package var canPause: Bool?

    /// Properties as given.
    package init(playbackStatus: MPRISPlaybackStatus? = nil, canPause: Bool? = nil) {
        self.playbackStatus = playbackStatus
        self.canPause = canPause
    }

    /// The properties of a `{string: variant}` dictionary.
    package init(_ properties: [String: DBusValue]) {
        playbackStatus = MPRISPlaybackStatus(properties["PlaybackStatus"])
        canPause = properties["CanPause"]?.unwrapped.bool
    }

    /// Whether it names none of them (a `PropertiesChanged` of metadata only).
    package var isEmpty: Bool { playbackStatus == nil && canPause == nil }

    /// The answer to `GetAll(org.mpris.MediaPlayer2.Player)`: one `a{sv}`.
    package static func decodeGetAll(_ reply: [DBusValue]) throws(MPRISClientError) -> MPRISPlayerProperties {
        guard reply.count == 1, let properties = reply[0].stringKeyedDictionary else {
            throw .malformed("GetAll answered (\(reply.map(\.type.signature).joined(separator: ", "))), not one a{sv}")
        }
        return MPRISPlayerProperties(properties)
    }

    /// The answer to `Get(org.mpris.MediaPlayer2.Player, PlaybackStatus)`: one variant
    /// holding a status.
    package static func decodePlaybackStatus(_ reply: [DBusValue]) throws(MPRISClientError) -> MPRISPlaybackStatus {
        guard reply.count == 1, let status = MPRISPlaybackStatus(reply[0]) else {
            throw .malformed("Get(PlaybackStatus) answered \(reply.count == 1 ? "an unknown status" : "\(reply.count) values")")
        }
        return status
    }

    /// The changes of a `PropertiesChanged` signal's arguments (`s a{sv} as`) if they are
    /// about the player interface; nil for another interface or arguments of another shape.
    package static func decodeChanged(_ arguments: [DBusValue]) -> MPRISPlayerProperties? {
        guard arguments.count >= 2, arguments[0].string == MPRISPlayer.playerInterface,
              let changed = arguments[1].stringKeyedDictionary else { return nil }
        return MPRISPlayerProperties(changed)
    }
}

/// A transport method of another player's `org.mpris.MediaPlayer2.Player`.
package enum MPRISTransportCommand: Sendable, Hashable {
    /// `PlayPause`.
    case playPause
    /// `Play`.
    case play
    /// `Pause`.
    case pause
    /// `Stop`.
    case stop
    /// `Next`.
    case next
    /// `Previous`.
    case previous
    /// `Seek`, by a signed offset in microseconds.
    case seek(microseconds: Int64)

    /// Its method name.
    package var method: String {
        switch self {
        case .playPause: "PlayPause"
        case .play: "Play"
        case .pause: "Pause"
        case .stop: "Stop"
        case .next: "Next"
        case .previous: "Previous"
        case .seek: "Seek"
        }
    }

    /// Its input arguments.
    package var arguments: [DBusValue] {
        if case .seek(let offset) = self { return [.int64(offset)] }
        return []
    }

    /// The command a call of `method` with `arguments` makes; nil for another method, or
    /// `Seek` without an offset.
    package init?(method: String, arguments: [DBusValue] = []) {
        switch method {
        case "PlayPause": self = .playPause
        case "Play": self = .play
        case "Pause": self = .pause
        case "Stop": self = .stop
        case "Next": self = .next
        case "Previous": self = .previous
        case "Seek":
            guard arguments.count == 1, case .int64(let offset) = arguments[0] else { return nil }
            self = .seek(microseconds: offset)
        default: return nil
        }
    }
}
