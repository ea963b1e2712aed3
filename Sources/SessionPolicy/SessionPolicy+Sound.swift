extension SessionPolicy {
    /// The engine reports sound. An inactive session is activated first, as iOS
    /// activates the session when a player starts without it; if that silences it, the
    /// sound is not recorded. (An interrupted session's sound is rejected before this.)
    mutating func soundStarted(_ id: SessionID, tick: UInt64) -> [Decision] {
        var decisions: [Decision] = []
        if sessions[id]?.isActive == false {
            decisions = activate(id)
        }
        guard sessions[id]?.isActive == true else { return decisions }
        soundStarts += 1
        sessions[id]?.isProducingSound = true
        sessions[id]?.isResuming = false
        sessions[id]?.lastSoundTick = tick
        sessions[id]?.silentSinceTick = nil
        sessions[id]?.soundSequence = soundStarts
        return decisions
    }

    /// The engine reports silence. Only the first report since the last sound sets
    /// ``Session/silentSinceTick``; a report after an interruption already stopped the
    /// session still records when its engine fell silent.
    mutating func soundStopped(_ id: SessionID, tick: UInt64) -> [Decision] {
        sessions[id]?.isProducingSound = false
        if sessions[id]?.silentSinceTick == nil {
            sessions[id]?.silentSinceTick = tick
        }
        return []
    }
}
