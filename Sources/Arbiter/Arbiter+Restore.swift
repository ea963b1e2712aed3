import DBus
import SessionPolicy

/// Interruptions that outlive a host change: when the arbiter moves to another process,
/// every session registers again, and an interrupted one says by whom. The interruption
/// carries on if the interrupter registers again and still interrupts it; it ends if the
/// interrupter is gone, or does not register within ``restoreWindow``.
extension Arbiter {
    static let restoreWindow: Duration = .seconds(2)

    func restore(_ victim: SessionID, interruptedBy: SessionID, wasPlaying: Bool) {
        if policy[interruptedBy] != nil {
            handle(.restoreInterruption(victim, by: interruptedBy, wasPlaying: wasPlaying))
            return
        }
        state.withLock { $0.pendingRestores[interruptedBy, default: []].append((victim, wasPlaying)) }
        connection.schedule(after: Arbiter.restoreWindow) { [weak self] in
            self?.endPendingRestores(interruptedBy: interruptedBy)
        }
    }

    /// `interrupter` has just registered: restore what waited for it.
    func restorePending(interruptedBy interrupter: SessionID) {
        let waiting = state.withLock { $0.pendingRestores.removeValue(forKey: interrupter) } ?? []
        for (victim, wasPlaying) in waiting where policy[victim] != nil {
            handle(.restoreInterruption(victim, by: interrupter, wasPlaying: wasPlaying))
        }
    }

    /// `interrupter` is gone or did not come back: its victims' interruptions end, as if
    /// it had deactivated with notifyOthersOnDeactivation.
    func endPendingRestores(interruptedBy interrupter: SessionID) {
        let (waiting, object) = state.withLock { ($0.pendingRestores.removeValue(forKey: interrupter) ?? [], $0.object) }
        guard let object else { return }
        for (victim, wasPlaying) in waiting where policy[victim] != nil {
            try? object.emit("InterruptionEnded", interface: ArbiterName.interface, [.boolean(wasPlaying)], to: victim.rawValue)
        }
    }
}
