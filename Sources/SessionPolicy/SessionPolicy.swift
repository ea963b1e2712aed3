/// The rules of the iOS audio-session model, as a pure function from the registered
/// sessions and one event to the decisions the arbiter must send.
///
/// `SessionPolicy` is what mediaserverd does on iOS: it knows every process's session
/// and decides who is interrupted, who is ducked, what each session's hints say and
/// which session receives the media keys. It does no I/O and reads no clock, so the
/// same events always give the same decisions, in the same order.
///
/// ```swift
/// var policy = SessionPolicy()
/// _ = policy.apply(.register(":1.7", appName: "music", tick: 0))
/// _ = policy.apply(.setCategory(":1.7", .playback))
/// let decisions = policy.apply(.activate(":1.7"))
/// ```
///
/// The rules, in iOS terms:
/// - **Categories.** See ``Category``: `ambient` mixes; `soloAmbient` (the default),
///   `record` and plain `playback`/`playAndRecord` do not. The screen lock and silent
///   mode silence `ambient` and `soloAmbient` (an interruption with reason
///   `screenLocked` or `silentMode`); the others keep running.
/// - **Activation.** Activating a non-mixable session interrupts every other active
///   non-mixable session; mixable ones keep playing. A session with
///   `interruptSpokenAudioAndMixWithOthers` interrupts the active sessions in
///   ``Mode/spokenAudio``. Activating a mixable session interrupts nobody else.
///   Changing the category of an active session counts as activating it again.
///   Activating while silenced (an `ambient` or `soloAmbient` session with the screen
///   locked or in silent mode) interrupts it at once instead.
/// - **Interruptions.** See the Interruptions section of ``apply(_:)``: one
///   `interruptionBegan` when the first cause appears, one `interruptionEnded` when the
///   last goes, with `shouldResume` decided by how that last cause went away.
/// - **Ducking.** A session with `duckOthers` (`ambient`, `playback` or
///   `playAndRecord`) ducks from its activation until it is no longer active, whether
///   or not it sounds; meanwhile every other active session is ducked to
///   ``Configuration/duckGain``. Removing the option takes effect at the next
///   deactivation, as on iOS.
/// - **Hints.** ``otherAudioPlaying(for:)`` and
///   ``secondaryAudioShouldBeSilencedHint(for:)``, sent whenever they change.
/// - **Remote-control target.** The eligible session that last started producing
///   sound (``remoteTarget``); across all apps, the session or other app's player whose
///   process last started sounding (``target``).
/// - **Other apps.** The arbiter reports other apps' MPRIS players and sound
///   (``Event/foreignPlayer(player:pid:status:canPause:)``,
///   ``Event/foreignSound(pid:sounding:tick:)``). A non-mixable session's activation
///   pauses their playing players (``Decision/pauseForeign(player:stop:)``); its
///   deactivation with notifyOthers, or its vanishing, resumes those still as it left
///   them (``Decision/resumeForeign(player:)``). A player that starts playing interrupts
///   the active non-mixable sessions (``InterruptionReason/otherApp(player:)``), ended
///   without `shouldResume` when it stops. Other apps' sound counts in the hints.
public struct SessionPolicy: Sendable, Equatable {
    /// Tunable values.
    public struct Configuration: Sendable, Hashable {
        /// The linear gain of a ducked session; 0.3 is about −10.5 dB, close to what
        /// iOS applies. Values outside 0…1 are clamped; NaN means the default.
        public var duckGain: Float
        /// Whether a non-mixable session's activation pauses other apps' playing players
        /// (and resumes them after), as iOS pauses the Music app. When false the policy
        /// only observes other apps: their sound still counts and still interrupts.
        public var pausesOthers: Bool
        /// Whether a ducking session lowers other apps' playing streams too (by
        /// ``duckGain``, see ``SessionPolicy/foreignStreamGain``). When false other
        /// apps keep their volume.
        public var ducksOthers: Bool

        public init(duckGain: Float = 0.3, pausesOthers: Bool = true, ducksOthers: Bool = true) {
            self.duckGain = duckGain.isNaN ? 0.3 : min(max(duckGain, 0), 1)
            self.pausesOthers = pausesOthers
            self.ducksOthers = ducksOthers
        }
    }

    /// The configuration the policy was made with.
    public let configuration: Configuration
    /// The registered sessions.
    public internal(set) var sessions: [SessionID: Session] = [:]
    /// Whether the screen is locked.
    public internal(set) var screenLocked = false
    /// Whether silent mode is on.
    public internal(set) var silentMode = false
    /// The session that receives remote-control commands (media keys), if any.
    public internal(set) var remoteTarget: SessionID?
    /// Other apps' MPRIS players, by the unique name owning the player's name.
    public internal(set) var foreignPlayers: [String: ForeignPlayer] = [:]
    /// Other apps' sound, by process.
    public internal(set) var foreignSounds: [Int64: ForeignSound] = [:]
    /// The media-key target across all apps: the player whose process last started
    /// sounding, an Earshot session (``remoteTarget``) or another app's player.
    public internal(set) var target: RemoteTarget?
    /// Counts sound starts, to order equal ticks by arrival.
    var soundStarts: UInt64 = 0
    /// Counts activations (and category changes of active sessions), the moments at
    /// which a session pauses the other apps' players that play. The arbiter stamps each
    /// status it observes of another app's player with this count (``Event/foreignPlayer(player:pid:status:canPause:seenAt:)``),
    /// so that a status that reaches the policy late is still ordered against them.
    public internal(set) var activations: UInt64 = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The session registered under `id`.
    public subscript(id: SessionID) -> Session? { sessions[id] }

