extension SessionPolicy {
    /// Recomputes ``Session/duckedBy``: while a session with `duckOthers` is active,
    /// every other active session is ducked, whatever its category (duckers duck each
    /// other too). Inactive and interrupted sessions are not ducked; a session that
    /// activates while a ducker is active is ducked at once.
    mutating func refreshDucking() {
        let duckers = Set(ids { $0.isActive && $0.ducksOthers })
        for id in sessions.keys {
            let isActive = sessions[id]?.isActive == true
            sessions[id]?.duckedBy = isActive ? duckers.subtracting([id]) : []
        }
    }

    /// `duck` when a session's first ducker appears, `unduck` when its last goes.
    func duckingChanges(since before: SessionPolicy) -> [Decision] {
        sessionIDs.compactMap { id -> Decision? in
            let wasDucked = before.sessions[id]?.isDucked ?? false
            let isDucked = sessions[id]?.isDucked ?? false
            if isDucked == wasDucked { return nil }
            return isDucked ? .duck(id, gain: configuration.duckGain) : .unduck(id)
        }
    }
}
