extension SessionPolicy {
    /// A re-registered session is still interrupted by `by` (the arbiter changed hosts in
    /// the meantime). If `by` is active and its rules interrupt the session, the
    /// interruption is restored silently (the session already knows); otherwise it ends
    /// with `shouldResume` as if `by` had deactivated with notifyOthersOnDeactivation.
    mutating func restoreInterruption(_ id: SessionID, by: SessionID, wasPlaying: Bool) -> [Decision] {
        guard var session = sessions[id], let interrupter = sessions[by] else { return [] }
        guard id != by, interrupter.isActive, interrupter.interrupts(session) else {
            return session.isInterrupted ? [] : [.interruptionEnded(id, shouldResume: wasPlaying)]
        }
        session.isActive = false
        session.isProducingSound = false
        session.silentSinceTick = nil
        if !session.isInterrupted { session.wasPlayingWhenInterrupted = wasPlaying }
        session.interruptions.insert(.sessionActivated(by))
        sessions[id] = session
        return []
    }
}
