/// One session's side of the arbiter protocol, pure: what the process's session tells the
/// arbiter, and when, decided from what happens in the process and on the path to the
/// arbiter. `AudioSession` feeds it inputs (under its state lock, so that inputs keep the
/// order things happened in) and performs the effects it returns; it knows nothing of the
/// bus, the engine or the players.
///
/// It follows swift-nio's state machines: stored state, one `mutating` entry point that
/// takes an input and returns what to do.
///
/// The path (see `AudioSession+Events.swift` in Earshot) runs one step at a time, in the
/// order the steps were enqueued. Effects named `enqueue…` are steps to put on it now, under
/// the lock the input was handled under; the others are to be done at once by the caller,
/// after the lock: reports and registrations on the path, and what is done to the players
/// (see `SessionClient+Players.swift`) wherever the input came from.
package struct SessionClient: Sendable, Hashable {
    /// The process makes sound that is the session's (the engine's sound, unless only
    /// system sounds play).
    package internal(set) var producingSound = false
    /// The engine's sound started while only system sounds played: it is not the session's
    /// sound, so neither it nor its end is reported (System Sound Services on iOS play
    /// outside the session).
    package internal(set) var soundIsSystemSoundsOnly = false
    /// A recorder of the process records: the session is in use, as when it sounds.
    package internal(set) var recording = false
    /// Whether the session is interrupted now (as the arbiter's signals say), and by what.
    package internal(set) var interruption = Interruption.none
    /// How many interruptions have begun so far (a player's start asked for before the
    /// latest one began does not take over from it).
    package internal(set) var interruptionsBegun: UInt64 = 0
    /// Whether the arbiter counts the session as sounding, as far as the path knows: set by
    /// its answered reports and registrations, cleared by a deactivation and by the
    /// arbiter's interruptions and deactivations. Written on the path only.
    package internal(set) var arbiterHasSound = false
    /// Sound reports enqueued on the path and not yet sent.
    package internal(set) var soundReportsOnPath = 0
    /// A resumption started its players again without telling the arbiter of the sound the
    /// engine may have kept through the interruption: told once one of them is heard.
    package internal(set) var missedSoundAwaitsHearing = false
    /// Where the session stands with the arbiter.
    package internal(set) var registration = Registration.unregistered
    /// The unique name that owns the arbiter's bus name now, followed through the bus's
    /// owner changes: the arbiter's signals are obeyed only from it.
    package internal(set) var arbiterOwner: String?
    /// How many owner changes have arrived (an answer to "who owns it" is stale if one
    /// arrived while it was asked).
    package internal(set) var arbiterOwnerChanges = 0
    /// Whether the session is active: activated, and not interrupted or deactivated since.
    package internal(set) var active = false
    /// The players an interruption paused or kept from starting: its end resumes or
    /// releases them (see `SessionClient+Players.swift`).
    package internal(set) var pausedByInterruption: Set<PlayerID> = []
    /// An interruption ended with `shouldResume` and the players it paused have not played
    /// again yet.
    package internal(set) var resumeOwed = false
    /// Activations enqueued for players to play (``Activation/play``, ``Activation/resumption``)
    /// and not yet answered.
    package internal(set) var playingActivations = 0
    /// Players being started again by a resumption.
    package internal(set) var resumingPlayers: Set<PlayerID> = []
    /// Players asked to play while the session was interrupted, waiting for the session's
    /// own activation (``Activation/start(_:)``).
    package internal(set) var startsAwaitingActivation: Set<PlayerID> = []

    /// A client that has told the arbiter nothing.
    package init() {}

    /// Whether the session is in use: it sounds or records.
    package var inUse: Bool { producingSound || recording }

    /// Whether the session is interrupted now.
    package var interrupted: Bool { interruption != .none }

    /// The sound a registration carries: an interrupted session is silent, even if the
    /// engine has not yet noticed (its sound-stopped event lags by the silence threshold):
    /// claiming sound would activate it again and make it interrupt its interrupter.
    package var registrationSound: Bool { producingSound && !interrupted }
}

extension SessionClient {
    /// Whether the session is interrupted.
    package enum Interruption: Sendable, Hashable {
        /// Not interrupted.
        case none
        /// Interrupted: `by` names the session that interrupted this one, if a session did;
        /// `silencedBy`, the screen lock or silent mode, when that is what interrupted it.
        case interrupted(by: String?, silencedBy: InterruptionReason?)
    }

    /// The unique name of the session that interrupted this one, if a session did.
    package var interruptedBy: String? {
        if case .interrupted(let by, _) = interruption { by } else { nil }
    }

