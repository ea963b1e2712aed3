extension SessionPolicy {
    /// The causes that silence `ambient` and `soloAmbient` right now.
    var silencingCauses: [InterruptionReason] {
        (screenLocked ? [.screenLocked] : []) + (silentMode ? [.silentMode] : [])
    }

    /// Whether the session's category is silenced right now.
    func isSilenced(_ id: SessionID) -> Bool {
        sessions[id].map { $0.category.isSilencedByScreenLockAndSilentMode && !silencingCauses.isEmpty } ?? false
    }

    /// Interrupts the session with every current silencing cause.
    mutating func silence(_ id: SessionID) -> [Decision] {
        silencingCauses.compactMap { interrupt(id, because: $0) }
    }

    /// Screen lock: silences the `ambient` and `soloAmbient` sessions that are active
    /// or already interrupted (so an interrupted game stays quiet while locked); unlock
    /// lifts it (`shouldResume` if they were playing). Sessions in the other categories
    /// keep running.
    mutating func setScreenLocked(_ locked: Bool) -> [Decision] {
        guard locked != screenLocked else { return [] }
        screenLocked = locked
        return updateSilencing(.screenLocked, on: locked)
    }

    /// Silent mode (the ring/silent switch): the same rule as the screen lock.
    mutating func setSilentMode(_ on: Bool) -> [Decision] {
        guard on != silentMode else { return [] }
        silentMode = on
        return updateSilencing(.silentMode, on: on)
    }

    private mutating func updateSilencing(_ cause: InterruptionReason, on: Bool) -> [Decision] {
        let affected = ids { $0.category.isSilencedByScreenLockAndSilentMode && ($0.isActive || $0.isInterrupted) }
        return affected.compactMap { id in
            on ? interrupt(id, because: cause) : lift(cause, from: id, resume: .ifWasPlaying)
        }
    }

    /// After a category change: a silenced category in use (active or interrupted) gets
    /// the current silencing causes; any other category loses them.
    mutating func updateSilencing(of id: SessionID) -> [Decision] {
        guard let session = sessions[id] else { return [] }
        if session.category.isSilencedByScreenLockAndSilentMode {
            return session.isActive || session.isInterrupted ? silence(id) : []
        }
        return [InterruptionReason.screenLocked, .silentMode].compactMap { lift($0, from: id, resume: .ifWasPlaying) }
    }
}
