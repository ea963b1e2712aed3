extension SessionPolicy {
    /// A new session: `soloAmbient`, no options, inactive, silent.
    mutating func register(_ id: SessionID, appName: String, tick: UInt64) -> [Decision] {
        sessions[id] = Session(id: id, appName: appName, registeredTick: tick)
        return []
    }

    /// The process is gone. Its victims' interruptions end as with
    /// `notifyOthersOnDeactivation` (DESIGN: a killed process must leave nobody
    /// interrupted); its ducking and its place in the remote-target order go with it.
    /// No decision names the vanished session itself: nobody is left to receive it.
    mutating func vanish(_ id: SessionID) -> [Decision] {
        sessions[id] = nil
        return liftInterruptions(causedBy: id, resume: .ifWasPlaying) + releaseForeignPlayers(of: id, resume: true)
    }

    mutating func setRemoteCommandsEnabled(_ id: SessionID, _ enabled: Bool) -> [Decision] {
        sessions[id]?.hasEnabledRemoteCommand = enabled
        return []
    }
}
