import DBus
import SessionPolicy

/// Turning decisions into signals.
extension Arbiter {
    /// Each decision for one session becomes a unicast signal to it.
    func send(_ decisions: [SessionPolicy.Decision], via object: DBusExportedObject) {
        for decision in decisions {
            switch decision {
            case let .deactivated(id):
                try? object.emit(.deactivated(reason: .silenceTimeout), to: id)
            case let .interruptionBegan(id, reason):
                try? object.emit(.interruptionBegan(reason), to: id)
            case let .interruptionEnded(id, shouldResume):
                try? object.emit(.interruptionEnded(shouldResume: shouldResume), to: id)
            case let .duck(id, gain):
                try? object.emit(.duckGainChanged(Double(gain)), to: id)
            case let .unduck(id):
                try? object.emit(.duckGainChanged(1), to: id)
            case let .otherAudioPlaying(id, playing):
                try? object.emit(.otherAudioPlayingChanged(playing), to: id)
            case let .secondaryAudioShouldBeSilenced(id, silenced):
                try? object.emit(.secondaryAudioShouldBeSilencedChanged(silenced), to: id)
            case let .pauseForeign(player, stop):
                command(foreign: player, stop ? .stop : .pause)
            case let .resumeForeign(player):
                command(foreign: player, .play)
            case let .readForeignStatus(player):
                readStatus(foreign: player)
            case .remoteTargetChanged, .targetChanged, .rejected:
                break  // the target is broadcast by announceChanges; rejections are error replies
            }
        }
    }

    /// Broadcasts `Target` when the policy decided it changed (`targetChange`, from its
    /// `targetChanged` decision: the one place that decides it), `ScreenLocked` when the
    /// event changed it, and invalidates `Sessions` and `Others`. The arbiter's first
    /// broadcast states both values in any case: a new host's clients may still hold the
    /// previous host's.
    func announceChanges(via object: DBusExportedObject, target targetChange: RemoteTarget?? = nil, screenLocked lockChanged: Bool = false) {
        let (first, policy) = state.withLock { s in
            defer { s.announcedOnce = true }
            return (!s.announcedOnce, s.policy)
        }
        let target: String? = first ? policy.target?.busName ?? "" : targetChange.map { $0?.busName ?? "" }
        let changed = ArbiterStatus.changes(target: target, screenLocked: first || lockChanged ? policy.screenLocked : nil)
        try? object.emitPropertiesChanged(interface: ArbiterName.interface, changed: changed, invalidated: ArbiterStatus.invalidatedOnChange)
    }
}

extension [SessionPolicy.Decision] {
    /// The target across all apps after these decisions, if they say it changed: `nil`
    /// when they do not, `.some(nil)` when there is none any more.
    var targetChange: RemoteTarget?? {
        for decision in self.reversed() {
            if case let .targetChanged(target) = decision { return .some(target) }
        }
        return nil
    }
}
