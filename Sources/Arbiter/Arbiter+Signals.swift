import DBus
import SessionPolicy

/// Turning decisions into signals.
extension Arbiter {
    /// Each decision for one session becomes a unicast signal to it.
    func send(_ decisions: [SessionPolicy.Decision], via object: DBusExportedObject) {
        for decision in decisions {
            switch decision {
            case let .deactivated(id):
                try? object.emit(.deactivated, [.string("silenceTimeout")], to: id)
            case let .interruptionBegan(id, reason):
                let (name, by) = WireFormat.encode(reason)
                try? object.emit(.interruptionBegan, [.string(name), .string(by)], to: id)
            case let .interruptionEnded(id, shouldResume):
                try? object.emit(.interruptionEnded, [.boolean(shouldResume)], to: id)
            case let .duck(id, gain):
                try? object.emit(.duckGainChanged, [.double(Double(gain))], to: id)
            case let .unduck(id):
                try? object.emit(.duckGainChanged, [.double(1)], to: id)
            case let .otherAudioPlaying(id, playing):
                try? object.emit(.otherAudioPlayingChanged, [.boolean(playing)], to: id)
            case let .secondaryAudioShouldBeSilenced(id, silenced):
                try? object.emit(.secondaryAudioShouldBeSilencedChanged, [.boolean(silenced)], to: id)
            case let .pauseForeign(player, stop):
                command(foreign: player, stop ? "Stop" : "Pause")
            case let .resumeForeign(player):
                command(foreign: player, "Play")
            case .remoteTargetChanged, .targetChanged, .rejected:
                break  // the target is broadcast by announceChanges; rejections are error replies
            }
        }
    }

    /// Broadcasts `Target` and `ScreenLocked` when they changed, and invalidates `Sessions`
    /// and `Others`.
    func announceChanges(via object: DBusExportedObject) {
        let (target, locked, previous) = state.withLock { s in
            let current = (s.policy.target?.busName ?? "", s.policy.screenLocked)
            defer { s.announced = current }
            return (current.0, current.1, s.announced)
        }
        var changed: [String: DBusValue] = [:]
        if previous?.target != target { changed[ArbiterProtocol.Property.target.rawValue] = .string(target) }
        if previous?.locked != locked { changed[ArbiterProtocol.Property.screenLocked.rawValue] = .boolean(locked) }
        try? object.emitPropertiesChanged(interface: ArbiterName.interface, changed: changed, invalidated: [ArbiterProtocol.Property.sessions.rawValue, ArbiterProtocol.Property.others.rawValue])
    }
}

extension DBusExportedObject {
    /// Emits one of the arbiter's signals, unicast to `session` or, without one, broadcast.
    func emit(_ signal: ArbiterProtocol.Signal, _ arguments: [DBusValue] = [], to session: SessionID? = nil) throws(DBusError) {
        try emit(signal.rawValue, interface: ArbiterName.interface, arguments, to: session?.rawValue)
    }
}
