/// The policy's view of one process's audio session.
///
/// Sessions are created by ``SessionPolicy/Event/register(_:appName:tick:)`` and only
/// the policy changes them; read them through ``SessionPolicy/sessions``.
///
/// Invariants the policy keeps after every event:
/// - an interrupted session is neither active nor producing sound;
/// - a session producing sound is active;
/// - at most one active session is non-mixable;
/// - ``duckedBy`` is empty unless the session is active, and names only active
///   sessions that are ducking (``isDucking``); only an active session is ducking.
public struct Session: Sendable, Hashable, Identifiable {
    /// The process's bus unique name.
    public let id: SessionID
    /// The application name the process registered with (the MPRIS suffix).
    public internal(set) var appName: String
    /// The category; ``Category/soloAmbient`` until the session sets one, as on iOS.
    public internal(set) var category: Category = .soloAmbient
    /// The category options, as set with the category (normalized: the ducking and
    /// spoken-audio options carry ``CategoryOptions/mixWithOthers``, and `ambient`
    /// always has it). Setting a category replaces them.
    public internal(set) var options: CategoryOptions = []
    /// The mode, set with the category.
    public internal(set) var mode: Mode = .default
    /// Whether the session is active (`setActive(true)` succeeded and nothing
    /// interrupted or deactivated it since).
    public internal(set) var isActive = false
    /// Whether the process is writing sound to the device, as its engine reported.
    public internal(set) var isProducingSound = false
    /// The tick at which the session last started producing sound; `nil` if it never
    /// did. The remote-control target is the eligible session with the highest one.
    public internal(set) var lastSoundTick: UInt64?
    /// The tick of the first ``SessionPolicy/Event/soundStopped(_:tick:)`` since the
    /// session last produced sound: how long it has been silent, for the arbiter's
    /// silence timeout. `nil` while it produces sound, and after the policy stopped its
    /// sound (an interruption or a deactivation) until its engine reports the silence.
    public internal(set) var silentSinceTick: UInt64?
    /// Whether the process has at least one remote command enabled.
    public internal(set) var hasEnabledRemoteCommand = false
    /// The current causes of its interruption; empty when not interrupted.
    public internal(set) var interruptions: Set<InterruptionReason> = []
    /// Whether it was producing sound when its current interruption began (false when
    /// not interrupted). Decides `shouldResume` when the interruption ends.
    public internal(set) var wasPlayingWhenInterrupted = false
    /// An interruption of it ended with `shouldResume`, and it has neither produced sound
    /// nor deactivated since: it is on its way back to playing. An interruption that
    /// begins now counts it as playing (otherwise a second interrupter arriving before
    /// its first sound would turn the resumption it was owed into `shouldResume: false`).
    public internal(set) var isResuming = false
    /// The active sessions currently ducking it.
    public internal(set) var duckedBy: Set<SessionID> = []
    /// The tick at which it registered.
    public let registeredTick: UInt64
    /// Arrival order of its last sound start: breaks ties between equal ticks.
    var soundSequence: UInt64 = 0
    /// The value of ``SessionPolicy/activations`` that its last activation (or category
    /// change while active) took: orders it against what the arbiter saw of other apps.
    var activation: UInt64 = 0

    init(id: SessionID, appName: String, registeredTick: UInt64) {
        self.id = id
        self.appName = appName
        self.registeredTick = registeredTick
    }

    /// Whether some cause interrupts it.
    public var isInterrupted: Bool { !interruptions.isEmpty }

    /// Whether it is ducked (some other active session with `duckOthers` is active).
    public var isDucked: Bool { !duckedBy.isEmpty }

    /// Whether it mixes with other audio: `ambient` always; `playback` and
    /// `playAndRecord` with any mixing option; `soloAmbient` and `record` never.
    /// Mixable sessions neither interrupt nor get interrupted by non-mixable ones.
    public var isMixable: Bool {
        switch category {
        case .ambient: true
        case .soloAmbient, .record: false
        case .playback, .playAndRecord: !options.isDisjoint(with: CategoryOptions.mixingBits)
        }
    }

    /// Whether its options ask to duck the other active sessions (`duckOthers`, with a
    /// category that accepts it). Whether it ducks now is ``isDucking``.
    public var ducksOthers: Bool {
        category.acceptsDuckOthers && options.contains(.duckOthers)
    }

    /// Whether its ducking is in force: from the moment it is active with
    /// ``ducksOthers`` (at activation, or at once when the option is set on an active
    /// session) until it stops being active, whether or not it makes sound. Removing the
    /// option takes effect at the next deactivation, as on iOS ("remains in place until
    /// your audio session is deactivated").
    public internal(set) var isDucking = false

    /// Whether it interrupts sessions in ``Mode/spokenAudio`` when it activates.
    public var interruptsSpokenAudio: Bool {
        category.acceptsMixingOptions && options.contains(.interruptSpokenAudioBit)
    }

    /// Whether it may be the remote-control target: category `playback` or
    /// `playAndRecord`, not mixable, and at least one remote command enabled. Ambient
    /// sound never takes the media keys.
    public var isEligibleRemoteTarget: Bool {
        SessionPolicy.isEligibleRemoteTarget(category: category, options: options, hasEnabledRemoteCommand: hasEnabledRemoteCommand)
    }

    /// Whether this session, activating now, interrupts `other` (were it active): a
    /// non-mixable session interrupts non-mixable ones, and a session with
    /// `interruptSpokenAudioAndMixWithOthers` interrupts spoken audio.
    public func interrupts(_ other: Session) -> Bool {
        guard other.id != id else { return false }
        return (!isMixable && !other.isMixable) || (interruptsSpokenAudio && other.mode == .spokenAudio)
    }
}
