extension SessionPolicy {
    /// Something that happened to a session or to the system, as the arbiter saw it.
    ///
    /// Time comes in as ticks of a monotonic clock the arbiter reads when the event
    /// arrives; the policy never reads a clock.
    public enum Event: Sendable, Hashable {
        /// A process opened its session (`AVAudioSession.sharedInstance()`): category
        /// `soloAmbient`, inactive. Rejected if the identifier is already registered.
        case register(SessionID, appName: String, tick: UInt64)
        /// The process is gone (NameOwnerChanged) or unregistered: the interruptions it
        /// caused end with `shouldResume` as if it had deactivated with
        /// `notifyOthersOnDeactivation`, and its ducking lifts.
        case vanished(SessionID)
        /// `setCategory(_:mode:options:)`. The options replace the old ones. Options
        /// iOS refuses for the category are rejected. For an active session the new
        /// category takes effect at once, as if it activated again.
        case setCategory(SessionID, Category, options: CategoryOptions = [], mode: Mode = .default)
        /// `setActive(true)`.
        case activate(SessionID)
        /// `setActive(false, options: notifyOthers ? .notifyOthersOnDeactivation : [])`.
        case deactivate(SessionID, notifyOthers: Bool)
        /// The process started writing sound to the device after silence.
        case soundStarted(SessionID, tick: UInt64)
        /// The process stopped writing sound.
        case soundStopped(SessionID, tick: UInt64)
        /// Whether the process has any remote command enabled changed.
        case remoteCommandsChanged(SessionID, anyEnabled: Bool)
        /// The screen was locked or unlocked.
        case screenLockChanged(locked: Bool)
        /// Silent mode was turned on or off.
        case silentModeChanged(on: Bool)
        /// The arbiter's timer: this session has not produced sound for longer than the
        /// silence timeout. Like iOS deactivating a suspended app's session.
        case silenceTimeout(SessionID)
        /// After the arbiter changed hosts, a session that re-registered says it is still
        /// interrupted, and why (and whether it was playing when that began). The
        /// interruption is restored, without a new began, if its cause still holds: the
        /// interrupting session is active and its rules interrupt this one, or the screen
        /// is still locked (silent mode still on) and the category is silenced by it.
        /// Otherwise it ends, with `shouldResume` if the session was playing, as if the
        /// interrupter had deactivated with `notifyOthersOnDeactivation` or the screen had
        /// been unlocked.
        case restoreInterruption(SessionID, reason: InterruptionReason, wasPlaying: Bool)
        /// Another app's MPRIS player appeared, or said something new (its
        /// `PlaybackStatus` or `CanPause`). `player` is the unique name owning its MPRIS
        /// name; `pid` its process (which has no Earshot session).
        ///
        /// `seenAt` is ``SessionPolicy/activations`` when the status was observed, if the
        /// event reaches the policy later than that (the player's process and status are
        /// asked for after its name appears; a burst waits out a throttle window). A
        /// session activated after that moment found the player already playing: it
        /// pauses the player (as ``activate(_:)`` would have) instead of being
        /// interrupted by it. `nil`: observed now.
        case foreignPlayer(player: String, pid: Int64, status: ForeignPlaybackStatus, canPause: Bool, seenAt: UInt64? = nil)
        /// Another app's player left the bus.
        case foreignPlayerVanished(player: String)
        /// Another app's process started or stopped sounding (a playback stream running,
        /// not corked, not an event sound), as the sound server says.
        case foreignSound(pid: Int64, sounding: Bool, tick: UInt64)
        /// Another app's process is gone, or turned out to be an Earshot process: its
        /// sound and its players are forgotten.
        case foreignProcessVanished(pid: Int64)
        /// A previous arbiter (whose host died) had paused another app's player for session
        /// `pausedBy`, as its state file says. If the player is still as that arbiter left
        /// it (Paused, or Stopped where it cannot pause), the session, if registered again
        /// and still active and non-mixable, holds it as if it had paused it here (another
        /// such session holds it otherwise); with no session to hold it, it plays again.
        /// A player that is not (or no longer) as it was left is the user's: nothing.
        case adoptForeignPause(player: String, pausedBy: SessionID)

        /// The session the event is about; `nil` for system events.
        public var sessionID: SessionID? {
            switch self {
            case let .register(id, _, _), let .vanished(id), let .setCategory(id, _, _, _),
                 let .activate(id), let .deactivate(id, _), let .soundStarted(id, _),
                 let .soundStopped(id, _), let .remoteCommandsChanged(id, _), let .silenceTimeout(id),
                 let .restoreInterruption(id, _, _):
                id
            case .screenLockChanged, .silentModeChanged, .foreignPlayer, .foreignPlayerVanished, .foreignSound,
                 .foreignProcessVanished, .adoptForeignPause:
                nil
            }
        }
    }
}
