// Earshot: the iOS audio model on the Linux desktop.
//
// This umbrella module is the public surface apps import: the audio session, players and
// system sounds, the now-playing store and remote commands with their MPRIS export, and
// the route and error types their signatures use. The layers below (DBus, AudioEngine,
// AudioRoutes, SessionPolicy, MPRIS) are imported, not re-exported: their types appear
// here only under the names declared in this file and in `AudioSession+Types.swift`, so
// an app that imports Earshot sees neither the bus's nor the engine's types, and its own
// `Session`, `Category` or `Voice` clash with nothing. DBus, AudioEngine and MPRIS are
// products of their own for code that wants those layers.

public import AudioEngine
public import AudioRoutes
public import DBus
public import MPRIS

// MARK: Routes

/// The current audio route: the outputs playing and the inputs available (the
/// `AVAudioSessionRouteDescription` analog). ``AudioSession/currentRoute`` reads it.
public typealias AudioRoute = AudioRoutes::AudioRoute

/// One output of a route: a sound-server sink and its active port, or an ALSA jack (the
/// `AVAudioSessionPortDescription` analog for outputs). Its `type` is an
/// `AudioPort.PortType`, the `AVAudioSession.Port` analog.
public typealias AudioPort = AudioRoutes::AudioPort

/// One input of a route: a sound-server source (the `AVAudioSessionPortDescription`
/// analog for inputs), as ``AudioSession/availableInputs`` lists them.
public typealias AudioInputPort = AudioRoutes::AudioInputPort

// MARK: Errors

/// The error of a call over the bus: a D-Bus error name and message. An ``MPRISPlayer``
/// throws it (an invalid configuration, a name the bus refuses); ``AudioSession`` throws
/// ``AudioSessionError`` instead.
public typealias DBusError = DBus::DBusError

/// Why a file or stream could not be opened or decoded: its path and the reason.
/// ``AudioPlayer/init(contentsOf:)`` and ``QueuePlayer`` throw it.
public typealias AudioFileError = AudioEngine::AudioFileError

/// Why the engine could not play: the sound server or device could not be opened or
/// went away. ``AudioPlayer/lastError`` and ``QueuePlayer/lastError`` hold it.
public typealias AudioEngineError = AudioEngine::AudioEngineError

/// The tags read from an audio file (title, artists, album, genre, track number, date, …),
/// as ``QueuePlayer/Item/tags`` holds them.
public typealias AudioFileTags = AudioEngine::AudioFileTags

// MARK: Now playing and remote commands

/// The now-playing store (the `MPNowPlayingInfoCenter` analog): what plays, its position
/// and its state, observed by the MPRIS export.
public typealias NowPlayingInfoCenter = MPRIS::NowPlayingInfoCenter

/// What plays now: title, artists, album, duration, elapsed time, rate, artwork, track id
/// (the `nowPlayingInfo` dictionary of `MPNowPlayingInfoCenter`, typed).
public typealias NowPlayingInfo = MPRIS::NowPlayingInfo

/// The remote commands an app handles (the `MPRemoteCommandCenter` analog): play, pause,
/// next, seek, rate, repeat, shuffle, volume, open URI, raise, quit.
public typealias RemoteCommandCenter = MPRIS::RemoteCommandCenter

/// One remote command, to which an app adds handlers (the `MPRemoteCommand` analog); its
/// event type is the payload its handlers receive.
public typealias RemoteCommand = MPRIS::RemoteCommand

/// A handler added to a ``RemoteCommand``, to remove it again.
public typealias RemoteCommandTarget = MPRIS::RemoteCommandTarget

/// What a remote-command handler reports (the `MPRemoteCommandHandlerStatus` analog).
public typealias RemoteCommandHandlerStatus = MPRIS::RemoteCommandHandlerStatus

/// Which remote command an event belongs to.
public typealias RemoteCommandKind = MPRIS::RemoteCommandKind

/// The event of a command that carries no value (play, pause, next, quit, …).
public typealias RemoteCommandEvent = MPRIS::RemoteCommandEvent

/// The event of a relative seek (the `MPSeekCommandEvent` analog).
public typealias SeekCommandEvent = MPRIS::SeekCommandEvent

/// The event of a jump to a position (the `MPChangePlaybackPositionCommandEvent` analog).
public typealias ChangePlaybackPositionCommandEvent = MPRIS::ChangePlaybackPositionCommandEvent

/// The event of a rate change (the `MPChangePlaybackRateCommandEvent` analog).
public typealias ChangePlaybackRateCommandEvent = MPRIS::ChangePlaybackRateCommandEvent

/// The event of a repeat-mode change (the `MPChangeRepeatModeCommandEvent` analog).
public typealias ChangeRepeatModeCommandEvent = MPRIS::ChangeRepeatModeCommandEvent

/// The event of a shuffle-mode change (the `MPChangeShuffleModeCommandEvent` analog).
public typealias ChangeShuffleModeCommandEvent = MPRIS::ChangeShuffleModeCommandEvent

/// The event of a volume change (MPRIS `Volume`; iOS has no remote volume command).
public typealias ChangeVolumeCommandEvent = MPRIS::ChangeVolumeCommandEvent

/// The event of a request to open a URI (MPRIS `OpenUri`).
public typealias OpenURICommandEvent = MPRIS::OpenURICommandEvent

/// How a queue repeats (the `MPRepeatType` analog): off, one item, all.
public typealias RepeatMode = MPRIS::RepeatMode

/// Whether a queue plays shuffled (the `MPShuffleType` analog).
public typealias ShuffleMode = MPRIS::ShuffleMode

/// A queue that MPRIS exports as its `TrackList` (``QueuePlayer`` is one); an app with a
/// queue of its own can implement it.
public typealias TrackListSource = MPRIS::TrackListSource

/// What an `observe` call returns: keep it for as long as the handler should be called,
/// or cancel it.
public typealias ObservationToken = MPRIS::ObservationToken

// MARK: MPRIS

/// The export of a ``NowPlayingInfoCenter`` and a ``RemoteCommandCenter`` as an MPRIS
/// player (`org.mpris.MediaPlayer2.<app>`), which media keys, desktop shells and
/// `playerctl` drive. ``AudioSession/adopt(_:commands:)`` takes it into last sound wins.
public typealias MPRISPlayer = MPRIS::MPRISPlayer

/// How an ``MPRISPlayer`` presents itself: the app's name (the bus-name suffix), its
/// identity and desktop entry, whether it takes the name of its own instance.
public typealias MPRISConfiguration = MPRIS::MPRISConfiguration

extension NowPlayingInfoCenter {
    /// The playback state the store reports (the `MPNowPlayingPlaybackState` analog).
    public typealias PlaybackState = MPRIS::PlaybackState
}
