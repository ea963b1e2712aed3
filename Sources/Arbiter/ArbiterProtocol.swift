/// The members of `org.earshot.AudioSession`, named once for the arbiter and its clients
/// (`dbus/org.earshot.AudioSession.xml` documents them; `ArbiterTests` checks that the
/// live introspection and the contract match that file). Both sides speak them through
/// ``ArbiterCall``, ``ArbiterSignal`` and ``ArbiterStatus``, which alone spell the names
/// and values on the wire.
public enum ArbiterProtocol {
    /// The methods; each acts on the caller's own session.
    public enum Method: String, CaseIterable, Sendable {
        /// `Register(app_name s, state a{sv}) -> (situation a{sv})`: registers the caller
        /// with its whole state (``ArbiterRegistration``) and returns its situation
        /// (``ArbiterSituation``).
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
        /// `aa{sv}`: one dictionary per session (``ArbiterSessionSummary``), the most
        /// recent sounder first; changes are announced by invalidation.
        case sessions = "Sessions"
        /// `aa{sv}`: one dictionary per other app's player or sounding process
        /// (``ArbiterOtherSummary``), the most recent sounder first; changes are announced
        /// by invalidation.
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
}
