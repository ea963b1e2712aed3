/// An MPRIS player's `PlaybackStatus`.
public enum ForeignPlaybackStatus: String, Sendable, Hashable, CaseIterable {
    /// `Playing`.
    case playing = "Playing"
    /// `Paused`.
    case paused = "Paused"
    /// `Stopped`.
    case stopped = "Stopped"
}

/// A media player of another app: an `org.mpris.MediaPlayer2.*` name whose process has no
/// Earshot session. The arbiter reports what the player says; the policy decides what to
/// do to it.
public struct ForeignPlayer: Sendable, Hashable, Identifiable {
    /// The unique bus name that owns the player's MPRIS name (the address of its calls).
    public let id: String
    /// Its process.
    public internal(set) var pid: Int64
    /// Its `PlaybackStatus`, as it last said.
    public internal(set) var status: ForeignPlaybackStatus
    /// Its `CanPause`; when false, a session that must silence it sends `Stop`.
    public internal(set) var canPause: Bool
    /// The session whose activation paused (or stopped) it, while it stays as the arbiter
    /// left it; `nil` once the user (or the app) changed its status since.
    public internal(set) var pausedBy: SessionID?
    /// The status the arbiter asked for and is waiting to see (after `Pause`, `Stop` or
    /// `Play`), so that its own changes are told from the user's.
    public internal(set) var expected: ForeignPlaybackStatus?
    /// Its process fell silent after the arbiter asked it to pause (or stop) and before it
    /// said it had: the pause happened, whether or not the player reports it.
    var fellSilentWhileExpected = false

    init(id: String, pid: Int64, status: ForeignPlaybackStatus, canPause: Bool) {
        self.id = id
        self.pid = pid
        self.status = status
        self.canPause = canPause
    }
}

/// Another app's process as the sound server sees it: whether one of its playback
/// streams is running (not corked, not an event sound), and since when.
public struct ForeignSound: Sendable, Hashable {
    /// The process (`application.process.id` of its streams).
    public let pid: Int64
    /// Whether it is sounding now.
    public internal(set) var isSounding = false
    /// When it last started sounding; `nil` if never seen sounding.
    public internal(set) var lastSoundTick: UInt64?
    /// Arrival order of its last sound start, shared with the sessions' order.
    var soundSequence: UInt64 = 0

    init(pid: Int64) { self.pid = pid }
}

/// Who receives the media keys, across all apps: an Earshot session, or another app's
/// MPRIS player.
public enum RemoteTarget: Sendable, Hashable {
    /// An Earshot session (its unique bus name owns its app's MPRIS name).
    case session(SessionID)
    /// Another app's player, by the unique name owning its MPRIS name.
    case foreign(player: String)

    /// The unique bus name to send MPRIS commands to.
    public var busName: String {
        switch self {
        case .session(let id): id.rawValue
        case .foreign(let player): player
        }
    }
}
