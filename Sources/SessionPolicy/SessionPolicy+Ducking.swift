extension SessionPolicy {
    /// Recomputes ``Session/isDucking`` and ``Session/duckedBy``: a session ducks from
    /// the moment it is active with `duckOthers` until it is no longer active (taking
    /// the option away does not end it before then); while one ducks, every other
    /// active session is ducked, whatever its category (duckers duck each other too).
    /// Inactive and interrupted sessions are not ducked; a session that activates while
    /// a ducker is active is ducked at once.
    mutating func refreshDucking() {
        for id in sessions.keys {
            guard let session = sessions[id] else { continue }
            sessions[id]?.isDucking = session.isActive && (session.isDucking || session.ducksOthers)
        }
        let duckers = Set(ids { $0.isDucking })
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
