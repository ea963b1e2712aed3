import Synchronization

/// What a remote-command handler reports (the `MPRemoteCommandHandlerStatus` analog).
/// The bus side replies normally on ``success`` and with a named error otherwise.
public enum RemoteCommandHandlerStatus: Sendable, Hashable {
    /// The command was carried out.
    case success
    /// The requested content (a track, a URI) does not exist.
    case noSuchContent
    /// Nothing is loaded that the command could act on.
    case noActionableNowPlayingItem
    /// The output device the command needs is missing.
    case deviceNotFound
    /// The command failed for another reason.
    case commandFailed

    /// The D-Bus error name for a failure status.
    public var errorName: String? {
        switch self {
        case .success: nil
        case .noSuchContent: "org.earshot.RemoteCommand.NoSuchContent"
        case .noActionableNowPlayingItem: "org.earshot.RemoteCommand.NoActionableNowPlayingItem"
        case .deviceNotFound: "org.earshot.RemoteCommand.DeviceNotFound"
        case .commandFailed: "org.earshot.RemoteCommand.CommandFailed"
        }
    }
}

/// Which remote command an event belongs to.
public enum RemoteCommandKind: String, Sendable, Hashable, CaseIterable {
    /// ``RemoteCommandCenter/playCommand``.
    case play
    /// ``RemoteCommandCenter/pauseCommand``.
    case pause
    /// ``RemoteCommandCenter/togglePlayPauseCommand``.
    case togglePlayPause
    /// ``RemoteCommandCenter/stopCommand``.
    case stop
    /// ``RemoteCommandCenter/nextTrackCommand``.
    case nextTrack
    /// ``RemoteCommandCenter/previousTrackCommand``.
    case previousTrack
    /// ``RemoteCommandCenter/seekCommand``.
    case seek
    /// ``RemoteCommandCenter/changePlaybackPositionCommand``.
    case changePlaybackPosition
    /// ``RemoteCommandCenter/changePlaybackRateCommand``.
    case changePlaybackRate
    /// ``RemoteCommandCenter/changeRepeatModeCommand``.
    case changeRepeatMode
    /// ``RemoteCommandCenter/changeShuffleModeCommand``.
    case changeShuffleMode
    /// ``RemoteCommandCenter/changeVolumeCommand``.
    case changeVolume
    /// ``RemoteCommandCenter/openURICommand``.
    case openURI
    /// ``RemoteCommandCenter/raiseCommand``.
    case raise
    /// ``RemoteCommandCenter/quitCommand``.
    case quit
}

/// The event of a command that carries no value (play, pause, next, quit, …).
public struct RemoteCommandEvent: Sendable, Hashable {
    /// The command the event is for.
    public let command: RemoteCommandKind

    /// An event for `command`.
    public init(command: RemoteCommandKind) { self.command = command }
}

/// A relative seek.
public struct SeekCommandEvent: Sendable, Hashable {
    /// Seconds to move by; negative moves back.
    public let offset: Double

    /// A seek by `offset` seconds.
    public init(offset: Double) { self.offset = offset }
}

/// A jump to an absolute position in the current item.
public struct ChangePlaybackPositionCommandEvent: Sendable, Hashable {
    /// Seconds from the start of the item.
    public let positionTime: Double

    /// A jump to `positionTime` seconds from the start of the item.
    public init(positionTime: Double) { self.positionTime = positionTime }
}

/// A change of the playback rate.
public struct ChangePlaybackRateCommandEvent: Sendable, Hashable {
    /// The new rate, within the command's ``RemoteCommand/supportedPlaybackRates``.
    public let playbackRate: Double

    /// A change to `playbackRate`.
    public init(playbackRate: Double) { self.playbackRate = playbackRate }
}

/// A change of the repeat mode.
public struct ChangeRepeatModeCommandEvent: Sendable, Hashable {
    /// The new repeat mode.
    public let repeatMode: RepeatMode

    /// A change to `repeatMode`.
    public init(repeatMode: RepeatMode) { self.repeatMode = repeatMode }
}

/// A change of the shuffle mode.
public struct ChangeShuffleModeCommandEvent: Sendable, Hashable {
    /// The new shuffle mode.
    public let shuffleMode: ShuffleMode

