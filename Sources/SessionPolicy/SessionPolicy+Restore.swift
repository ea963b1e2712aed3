extension SessionPolicy {
    /// A re-registered session is still interrupted for `reason` (the arbiter changed
    /// hosts in the meantime). If the cause still holds, the interruption is restored
    /// silently (the session already knows); otherwise it ends with `shouldResume` if the
    /// session was playing, as if the interrupter had deactivated with
    /// notifyOthersOnDeactivation, or the screen had been unlocked.
    mutating func restoreInterruption(_ id: SessionID, reason: InterruptionReason, wasPlaying: Bool) -> [Decision] {
        guard var session = sessions[id] else { return [] }
        guard stillHolds(reason, for: session) else {
            if session.isInterrupted { return [] }
            sessions[id]?.isResuming = wasPlaying
            return [.interruptionEnded(id, shouldResume: wasPlaying)]
        }
        session.isActive = false
        session.isProducingSound = false
        session.silentSinceTick = nil
        if !session.isInterrupted { session.wasPlayingWhenInterrupted = wasPlaying }
        session.interruptions.insert(reason)
        sessions[id] = session
        return []
    }

    /// Whether `reason` would interrupt `session` now.
    private func stillHolds(_ reason: InterruptionReason, for session: Session) -> Bool {
        switch reason {
        case .sessionActivated(let by):
            guard let interrupter = sessions[by] else { return false }
            return by != session.id && interrupter.isActive && interrupter.interrupts(session)
        case .screenLocked, .silentMode:
            return silencingCauses.contains(reason) && session.category.isSilencedByScreenLockAndSilentMode
        case .routeDisconnected:
            return false  // it ends as soon as it begins
        case .otherApp(let player):
            return foreignPlayers[player]?.status == .playing && !session.isMixable
        }
    }
}
