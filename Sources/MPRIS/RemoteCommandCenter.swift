import Synchronization

/// The remote commands an app responds to (the `MPRemoteCommandCenter` analog).
///
/// Add targets to the commands the app supports; everything else stays unavailable and
/// is not advertised. MPRIS calls (media keys, `playerctl`, desktop widgets) arrive here.
public final class RemoteCommandCenter: Sendable {
    /// The process-wide command center.
    public static let shared = RemoteCommandCenter()

    private let observers = Observers<Void>()

    /// Play (MPRIS `Play`; `MPRemoteCommandCenter.playCommand`).
    public let playCommand: RemoteCommand<RemoteCommandEvent>
    /// Pause (MPRIS `Pause`).
    public let pauseCommand: RemoteCommand<RemoteCommandEvent>
    /// Play or pause, whichever applies (MPRIS `PlayPause`, the media keys' play key).
    public let togglePlayPauseCommand: RemoteCommand<RemoteCommandEvent>
    /// Stop (MPRIS `Stop`).
    public let stopCommand: RemoteCommand<RemoteCommandEvent>
    /// Go to the next item (MPRIS `Next`).
    public let nextTrackCommand: RemoteCommand<RemoteCommandEvent>
    /// Go to the previous item (MPRIS `Previous`).
    public let previousTrackCommand: RemoteCommand<RemoteCommandEvent>
    /// Move the position by an offset (MPRIS `Seek`). iOS's seek command starts and ends a
    /// continuous seek; MPRIS sends one relative jump instead.
    public let seekCommand: RemoteCommand<SeekCommandEvent>
    /// Jump to a position in the current item (MPRIS `SetPosition`).
    public let changePlaybackPositionCommand: RemoteCommand<ChangePlaybackPositionCommandEvent>
    /// Change the playback rate (MPRIS `Rate`), within the command's supported rates.
    public let changePlaybackRateCommand: RemoteCommand<ChangePlaybackRateCommandEvent>
    /// Change the repeat mode (MPRIS `LoopStatus`).
    public let changeRepeatModeCommand: RemoteCommand<ChangeRepeatModeCommandEvent>
    /// Change the shuffle mode (MPRIS `Shuffle`).
    public let changeShuffleModeCommand: RemoteCommand<ChangeShuffleModeCommandEvent>
    /// Change the volume (MPRIS `Volume`; iOS has no such remote command).
    public let changeVolumeCommand: RemoteCommand<ChangeVolumeCommandEvent>
    /// Open and play a URI (MPRIS `OpenUri`); the configuration lists the schemes and MIME
    /// types the app accepts.
    public let openURICommand: RemoteCommand<OpenURICommandEvent>
    /// Bring the app's window forward (MPRIS `Raise`; no iOS equivalent).
    public let raiseCommand: RemoteCommand<RemoteCommandEvent>
    /// Quit the app (MPRIS `Quit`; no iOS equivalent).
    public let quitCommand: RemoteCommand<RemoteCommandEvent>

    /// A command center of its own, with every command unavailable. Most apps use
    /// ``shared``; tests and processes that publish several players make their own.
    public init() {
        let notify: @Sendable () -> Void = { [observers] in observers.notify(()) }
        playCommand = RemoteCommand(.play, changed: notify)
        pauseCommand = RemoteCommand(.pause, changed: notify)
        togglePlayPauseCommand = RemoteCommand(.togglePlayPause, changed: notify)
        stopCommand = RemoteCommand(.stop, changed: notify)
        nextTrackCommand = RemoteCommand(.nextTrack, changed: notify)
        previousTrackCommand = RemoteCommand(.previousTrack, changed: notify)
        seekCommand = RemoteCommand(.seek, changed: notify)
        changePlaybackPositionCommand = RemoteCommand(.changePlaybackPosition, changed: notify)
        changePlaybackRateCommand = RemoteCommand(.changePlaybackRate, changed: notify)
        changeRepeatModeCommand = RemoteCommand(.changeRepeatMode, changed: notify)
        changeShuffleModeCommand = RemoteCommand(.changeShuffleMode, changed: notify)
        changeVolumeCommand = RemoteCommand(.changeVolume, changed: notify)
        openURICommand = RemoteCommand(.openURI, changed: notify)
        raiseCommand = RemoteCommand(.raise, changed: notify)
        quitCommand = RemoteCommand(.quit, changed: notify)
    }

    /// Whether any command is available; an app with none is not a remote-control target.
    public var hasAvailableCommand: Bool {
        [playCommand.isAvailable, pauseCommand.isAvailable, togglePlayPauseCommand.isAvailable,
         stopCommand.isAvailable, nextTrackCommand.isAvailable, previousTrackCommand.isAvailable,
         seekCommand.isAvailable, changePlaybackPositionCommand.isAvailable,
         changePlaybackRateCommand.isAvailable, changeRepeatModeCommand.isAvailable,
         changeShuffleModeCommand.isAvailable, changeVolumeCommand.isAvailable,
         openURICommand.isAvailable, raiseCommand.isAvailable, quitCommand.isAvailable].contains(true)
    }

    /// Calls `handler` whenever a command is enabled, disabled, or gains or loses targets.
    public func observe(_ handler: @escaping @Sendable () -> Void) -> ObservationToken {
        observers.add { _ in handler() }
    }
}

/// Keeps an observation alive; ``cancel()`` (or dropping every copy) ends it.
public final class ObservationToken: Sendable {
    private let onCancel: @Sendable () -> Void
    private let cancelled = Atomic(false)
    init(onCancel: @escaping @Sendable () -> Void) { self.onCancel = onCancel }
    /// Ends the observation: the handler is not called again. Calling it again does nothing.
    public func cancel() {
        if !cancelled.exchange(true, ordering: .relaxed) { onCancel() }
    }
    deinit { cancel() }
}

/// A thread-safe list of observer callbacks (shared by the centers and the audio session;
/// `package`: a helper of this package's modules, not part of the API).
package final class Observers<Change: Sendable>: Sendable {
    private let handlers = Mutex<[UInt64: @Sendable (Change) -> Void]>([:])
    private let nextID = Atomic<UInt64>(1)

    package init() {}

    /// Adds `handler`; it is called until the token is cancelled or released.
    package func add(_ handler: @escaping @Sendable (Change) -> Void) -> ObservationToken {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        handlers.withLock { $0[id] = handler }
        return ObservationToken { [weak self] in _ = self?.handlers.withLock { $0.removeValue(forKey: id) } }
    }

    /// Calls every handler with `change`, on the calling thread.
    package func notify(_ change: Change) {
        for handler in handlers.withLock({ Array($0.values) }) { handler(change) }
    }
}
