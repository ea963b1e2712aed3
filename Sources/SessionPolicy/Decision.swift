extension SessionPolicy {
    /// What the arbiter must tell a process (or everyone) after an event.
    ///
    /// ``SessionPolicy/apply(_:)`` returns them in a fixed order: a rejection alone;
    /// otherwise the interruption decisions in the order the rules produced them, then
    /// `duck`/`unduck`, then `otherAudioPlaying`, then `secondaryAudioShouldBeSilenced`
    /// (each of those by ``SessionID``), then `remoteTargetChanged`, then `targetChanged`. Decisions never
    /// name a session that is not registered after the event, except `rejected`.
    public enum Decision: Sendable, Hashable {
        /// The arbiter deactivated the session: it stayed silent past the silence timeout
        /// while active and interrupting others. Tell it, so that it reads inactive and
        /// activates again with its next sound. Comes before the interruptions it ends.
        case deactivated(SessionID)
        /// `AVAudioSession.interruptionNotification` with type `.began`: the session has
        /// been deactivated; stop playing. Sent once, when its first cause appears.
        case interruptionBegan(SessionID, reason: InterruptionReason)
        /// Type `.ended`: the last cause went away. `shouldResume` is the
        /// `.shouldResume` option: resume playback (after activating again).
        case interruptionEnded(SessionID, shouldResume: Bool)
        /// Lower the session's output to `gain` (linear) until `unduck`.
        case duck(SessionID, gain: Float)
        /// Restore the session's output gain.
        case unduck(SessionID)
        /// The session's `isOtherAudioPlaying` changed.
        case otherAudioPlaying(SessionID, Bool)
        /// The session's `secondaryAudioShouldBeSilencedHint` changed
        /// (`silenceSecondaryAudioHintNotification`).
        case secondaryAudioShouldBeSilenced(SessionID, Bool)
        /// The global remote-control target changed; `nil` when no session is one.
        case remoteTargetChanged(SessionID?)
        /// Pause another app's player (`Stop` when `stop`, for a player that cannot
        /// pause): a non-mixable session activated. Comes with the interruption decisions.
        case pauseForeign(player: String, stop: Bool)
        /// Play another app's player again: the session that paused it deactivated with
        /// notifyOthersOnDeactivation or vanished, and nobody touched the player since.
        case resumeForeign(player: String)
        /// Read another app's player's `PlaybackStatus` again: its process fell silent after
        /// the arbiter asked it to pause (or stop) and sounds again, and the player never
        /// said it paused. A player may fold a quick pause and play into one report (mpv-mpris
        /// sends its changes every 100 ms), so someone may have played it. If it says
        /// `Playing` while the pause is still unseen, the arbiter reports both: the pause,
        /// then the play (``Event/foreignPlayer(player:pid:status:canPause:seenAt:)``).
        /// Comes alone, after a ``Event/foreignSound(pid:sounding:tick:)``.
        case readForeignStatus(player: String)
        /// The target across all apps (``SessionPolicy/target``) changed; after
        /// `remoteTargetChanged`.
        case targetChanged(RemoteTarget?)
        /// The event was not applied and nothing changed.
        case rejected(SessionID, reason: Rejection)

        /// The process this decision is for; `nil` for the broadcast
        /// `remoteTargetChanged`.
        public var sessionID: SessionID? {
            switch self {
            case let .deactivated(id), let .interruptionBegan(id, _), let .interruptionEnded(id, _), let .duck(id, _), let .unduck(id),
                 let .otherAudioPlaying(id, _), let .secondaryAudioShouldBeSilenced(id, _), let .rejected(id, _):
                id
            case .remoteTargetChanged, .pauseForeign, .resumeForeign, .readForeignStatus, .targetChanged:
                nil
            }
        }
    }

    /// Why an event was rejected. A rejection changes nothing; the arbiter replies to
    /// the caller with an error (and may count them against a hostile client).
    public enum Rejection: String, Sendable, Hashable, CaseIterable {
        /// The event names a session that is not registered.
        case unknownSession
        /// `register` for an identifier that is already registered.
        case alreadyRegistered
        /// Mixing options with a category that does not accept them (iOS: error -50,
        /// `paramErr`), such as `duckOthers` with `soloAmbient`.
        case optionsNotAllowedForCategory
        /// Sound reported by an interrupted session: it must activate again first.
        /// Usually a race with the interruption, so the arbiter may ignore it.
        case soundWhileInterrupted

        /// A sentence for logs and error replies.
        public var message: String {
            switch self {
            case .unknownSession: "no session is registered under this name"
            case .alreadyRegistered: "a session is already registered under this name"
            case .optionsNotAllowedForCategory: "these category options are not allowed with this category"
            case .soundWhileInterrupted: "the session is interrupted; activate it again before playing"
            }
        }
    }
}