    /// The screen lock or silent mode, when that is what interrupted this session.
    package var silencedBy: InterruptionReason? {
        if case .interrupted(_, let reason) = interruption { reason } else { nil }
    }

    /// What happens to the session, in the process or on the path.
    package enum Input: Sendable, Hashable {
        // In the process (any thread, under the session's lock).

        /// The engine started or stopped producing sound; `systemSoundsOnly`: it started
        /// while only system sounds played.
        case engineSound(producing: Bool, systemSoundsOnly: Bool)
        /// The first of the process's recorders started, or the last one stopped.
        case recording(Bool)
        /// A player is about to start; `askedAfter`: for a start the app asked for earlier,
        /// how many interruptions had begun then. It starts if the session is not
        /// interrupted once this is handled.
        case playerStarting(PlayerID, askedAfter: UInt64?)
        /// A player's voice started, after ``playerStarting(_:askedAfter:)`` with
        /// `interruptionsBefore` interruptions begun.
        case playerStarted(PlayerID, interruptionsBefore: UInt64)
        /// The implicit session connected while the engine sounded for one of its players:
        /// that sound is the session's.
        case joinedSounding
        /// A player resumed by the end of an interruption was heard.
        case playerHeard
        /// The arbiter began an interruption of the session, for `reason`; `playing`: the
        /// players playing then.
        case interruptionBegan(InterruptionReason, playing: Set<PlayerID>)
        /// The arbiter deactivated the session (it stayed silent while interrupting others).
        case deactivatedByArbiter
        /// The interruption ended (by the arbiter's signal, or at a registration that found
        /// its interrupter gone), saying `shouldResume`; `manual`: the players that do not
        /// resume by themselves (`automaticallyResumesAfterInterruption` false).
        case interruptionEnded(shouldResume: Bool, manual: Set<PlayerID>)
        /// The players an ``Effect/resume(_:interruptionsBefore:)`` named were started
        /// again; `playing`: those that play.
        case playersResumed(Set<PlayerID>, interruptionsBefore: UInt64, playing: Set<PlayerID>)

        // On the path.

        /// A sound report enqueued by an earlier effect is about to be sent.
        case soundReportDequeued
        /// A report of `producing` was answered; `counted`: the arbiter accepted it.
        case soundReportAnswered(producing: Bool, counted: Bool)
        /// The arbiter stopped counting the session's sound: it interrupted or deactivated
        /// it, or the session deactivated.
        case arbiterStoppedCounting
        /// The arbiter accepted a registration that carried `producing`.
        case registered(producing: Bool)
        /// The arbiter answered a `setActive`: `active` is what the session asked for.
        case activationAnswered(active: Bool)
        /// An activation from ``Effect/enqueueActivation(_:)`` was answered (and, unless it
        /// is a resumption, sound the arbiter missed reported); `livePlayers`: the players
        /// that still exist.
        case activated(Activation, livePlayers: Set<PlayerID>)
        /// The arbiter may not count sound the process makes: an activation or a
        /// registration was answered, or a resumption had no player to wait for.
        case arbiterMayHaveMissedSound

        // Registration (see `SessionClient+Registration.swift`).

        /// The bus says the arbiter's name has a new owner (nil: none).
        case arbiterOwnerChanged(String?)
        /// The bus answered who owns the arbiter's name, asked after `changesBefore` owner
        /// changes had arrived.
        case arbiterOwnerAnswered(String?, changesBefore: Int)
        /// The arbiter announced room for more sessions.
        case sessionsAvailable
        /// The arbiter refused a registration for lack of room; `reset`: it followed a host change.
        case registrationRefused(reset: Bool)
        /// The arbiter `host` accepted a registration (nil: its owner was not known).
        case registrationAccepted(host: String?)
        /// A retry enqueued by ``Effect/enqueueRegistrationRetry`` runs (on the path).
        case registrationRetryDue
    }

