public import DBus

/// The members of `org.earshot.AudioSession`, named once for the arbiter and its clients
/// (`dbus/org.earshot.AudioSession.xml` documents them; `ArbiterTests` checks that the
/// live introspection matches that file). Both sides spell a member through these types,
/// so a misspelt name does not compile.
public enum ArbiterProtocol {
    /// The methods; each acts on the caller's own session.
    public enum Method: String, CaseIterable, Sendable {
        /// `Register(app_name s, state a{sv}) -> (situation a{sv})`: registers the caller
        /// with its whole state (``RegisterKey``) and returns its situation (``SituationKey``).
        case register = "Register"
        /// `Unregister()`: the caller's session goes.
        case unregister = "Unregister"
        /// `SetCategory(category s, options as, mode s)`.
        case setCategory = "SetCategory"
        /// `SetActive(active b, notify_others_on_deactivation b)`.
        case setActive = "SetActive"
        /// `ReportSound(producing b)`: the process started or stopped producing sound.
        case reportSound = "ReportSound"
        /// `SetRemoteCommandsEnabled(enabled b)`: whether any remote command is enabled.
        case setRemoteCommandsEnabled = "SetRemoteCommandsEnabled"
        /// `SetOutput(kind s, name s)`: what the process's players play through
        /// (``OutputKind``, and the server's name and version or the ALSA device), for
        /// `earshot status`.
        case setOutput = "SetOutput"
    }

    /// The kinds of output `SetOutput` and the `outputKind` keys name.
    public enum OutputKind: String, CaseIterable, Sendable {
        /// Nothing opened yet.
        case none = ""
        /// A stream on a PulseAudio-protocol sound server (PulseAudio, or PipeWire through
        /// pipewire-pulse); the name is the server's ("pulseaudio 16.1").
        case soundServer
        /// An ALSA PCM; the name is the device's ("default", "hw:0").
        case alsa
    }

    /// At most this many bytes in an output name.
    public static let maximumOutputNameBytes = 255

    /// The signals: all but ``sessionsAvailable`` are unicast to one session.
    public enum Signal: String, CaseIterable, Sendable {
        /// `Deactivated(reason s)`: the arbiter deactivated the session (`silenceTimeout`).
        case deactivated = "Deactivated"
        /// `InterruptionBegan(reason s, by s)`: see ``WireFormat/encode(_:)``.
        case interruptionBegan = "InterruptionBegan"
        /// `InterruptionEnded(should_resume b)`.
        case interruptionEnded = "InterruptionEnded"
        /// `DuckGainChanged(gain d)`: 1 when no longer ducked.
        case duckGainChanged = "DuckGainChanged"
        /// `OtherAudioPlayingChanged(playing b)`.
        case otherAudioPlayingChanged = "OtherAudioPlayingChanged"
        /// `SecondaryAudioShouldBeSilencedChanged(silenced b)`.
        case secondaryAudioShouldBeSilencedChanged = "SecondaryAudioShouldBeSilencedChanged"
        /// `SessionsAvailable()`, broadcast: a session went after a registration was
        /// refused for the limits; refused clients register again.
        case sessionsAvailable = "SessionsAvailable"
    }

    /// The read-only properties.
    public enum Property: String, CaseIterable, Sendable {
        /// `aa{sv}`: one dictionary per session (``SessionKey``), the most recent sounder
        /// first; changes are announced by invalidation.
        case sessions = "Sessions"
        /// `aa{sv}`: one dictionary per other app's player or sounding process
        /// (``OtherKey``), the most recent sounder first; changes are announced by
        /// invalidation.
        case others = "Others"
        /// `s`: the unique name of the remote-control target, "" when none.
        case target = "Target"
        /// `b`: whether the screen is locked.
        case screenLocked = "ScreenLocked"
        /// `s`: where the desktop's media keys go, "" when the arbiter knows no key daemon
        /// (on GNOME: to the target through the arbiter, or to a playing player that
        /// gsd-media-keys keeps until it stops).
        case desktopKeys = "DesktopKeys"
    }

    /// The keys of `Register`'s `state` dictionary, each with the one type its variant holds.
    public enum RegisterKey: String, CaseIterable, Sendable {
        /// `s`: the category's iOS name.
        case category
        /// `as`: category option names (``CategoryOptions/named``).
        case options
        /// `s`: the mode's iOS name.
        case mode
        /// `b`: whether the session is active.
        case active
        /// `b`: whether the process produces sound.
        case producingSound
        /// `b`: whether any remote command is enabled.
        case remoteCommands
        /// `s`: the unique name of the session that interrupted this one.
        case interruptedBy
        /// `s`: `screenLocked` or `silentMode`.
        case silencedBy
        /// `b`: whether the session was playing when interrupted.
        case wasPlaying
        /// `s`: the output's ``OutputKind``, as in `SetOutput`.
        case outputKind
        /// `s`: the output's name, as in `SetOutput`.
        case outputName

        /// The D-Bus type the key's variant must hold.
        public var type: DBusType {
            switch self {
            case .options: .array(.string)
            case .category, .mode, .interruptedBy, .silencedBy, .outputKind, .outputName: .string
            case .active, .producingSound, .remoteCommands, .wasPlaying: .boolean
            }
        }
    }

    /// The keys of the situation `Register` returns.
    public enum SituationKey: String, CaseIterable, Sendable {
        /// `b`: whether another session is playing.
        case otherAudioPlaying
        /// `b`: the hint to silence secondary audio.
        case secondaryAudioShouldBeSilenced
        /// `b`: whether the session is interrupted.
        case interrupted
        /// `d`: the session's gain, below 1 when ducked.
        case duckGain
        /// `s`: the unique name of the remote-control target, "" when none.
        case target
    }

    /// The keys of each dictionary in the `Others` property.
    public enum OtherKey: String, CaseIterable, Sendable {
        /// `s`: the unique name owning the player's MPRIS name; "" for a process without one.
        case player
        /// `s`: its MPRIS name without `org.mpris.MediaPlayer2.` ("mpv"); "" without one.
        case app
        /// `x`: its process.
        case pid
        /// `s`: its `PlaybackStatus`; "" without a player.
        case status
        /// `b`: whether a playback stream of it runs (not corked, not an event sound).
        case sounding
        /// `t`: when it last started sounding (higher is more recent; 0 never).
        case lastSound
        /// `s`: the session whose activation paused it, "" when none.
        case pausedBy
        /// `as`: the sessions whose duckOthers lowers its streams now (none: not ducked).
        case duckedBy
        /// `b`: whether it is the remote-control target.
        case target
    }

    /// The keys of each dictionary in the `Sessions` property.
    public enum SessionKey: String, CaseIterable, Sendable {
        /// `s`: the session's unique bus name.
        case id
        /// `s`: the app name it registered with.
        case app
        /// `s`: the category's iOS name.
        case category
        /// `as`: category option names.
        case options
        /// `s`: the mode's iOS name.
        case mode
        /// `b`: whether the session is active.
        case active
        /// `b`: whether it produces sound.
        case producingSound
        /// `b`: whether it is interrupted.
        case interrupted
        /// `b`: whether it is ducked.
        case ducked
        /// `t`: when it last produced sound (higher is more recent; 0 never).
        case lastSound
        /// `b`: whether it may be the remote-control target.
        case eligible
        /// `b`: whether it is the remote-control target.
        case target
        /// `s`: its output's ``OutputKind`` ("" until it said).
        case outputKind
        /// `s`: its output's name ("" until it said).
        case outputName
    }
}
