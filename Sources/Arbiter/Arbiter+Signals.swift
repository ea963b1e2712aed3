import DBus
import SessionPolicy

/// Turning decisions into signals.
extension Arbiter {
    /// Each decision for one session becomes a unicast signal to it.
    func send(_ decisions: [SessionPolicy.Decision], via object: DBusExportedObject) {
        let interface = ArbiterName.interface
        for decision in decisions {
            switch decision {
            case let .deactivated(id):
                try? object.emit("Deactivated", interface: interface, [.string("silenceTimeout")], to: id.rawValue)
            case let .interruptionBegan(id, reason):
                let (name, by) = WireFormat.encode(reason)
                try? object.emit("InterruptionBegan", interface: interface, [.string(name), .string(by)], to: id.rawValue)
            case let .interruptionEnded(id, shouldResume):
                try? object.emit("InterruptionEnded", interface: interface, [.boolean(shouldResume)], to: id.rawValue)
            case let .duck(id, gain):
                try? object.emit("DuckGainChanged", interface: interface, [.double(Double(gain))], to: id.rawValue)
            case let .unduck(id):
                try? object.emit("DuckGainChanged", interface: interface, [.double(1)], to: id.rawValue)
            case let .otherAudioPlaying(id, playing):
                try? object.emit("OtherAudioPlayingChanged", interface: interface, [.boolean(playing)], to: id.rawValue)
            case let .secondaryAudioShouldBeSilenced(id, silenced):
                try? object.emit("SecondaryAudioShouldBeSilencedChanged", interface: interface, [.boolean(silenced)], to: id.rawValue)
            case .remoteTargetChanged, .rejected:
                break  // the target is broadcast by announceChanges; rejections are error replies
            }
        }
    }

    /// Broadcasts `Target` and `ScreenLocked` when they changed, and invalidates `Sessions`.
    func announceChanges(via object: DBusExportedObject) {
        let (target, locked, previous) = state.withLock { s in
            let current = (s.policy.remoteTarget?.rawValue ?? "", s.policy.screenLocked)
            defer { s.announced = current }
            return (current.0, current.1, s.announced)
        }
        var changed: [String: DBusValue] = [:]
        if previous?.target != target { changed["Target"] = .string(target) }
        if previous?.locked != locked { changed["ScreenLocked"] = .boolean(locked) }
        try? object.emitPropertiesChanged(interface: ArbiterName.interface, changed: changed, invalidated: ["Sessions"])
    }
}
