extension SessionPolicy {
    /// How `shouldResume` is decided when a session's last cause goes away.
    enum ResumeRule {
        /// True if the session was producing sound when its interruption began.
        case ifWasPlaying
        /// Always false.
        case never
    }

    /// Adds `cause` to the session's interruptions. The first cause deactivates and
    /// silences it and returns `interruptionBegan`; later ones return nothing.
    mutating func interrupt(_ id: SessionID, because cause: InterruptionReason) -> Decision? {
        guard var session = sessions[id], !session.interruptions.contains(cause) else { return nil }
        let isFirst = !session.isInterrupted
        if isFirst {
            session.wasPlayingWhenInterrupted = session.isProducingSound || session.isResuming
            session.isResuming = false
            session.isActive = false
            session.isProducingSound = false
            session.silentSinceTick = nil
        }
        session.interruptions.insert(cause)
        sessions[id] = session
        return isFirst ? .interruptionBegan(id, reason: cause) : nil
    }

    /// Removes `cause` from the session's interruptions. When it was the last one, the
    /// active sessions that would interrupt the session now become its causes (if
    /// `transferring`); if there are none, returns `interruptionEnded` with
    /// `shouldResume` by `resume`.
    mutating func lift(_ cause: InterruptionReason, from id: SessionID, resume: ResumeRule,
                       transferring: Bool = true) -> Decision? {
        guard var session = sessions[id], session.interruptions.remove(cause) != nil else { return nil }
        if !session.isInterrupted && transferring {
            session.interruptions = Set(activeInterrupters(of: session).map(InterruptionReason.sessionActivated))
        }
        if session.isInterrupted {
            sessions[id] = session
            return nil
        }
        let shouldResume = resume == .ifWasPlaying && session.wasPlayingWhenInterrupted
        session.wasPlayingWhenInterrupted = false
        session.isResuming = shouldResume
        sessions[id] = session
        return .interruptionEnded(id, shouldResume: shouldResume)
    }

    /// The active sessions whose rules interrupt `victim`, in order.
    func activeInterrupters(of victim: Session) -> [SessionID] {
        ids { $0.isActive && $0.interrupts(victim) }
    }

    /// The sessions `interrupter` interrupts, in order.
    func victims(of interrupter: SessionID) -> [SessionID] {
        ids { $0.interruptions.contains(.sessionActivated(interrupter)) }
    }

    /// Ends `interrupter`'s part in every interruption it caused.
    mutating func liftInterruptions(causedBy interrupter: SessionID, resume: ResumeRule) -> [Decision] {
        victims(of: interrupter).compactMap { lift(.sessionActivated(interrupter), from: $0, resume: resume) }
    }

    /// After a category change of `interrupter`: ends its part in the interruptions its
    /// new category no longer causes (`shouldResume` if the victim was playing).
    mutating func liftInterruptionsNoLongerCaused(by interrupter: SessionID) -> [Decision] {
        guard let source = sessions[interrupter] else { return [] }
        let released = victims(of: interrupter).filter { !source.interrupts(sessions[$0]!) }
        return released.compactMap { lift(.sessionActivated(interrupter), from: $0, resume: .ifWasPlaying) }
    }

    /// After a category change of `victim`: drops the interrupters whose rules no
    /// longer interrupt its new category (`shouldResume` if it was playing).
    mutating func liftInterruptionsNoLongerSuffered(by victim: SessionID) -> [Decision] {
        guard let session = sessions[victim] else { return [] }
        let stale = session.interruptions.compactMap(\.interrupter).sorted().filter { interrupter in
            sessions[interrupter].map { !$0.interrupts(session) } ?? true
        }
        return stale.compactMap { lift(.sessionActivated($0), from: victim, resume: .ifWasPlaying) }
    }

    /// An explicit activation by an interrupted session ends its interruption with
    /// `shouldResume` false: it resumed by itself.
    mutating func endOwnInterruption(_ id: SessionID) -> Decision? {
        guard var session = sessions[id], session.isInterrupted else { return nil }
        session.interruptions = []
        // Taking over its own interruption, it goes back to what it did: if it was
        // playing, it is on its way back to playing.
        session.isResuming = session.wasPlayingWhenInterrupted
        session.wasPlayingWhenInterrupted = false
        sessions[id] = session
        return .interruptionEnded(id, shouldResume: false)
    }
}
