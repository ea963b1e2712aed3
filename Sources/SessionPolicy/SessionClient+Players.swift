/// The players and the session's interruptions: which players an interruption paused, and
/// when they resume or hear its end. `AudioSession` identifies its players by ``PlayerID``
/// and does what the effects say to them.
extension SessionClient {
    /// A player of the process, as the client knows it: its object's identifier, which the
    /// client only compares (it knows nothing of players).
    package typealias PlayerID = ObjectIdentifier

    /// What an activation enqueued for players (``Effect/enqueueActivation(_:)``) is for.
    package enum Activation: Sendable, Hashable {
        /// A player starts in an inactive session (as `AVAudioPlayer.play()` activates it on iOS).
        case play
        /// A player was asked to play while the session was interrupted: the session
        /// activates again first (a user's play takes over, as on iOS), and the player
        /// starts only if that activation stands (it does not while the screen is locked
        /// for an ambient session); otherwise it waits for the interruption to end.
        case start(PlayerID)
        /// An interruption ended with `shouldResume`: the players it paused play again once
        /// the session is active again. The sound the engine kept making through the
        /// interruption (its silence threshold), which the arbiter stopped counting when it
        /// interrupted, is reported once a resumed player is heard (``Input/playerHeard``),
        /// not with this activation: the players are paused until then, and the engine's
        /// sound-stopped event for that silence could still come after such a report. The
        /// arbiter would then read sound, silence, and sound again once the players were
        /// heard; a session that registered active in between found this one active, silent
        /// and no longer resuming, and its interruption ended without `shouldResume`. Until a
        /// report, the arbiter counts the session as resuming, and an interruption then lets
        /// it resume at its end.
        case resumption
    }

    mutating func handlePlayers(_ input: Input) -> [Effect] {
        switch input {
        case .playerStarting(let id, let askedAfter):
            return playerStarting(id, askedAfter: askedAfter)
        case .playerStarted(let id, let before):
            // An interruption that began between the start's check and its voice's start
            // found the player not playing yet and left it sounding: it is paused now, as
            // that interruption would have paused it, and resumes with its end.
            guard interrupted, interruptionsBegun != before, !pausedByInterruption.contains(id) else { return [] }
            pausedByInterruption.insert(id)
            return [.pause([id])]
        case .interruptionEnded(let shouldResume, let manual):
            interruption = .none
            return interruptionEnded(shouldResume: shouldResume, manual: manual)
        case .activated(.play, _):
            playingActivations -= 1
            return []
        case .activated(.start(let id), _):
            guard startsAwaitingActivation.remove(id) != nil else { return [] }
            // Still interrupted (the screen is locked): it waits for the end instead. Its
            // sound, if the engine starts again, is reported after the activation.
            guard interrupted else { return [.start(id)] }
            pausedByInterruption.insert(id)
            return []
        case .activated(.resumption, let live):
            playingActivations -= 1
            // Interrupted again while activating: the players wait for that interruption's end.
            var resumed: Set<PlayerID> = []
            if !interrupted {
                resumed = pausedByInterruption.intersection(live)
                (resumeOwed, pausedByInterruption) = (false, [])
                resumingPlayers.formUnion(resumed)
            }
            missedSoundAwaitsHearing = !resumed.isEmpty
            if resumed.isEmpty { return missedSound ? [.reportSound(producing: true)] : [] }
            return [.resume(resumed, interruptionsBefore: interruptionsBegun)]
        case .playersResumed(let ids, let before, let playing):
            resumingPlayers.subtract(ids)
            // An interruption that began between the resumption's check and the players'
            // start may have found them not playing yet: they are paused and recorded now.
            guard interrupted, interruptionsBegun != before else { return [] }
            pausedByInterruption.formUnion(playing)
            resumeOwed = !pausedByInterruption.isEmpty
            return [.pause(playing)]
        default:
            preconditionFailure("not a player input: \(input)")
        }
    }

    private mutating func playerStarting(_ id: PlayerID, askedAfter: UInt64?) -> [Effect] {
        // A resumption that meets a new interruption waits for its end; it does not take
        // over as a user's play does.
        if resumingPlayers.remove(id) != nil, interrupted {
            pausedByInterruption.insert(id)
            resumeOwed = true
            return []
        }
        // A start the app asked for before the interruption that holds the session began
        // (a queue's item that opened since) waits for its end, as a player that was playing
        // when it began does: the app's play came before it, and does not take over.
        // (`earshot play`'s first item, opened while a user pressed play on another app that
        // the start had interrupted, took the sound back from it.)
        if interrupted, let askedAfter, interruptionsBegun != askedAfter {
            pausedByInterruption.insert(id)
            return []
        }
        pausedByInterruption.remove(id)
        if pausedByInterruption.isEmpty { resumeOwed = false }
        if interrupted {
            startsAwaitingActivation.insert(id)
            return [.enqueueActivation(.start(id))]
        }
        startsAwaitingActivation.remove(id)
        var effects: [Effect] = []
        if !active {
            // An interruption that begins while this activation is on its way pauses the
            // player; the arbiter then takes the activation as the session taking over and
            // ends that interruption without `shouldResume`. The player was playing and its
            // session won: it resumes (see `interruptionEnded`; a burst of sessions that
            // register active and vanish left it paused).
            playingActivations += 1
            effects.append(.enqueueActivation(.play))
        }
        // The engine already sounds, with system sounds only: it sees no new start, so the
        // player's sound is reported here, or by the activation enqueued above.
        if soundIsSystemSoundsOnly {
            (soundIsSystemSoundsOnly, producingSound) = (false, true)
            if active { effects.append(enqueueSoundReport()) }
        }
        return effects
    }

    /// The interruption ended. With `shouldResume`, the players it paused play again once
    /// the session is active again; they stay recorded as paused by the interruption until
    /// then, so that an interruption beginning in between (a burst of interrupters that
    /// come and go) keeps them for its own end instead of losing them. Until they play, the
    /// resumption is owed: a later end without `shouldResume` does not cancel it (the
    /// arbiter says false when the session was not sounding yet, or when the activation
    /// sent to resume took over a new interruption, as a user's play does: an end that
    /// arrives while such an activation, or a play's, is on its way resumes too).
    ///
    /// Players that do not resume by themselves hear the end at once and stay paused; only
    /// the others count for the resumption.
    private mutating func interruptionEnded(shouldResume: Bool, manual: Set<PlayerID>) -> [Effect] {
        guard shouldResume || resumeOwed || playingActivations > 0 else {
            defer { pausedByInterruption = [] }
            return [.ended(shouldResume: false, released: pausedByInterruption)]
        }
        let released = manual.intersection(pausedByInterruption)
        pausedByInterruption.subtract(released)
        resumeOwed = !pausedByInterruption.isEmpty
        var effects: [Effect] = [.ended(shouldResume: true, released: released)]
        if resumeOwed {
            playingActivations += 1
            effects.append(.enqueueActivation(.resumption))
        }
        return effects
    }
}