    /// The registered identifiers, in order.
    public var sessionIDs: [SessionID] { sessions.keys.sorted() }

    /// Applies one event and returns the decisions it causes.
    ///
    /// An event for an unregistered session (or otherwise invalid, see ``Rejection``)
    /// returns a single `rejected` decision and changes nothing. Any other event is
    /// applied, whatever the state: every sequence of events is valid.
    ///
    /// ## Interruptions
    ///
    /// A session is interrupted while it has at least one cause
    /// (``Session/interruptions``). It gets `interruptionBegan` when the first cause
    /// appears, which also makes it inactive and silent, and `interruptionEnded` when
    /// the last cause goes away. `shouldResume` on that ended follows the rule of the
    /// way the last cause went away:
    /// - the interrupter deactivates with `notifyOthers`, vanishes, goes silent past
    ///   its timeout, or changes category or options so that it no longer interrupts:
    ///   true if the session was playing when interrupted;
    /// - the interrupter deactivates without `notifyOthers`: false;
    /// - the screen is unlocked or silent mode ends (or the session's own category
    ///   stops being silenced): true if it was playing;
    /// - the session activates again by itself: false (it already resumed);
    /// - a route disconnection: false, at once.
    ///
    /// Interrupters form a stack. An interrupted interrupter keeps its own victims
    /// interrupted; and when a session's last cause goes away while another active
    /// session would interrupt it (a call that began in between), that session becomes
    /// the cause instead and no ended is sent. So a session is only told to resume
    /// when resuming interrupts nobody.
    ///
    /// An interrupted session may activate again by itself (the user pressed play): its
    /// interruption ends (`shouldResume` false) and, as the newest activation, it
    /// interrupts its interrupter if the rules say so. This is what iOS does.
    public mutating func apply(_ event: Event) -> [Decision] {
        if let (id, rejection) = rejection(of: event) {
            return [.rejected(id, reason: rejection)]
        }
        let before = self
        var decisions = handle(event)
        refreshDucking()
        refreshRemoteTarget()
        decisions += duckingChanges(since: before)
        decisions += hintChanges(since: before)
        decisions += targetChanges(since: before)
        return decisions
    }

    private mutating func handle(_ event: Event) -> [Decision] {
        switch event {
        case let .register(id, appName, tick):
            register(id, appName: appName, tick: tick)
        case let .vanished(id):
            vanish(id)
        case let .setCategory(id, category, options, mode):
            setCategory(id, category, options: options, mode: mode)
        case let .activate(id):
            activate(id)
        case let .deactivate(id, notifyOthers):
            deactivate(id, notifyOthers: notifyOthers)
        case let .soundStarted(id, tick):
            soundStarted(id, tick: tick)
        case let .soundStopped(id, tick):
            soundStopped(id, tick: tick)
        case let .remoteCommandsChanged(id, anyEnabled):
            setRemoteCommandsEnabled(id, anyEnabled)
        case let .screenLockChanged(locked):
            setScreenLocked(locked)
        case let .silentModeChanged(on):
            setSilentMode(on)
        case let .restoreInterruption(id, reason, wasPlaying):
            restoreInterruption(id, reason: reason, wasPlaying: wasPlaying)
        case let .silenceTimeout(id):
            silenceTimedOut(id)
        case let .foreignPlayer(player, pid, status, canPause, seenAt):
            updateForeignPlayer(player, pid: pid, status: status, canPause: canPause, seenAt: seenAt)
        case let .foreignPlayerVanished(player):
            removeForeignPlayer(player)
        case let .foreignSound(pid, sounding, tick):
            foreignSound(pid, sounding: sounding, tick: tick)
        case let .foreignProcessVanished(pid):
            removeForeignProcess(pid)
        case let .adoptForeignPause(player, pausedBy):
            adoptForeignPause(player, pausedBy: pausedBy)
        }
    }

    /// Why `event` must be rejected, if it must.
    func rejection(of event: Event) -> (SessionID, Rejection)? {
        guard let id = event.sessionID else { return nil }
        if case .register = event {
            return sessions[id] == nil ? nil : (id, .alreadyRegistered)
        }
        guard let session = sessions[id] else { return (id, .unknownSession) }
        switch event {
        case let .setCategory(_, category, options, _) where !options.areAllowed(with: category):
            return (id, .optionsNotAllowedForCategory)
        case .soundStarted where session.isInterrupted:
            return (id, .soundWhileInterrupted)
        case let .restoreInterruption(_, .sessionActivated(by), _) where sessions[by] == nil:
            return (by, .unknownSession)
        default:
            return nil
        }
    }

    /// The registered sessions matching `predicate`, in identifier order.
    func ids(where predicate: (Session) -> Bool) -> [SessionID] {
        sessions.values.filter(predicate).map(\.id).sorted()
    }
}
