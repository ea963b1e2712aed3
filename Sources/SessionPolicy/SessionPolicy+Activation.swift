extension SessionPolicy {
    /// `setActive(true)`.
    ///
    /// A silenced session (`ambient`/`soloAmbient` with the screen locked or in silent
    /// mode) is interrupted at once instead, and learns from `interruptionEnded` when
    /// it may play. Otherwise the session drops its own interruption (it resumed by
    /// itself), becomes active, and interrupts every active session its rules
    /// interrupt.
    mutating func activate(_ id: SessionID) -> [Decision] {
        if isSilenced(id) { return silence(id) }
        var decisions = [endOwnInterruption(id)].compactMap { $0 }
        sessions[id]?.isActive = true
        countActivation(of: id)
        decisions += interruptOthers(for: id)
        decisions += pauseForeignPlayers(for: id)
        return decisions
    }

    /// `setActive(false)`. Running audio stops (iOS stops running I/O on
    /// deactivation). The interruptions it caused end: with `notifyOthers`,
    /// `shouldResume` is true for the sessions that were playing; without, false.
    /// Deactivating an inactive or interrupted session is allowed: it still releases
    /// its victims (an interrupted app giving up for good).
    mutating func deactivate(_ id: SessionID, notifyOthers: Bool) -> [Decision] {
        sessions[id]?.isActive = false
        sessions[id]?.isProducingSound = false
        sessions[id]?.isResuming = false
        return liftInterruptions(causedBy: id, resume: notifyOthers ? .ifWasPlaying : .never)
            + releaseForeignPlayers(of: id, resume: notifyOthers)
    }

    /// `setCategory`: the options are replaced, and everything the category decides is
    /// evaluated again: silencing, the interruptions it causes and suffers, and, if it
    /// is active, what it interrupts as though it had just activated.
    mutating func setCategory(_ id: SessionID, _ category: Category, options: CategoryOptions, mode: Mode) -> [Decision] {
        sessions[id]?.category = category
        sessions[id]?.options = options.normalized(for: category)
        sessions[id]?.mode = mode
        var decisions = updateSilencing(of: id)
        decisions += liftInterruptionsNoLongerCaused(by: id)
        decisions += liftInterruptionsNoLongerSuffered(by: id)
        if sessions[id]?.isActive == true {
            countActivation(of: id)
            decisions += interruptOthers(for: id)
            decisions += pauseForeignPlayers(for: id)
        }
        return decisions
    }

    /// The arbiter's silence timeout: the session has been silent too long, so it is
    /// deactivated as iOS deactivates a suspended background app's session, and the
    /// interruptions it caused end with `shouldResume` for those that were playing.
    /// The session is told (`deactivated`, if it was active), so that `isActive` reads
    /// false and its next sound activates it again. Ignored while it produces sound (a
    /// stale timer).
    mutating func silenceTimedOut(_ id: SessionID) -> [Decision] {
        guard let session = sessions[id], !session.isProducingSound else { return [] }
        sessions[id]?.isActive = false
        sessions[id]?.isResuming = false
        let told: [Decision] = session.isActive ? [.deactivated(id)] : []
        return told + liftInterruptions(causedBy: id, resume: .ifWasPlaying) + releaseForeignPlayers(of: id, resume: true)
    }

    /// Stamps `id` with the next ``activations`` count.
    private mutating func countActivation(of id: SessionID) {
        activations += 1
        sessions[id]?.activation = activations
    }

    /// The active sessions `id` interrupts, interrupted.
    mutating func interruptOthers(for id: SessionID) -> [Decision] {
        guard let interrupter = sessions[id] else { return [] }
        let victims = ids { $0.isActive && interrupter.interrupts($0) }
        return victims.compactMap { interrupt($0, because: .sessionActivated(id)) }
    }
}