    /// What the session is to do.
    package enum Effect: Sendable, Hashable {
        /// Enqueue a report of `producing` on the path (under the lock: reports keep the
        /// order of the changes, whatever threads made them).
        case enqueueSoundReport(producing: Bool)
        /// Enqueue ``Input/arbiterMayHaveMissedSound`` on the path.
        case enqueueMissedSoundCheck
        /// Report `producing` to the arbiter now (on the path).
        case reportSound(producing: Bool)
        /// Enqueue ``Input/arbiterStoppedCounting``: the arbiter stopped counting the
        /// session's sound when it sent its signal, which the path records after the replies
        /// of the calls sent before the signal came.
        case enqueueArbiterStoppedCounting
        /// Enqueue a registration with the session's whole state; `reset`: after a host change.
        case enqueueRegistration(reset: Bool)
        /// Enqueue ``Input/registrationRetryDue`` (after the registration on its way, if any).
        case enqueueRegistrationRetry
        /// Register now (on the path); `reset`: as after a host change.
        case register(reset: Bool)

        // Players (see `SessionClient+Players.swift`): they tell their delegates, which may
        // call the session, so these are done after the lock.

        /// Enqueue an activation of the session for players to play, and then
        /// ``Input/activated(_:livePlayers:)``.
        case enqueueActivation(Activation)
        /// Pause the players for the interruption (they hear that it began).
        case pause(Set<PlayerID>)
        /// Start the player that waited for the session's activation.
        case start(PlayerID)
        /// Start the players again at the interruption's end (they hear that it ended with
        /// `shouldResume`), then feed ``Input/playersResumed(_:interruptionsBefore:playing:)``.
        case resume(Set<PlayerID>, interruptionsBefore: UInt64)
        /// Tell the app, then the `released` players, that the interruption ended; those
        /// stay paused.
        case ended(shouldResume: Bool, released: Set<PlayerID>)
    }

    /// Applies `input` and returns what to do, in order.
    package mutating func handle(_ input: Input) -> [Effect] {
        switch input {
        case .engineSound(let producing, let systemOnly):
            if producing, systemOnly {
                soundIsSystemSoundsOnly = true
                return []
            }
            defer { soundIsSystemSoundsOnly = false }
            if !producing, soundIsSystemSoundsOnly { return [] }
            producingSound = producing
            return [enqueueSoundReport()]
        case .recording(let recording):
            self.recording = recording
            // A recording that stops while the engine sounds changes nothing the arbiter sees.
            return recording || !producingSound ? [enqueueSoundReport()] : []
        case .joinedSounding:
            producingSound = true
            return []
        case .playerHeard:
            // The engine sounds, so no sound-stopped event for the interruption's silence can
            // follow the report (an audible mix resets the engine's silence count).
            defer { missedSoundAwaitsHearing = false }
            return missedSoundAwaitsHearing ? [.enqueueMissedSoundCheck] : []
        case .interruptionBegan(let reason, let playing):
            interruption = .interrupted(by: reason.interrupter.map(\.rawValue).flatMap { $0.isEmpty ? nil : $0 },
                                        silencedBy: reason == .screenLocked || reason == .silentMode ? reason : nil)
            interruptionsBegun &+= 1
            active = false
            pausedByInterruption.formUnion(playing)
            return [.enqueueArbiterStoppedCounting, .pause(playing)]
        case .deactivatedByArbiter:
            active = false
            return [.enqueueArbiterStoppedCounting]
        case .soundReportDequeued:
            soundReportsOnPath -= 1
            return []
        case .soundReportAnswered(let producing, let counted):
            arbiterHasSound = producing && counted
            return []
        case .arbiterStoppedCounting:
            arbiterHasSound = false
            return []
        case .activationAnswered(let active):
            // The arbiter's signals come before its reply: an interruption that the
            // activation itself caused (the screen is locked) is already recorded.
            self.active = active && !interrupted
            if !active { arbiterHasSound = false }
            return []
        case .registered(let producing):
            arbiterHasSound = producing
            return []
        case .arbiterMayHaveMissedSound:
            return missedSound ? [.reportSound(producing: true)] : []
        case .playerStarting, .playerStarted, .interruptionEnded, .activated, .playersResumed:
            return handlePlayers(input)
        case .arbiterOwnerChanged, .arbiterOwnerAnswered, .sessionsAvailable, .registrationRefused,
             .registrationAccepted, .registrationRetryDue:
            return handleRegistration(input)
        }
    }

    /// The one rule that brings the arbiter's view of the session's sound up to the
    /// process's: sound the process makes (or a recording) that the arbiter does not count
    /// is reported, once. The arbiter does not count it when it refused it (the session was
    /// interrupted) or when it silenced the session at an interruption while the engine
    /// sounded on through its silence threshold (so the engine sees no new start when the
    /// players resume). A session the arbiter already counts does not report again (that
    /// would make it the last sound), nor does one with a report still on the path (that
    /// report says it, in order).
    package var missedSound: Bool {
        inUse && !arbiterHasSound && !interrupted && soundReportsOnPath == 0
    }

    mutating func enqueueSoundReport() -> Effect {
        soundReportsOnPath += 1
        return .enqueueSoundReport(producing: inUse)
    }
}
