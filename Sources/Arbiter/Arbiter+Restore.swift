import DBus
import SessionPolicy

/// Interruptions that outlive a host change: when the arbiter moves to another process,
/// every session registers again, and an interrupted one says by whom. The interruption
/// carries on if the interrupter registers again and still interrupts it; it ends if the
/// interrupter is gone, or does not register within ``restoreWindow``. A session silenced
/// by the screen lock stays silenced if the screen is still locked, which a new arbiter
/// knows once the screen savers have answered.
extension Arbiter {
    static let restoreWindow: Duration = .seconds(2)

    func restore(_ victim: SessionID, interruptedBy: SessionID, wasPlaying: Bool) {
        if policy[interruptedBy] != nil {
            handle(.restoreInterruption(victim, reason: .sessionActivated(interruptedBy), wasPlaying: wasPlaying))
            return
        }
        state.withLock { s in
            s.forgetPendingRestorations(of: victim)
            s.pendingRestores[interruptedBy, default: []].append((victim, wasPlaying))
        }
        _ = clock.schedule(after: Arbiter.restoreWindow, on: connection) { [weak self] in
            self?.endPendingRestores(interruptedBy: interruptedBy)
        }
        // The interrupter may have left the bus before this arbiter followed it: a host
        // process's connections leave one after the other, and its arbiter's name can move
        // (starting this arbiter, and the victim's registration) while its session's
        // connection is still there, then gone before this arbiter knew it. Asked now: with
        // no owner, its victims' interruptions end at once, not at the window's end. A
        // departure after the answer comes as NameOwnerChanged (`connectionLeft`), which the
        // bus sends after the answer.
        let connection = self.connection
        Task { [weak self] in
            // (A failed question leaves the window to decide.)
            let owner: String?
            do { owner = try await connection.nameOwner(interruptedBy.rawValue) } catch { return }
            guard owner == nil else { return }
            _ = connection.schedule(after: .zero) { [weak self] in self?.endPendingRestores(interruptedBy: interruptedBy) }
        }
    }

    func restore(_ victim: SessionID, silencedBy cause: InterruptionReason, wasPlaying: Bool) {
        let known = state.withLock { s in
            s.forgetPendingRestorations(of: victim)
            if !s.lockStateKnown { s.pendingSilenced.append((victim, cause, wasPlaying)) }
            return s.lockStateKnown
        }
        if known { handle(.restoreInterruption(victim, reason: cause, wasPlaying: wasPlaying)) }
    }

    /// The lock state is known: restore (or end) the silencing that waited for it.
    func restorePendingSilenced() {
        let waiting = state.withLock { s in
            s.lockStateKnown = true
            defer { s.pendingSilenced = [] }
            return s.pendingSilenced
        }
        for (victim, cause, wasPlaying) in waiting where policy[victim] != nil {
            handle(.restoreInterruption(victim, reason: cause, wasPlaying: wasPlaying))
        }
    }

    /// `interrupter` has just registered: restore what waited for it.
    func restorePending(interruptedBy interrupter: SessionID) {
        let waiting = state.withLock { $0.pendingRestores.removeValue(forKey: interrupter) } ?? []
        for (victim, wasPlaying) in waiting where policy[victim] != nil {
            handle(.restoreInterruption(victim, reason: .sessionActivated(interrupter), wasPlaying: wasPlaying))
        }
    }

    /// `interrupter` is gone or did not come back: its victims' interruptions end, as if
    /// it had deactivated with notifyOthersOnDeactivation.
    func endPendingRestores(interruptedBy interrupter: SessionID) {
        let (waiting, object) = state.withLock { ($0.pendingRestores.removeValue(forKey: interrupter) ?? [], $0.object) }
        guard let object else { return }
        for (victim, wasPlaying) in waiting where policy[victim] != nil {
            try? object.emit(.interruptionEnded(shouldResume: wasPlaying), to: victim)
        }
    }
}