    /// A change to `shuffleMode`.
    public init(shuffleMode: ShuffleMode) { self.shuffleMode = shuffleMode }
}

/// A change of the volume.
public struct ChangeVolumeCommandEvent: Sendable, Hashable {
    /// The new volume, 0 or more (1 is full scale).
    public let volume: Double

    /// A change to `volume`.
    public init(volume: Double) { self.volume = volume }
}

/// A request to open a URI and play it.
public struct OpenURICommandEvent: Sendable, Hashable {
    /// The URI to open, its scheme one the app declared as supported.
    public let uri: String

    /// A request to open `uri`.
    public init(uri: String) { self.uri = uri }
}

/// A token for a handler added with ``RemoteCommand/addTarget(handler:)``.
public struct RemoteCommandTarget: Sendable, Hashable {
    let id: UInt64
}

/// One remote command (the `MPRemoteCommand` analog): whether it is enabled and who
/// handles it. A command is *available* (and MPRIS advertises it) when it is enabled and
/// has at least one target; the most recently added target handles each event.
public final class RemoteCommand<Event: Sendable>: Sendable {
    /// Which command this is.
    public let kind: RemoteCommandKind
    private let state: Mutex<State>
    private let changed: @Sendable () -> Void

    private struct State {
        var isEnabled = true
        var targets: [(id: UInt64, handler: @Sendable (Event) -> RemoteCommandHandlerStatus)] = []
        var nextID: UInt64 = 1
        var supportedPlaybackRates: [Double] = [0.5, 1.0, 1.5, 2.0]
    }

    init(_ kind: RemoteCommandKind, changed: @escaping @Sendable () -> Void) {
        self.kind = kind
        self.changed = changed
        self.state = Mutex(State())
    }

    /// Whether the command may be sent; a disabled command's targets are not called.
    public var isEnabled: Bool {
        get { state.withLock { $0.isEnabled } }
        set {
            let old = state.withLock { s in
                defer { s.isEnabled = newValue }
                return s.isEnabled
            }
            if old != newValue { changed() }
        }
    }

    /// Whether the command is enabled and has a target.
    public var isAvailable: Bool { state.withLock { $0.isEnabled && !$0.targets.isEmpty } }

    /// Adds a handler. It runs on the thread that delivers the command: for MPRIS, the
    /// ``MPRISPlayer``'s command queue (one command at a time, in arrival order, never the
    /// bus thread), whose caller gets its reply when the handler returns.
    @discardableResult
    public func addTarget(handler: @escaping @Sendable (Event) -> RemoteCommandHandlerStatus) -> RemoteCommandTarget {
        let id = state.withLock { s -> UInt64 in
            let id = s.nextID
            s.nextID += 1
            s.targets.append((id, handler))
            return id
        }
        changed()
        return RemoteCommandTarget(id: id)
    }

    /// Removes the handler `target` names; the command becomes unavailable when it had no
    /// other.
    public func removeTarget(_ target: RemoteCommandTarget) {
        state.withLock { $0.targets.removeAll { $0.id == target.id } }
        changed()
    }

    /// Removes every handler; the command becomes unavailable.
    public func removeAllTargets() {
        state.withLock { $0.targets.removeAll() }
        changed()
    }

    /// Delivers an event; `nil` when the command is not available.
    public func perform(_ event: Event) -> RemoteCommandHandlerStatus? {
        guard let handler = state.withLock({ s in s.isEnabled ? s.targets.last?.handler : nil }) else { return nil }
        return handler(event)
    }
}

extension RemoteCommand where Event == ChangePlaybackRateCommandEvent {
    /// The rates the player supports (the `MPChangePlaybackRateCommand` property);
    /// MPRIS publishes their extremes as `MinimumRate` and `MaximumRate`.
    public var supportedPlaybackRates: [Double] {
        get { state.withLock { $0.supportedPlaybackRates } }
        set {
            state.withLock { $0.supportedPlaybackRates = newValue.filter { $0.isFinite && $0 > 0 } }
            changed()
        }
    }
}

extension RemoteCommand where Event == RemoteCommandEvent {
    /// Delivers the command's plain event.
    public func perform() -> RemoteCommandHandlerStatus? { perform(RemoteCommandEvent(command: kind)) }
}
