public import AudioEngine
public import AudioRoutes
public import SessionPolicy

// The policy's and the routes' types as an app names them, nested as AVFoundation nests
// them (`AVAudioSession.Category` → `AudioSession.Category`). The modules they come from
// are not re-exported (see Earshot.swift).

extension AudioSession {
    /// What the session's audio is for, which decides whether it mixes with others and
    /// whether the screen lock and silent mode silence it (the `AVAudioSession.Category`
    /// analog): `ambient`, `soloAmbient` (the default), `playback`, `record`,
    /// `playAndRecord`.
    public typealias Category = SessionPolicy::Category

    /// How the session's audio behaves towards others (the
    /// `AVAudioSession.CategoryOptions` analog): `mixWithOthers`, `duckOthers`,
    /// `interruptSpokenAudioAndMixWithOthers`, and the route options, which are kept but
    /// change nothing on a desktop.
    public typealias CategoryOptions = SessionPolicy::CategoryOptions

    /// The category's specialisation (the `AVAudioSession.Mode` analog). Only
    /// `spokenAudio` changes a rule; `voiceChat` and the others tag the streams' role.
    public typealias Mode = SessionPolicy::Mode

    /// Why an interruption began (the `AVAudioSession.InterruptionReason` analog, with the
    /// desktop's reasons: another session activated, the screen locked, silent mode, the
    /// route went away).
    public typealias InterruptionReason = SessionPolicy::InterruptionReason

    /// Which session interrupted (an ``InterruptionReason``'s `interrupter`): the bus name
    /// of the process that activated, as the arbiter knows it.
    public typealias SessionID = SessionPolicy::SessionID

    /// Why the route changed (the `AVAudioSession.RouteChangeReason` analog).
    public typealias RouteChangeReason = AudioRoutes::RouteChangeReason

    /// A route change: its reason and the routes before and after (the user info of
    /// `AVAudioSession.routeChangeNotification`).
    public typealias RouteChange = AudioRoutes::RouteChange
}

extension AudioPlayer {
    /// An HTTP stream an ``AudioPlayer`` plays (``AudioPlayer/stream``): its source, its
    /// tags, whether it is endless or seekable, and its ICY stream title as it changes.
    public typealias NetworkStream = AudioEngine::NetworkStream
}

extension AudioRecorder {
    /// The format a recorder writes: file type, sample rate, channels, bit depth, quality.
    public typealias Format = AudioEngine::RecordingFormat

    /// A recording's file type: WAV, AIFF, CAF, FLAC, Ogg Vorbis, Opus.
    public typealias FileType = AudioEngine::RecordingFormat.FileType

    /// Where a recorder captures from: the sound server's default source, a named source,
    /// or an ALSA capture device, and how long it waits for a lost server to come back.
    public typealias InputChoice = AudioEngine::AudioEngine.InputChoice

    /// The input a recording captures from, once it has opened one.
    public typealias InputKind = AudioEngine::AudioEngine.InputKind

    /// Why a recording could not start or stopped early: the file, the format, the input.
    public typealias RecordingError = AudioEngine::RecordingError
}
