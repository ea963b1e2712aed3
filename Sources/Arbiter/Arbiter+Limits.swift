import DBus
import SessionPolicy

/// Room for sessions: a limit per process and one in all, the process id that the first
/// limit needs (asked of the bus before a caller's first registration completes), and
/// `SessionsAvailable`, which tells refused callers when to try again.
extension Arbiter {
    /// Why `id` (of process `pid`, -1 if unknown) may not register now, if it may not.
    func refusal(of id: SessionID, process pid: Int64) -> DBusError? {
        let (policy, processes) = state.withLock { ($0.policy, $0.processes) }
        let count = policy.sessions.count
        if count >= configuration.maximumSessions {
            return DBusError(ArbiterName.Error.limitsExceeded,
                             "the arbiter already has \(count) sessions (at most \(configuration.maximumSessions)); "
                             + "try again on SessionsAvailable")
        }
        if pid >= 0 {
            let own = policy.sessions.keys.filter { processes[$0] == pid }.count
            if own >= configuration.maximumSessionsPerProcess {
                return DBusError(ArbiterName.Error.limitsExceeded,
                                 "process \(pid) already has \(own) sessions (at most \(configuration.maximumSessionsPerProcess) "
                                 + "per process); try again on SessionsAvailable")
            }
        }
        return nil
    }

    /// Refuses `id` for lack of room, and remembers to say when there is room again.
    func refuse(_ error: DBusError) -> DBusError {
        state.withLock { $0.refusedForRoom = true }
        return error
    }

    /// Asks the bus for the process behind `id`, then runs `then` on the bus thread with
    /// it (-1 when the bus cannot say), unless `id` left the bus in the meantime.
    func lookUpProcess(of id: SessionID, then: @escaping @Sendable (Int64) -> Void) {
        let connection = self.connection
        Task { [weak self] in
            let pid = try? await connection.processID(of: id.rawValue, timeout: .seconds(5))
            // Back on the bus thread, where NameOwnerChanged is handled: a caller that left
            // while the bus answered is no longer in `registering`, and nothing happens.
            _ = connection.schedule(after: .zero) { [weak self] in
                guard let self else { return }
                let waiting = self.state.withLock { s -> Bool in
                    guard s.registering.remove(id) != nil else { return false }
                    s.processes[id] = pid ?? -1
                    return true
                }
                if waiting { then(pid ?? -1) }
            }
        }
    }

    /// A unique name left the bus: its session vanishes, its victims waiting for it to
    /// register again resume, and what the arbiter kept about it goes.
    func connectionLeft(_ id: SessionID) {
        let wasSession = policy[id] != nil
        // Every connection that leaves comes here (a playerctl, a dbus-send); only a
        // session's departure is an event of the policy (for others it is a rejection,
        // which would only crowd --trace).
        if wasSession { handle(.vanished(id)) }
        endPendingRestores(interruptedBy: id)
        state.withLock { s in
            s.processes[id] = nil
            s.registering.remove(id)
            s.forgetPendingRestorations(of: id)
            s.earshotPeers[id.rawValue] = nil
            s.outputs[id] = nil
            if !s.othersReady { s.departed.insert(id.rawValue) }
        }
        if wasSession { announceRoom() }
        reconcileOthers()
    }

    /// A session went: if a registration was refused for lack of room since the last
    /// time, broadcast `SessionsAvailable` so that refused callers try again.
    func announceRoom() {
        let (refused, object) = state.withLock { s in
            defer { s.refusedForRoom = false }
            return (s.refusedForRoom, s.object)
        }
        guard refused, let object else { return }
        try? object.emit(.sessionsAvailable)
    }
}

extension Arbiter.State {
    /// Drops what `victim` waits for (a re-registration's restoration): it unregistered,
    /// left, or registers again and says anew. A victim waits for one thing at most, so
    /// no client grows these lists by registering over and over.
    mutating func forgetPendingRestorations(of victim: SessionID) {
        for (interrupter, victims) in pendingRestores where victims.contains(where: { $0.victim == victim }) {
            let rest = victims.filter { $0.victim != victim }
            pendingRestores[interrupter] = rest.isEmpty ? nil : rest
        }
        pendingSilenced.removeAll { $0.victim == victim }
    }
}
