import DBus
import MPRIS
import OtherApps
import SessionPolicy

/// `org.earshot.AudioSession` (see `dbus/org.earshot.AudioSession.xml`): every method acts
/// on the caller's own session; arguments are validated before anything changes.
extension Arbiter {
    func interfaceDeclaration() -> DBusInterface {
        DBusInterface(
            ArbiterName.interface,
            methods: ArbiterCall.declarations { [weak self] call, message in
                guard let self else { return call.method == .register ? [ArbiterSituation().encoded] : [] }
                return try self.perform(call, message)
            },
            properties: ArbiterStatus.properties(
                sessions: { [weak self] in self?.sessionsSummary() ?? [] },
                others: { [weak self] in self?.othersSummary() ?? [] },
                target: { [weak self] in self?.policy.target?.busName ?? "" },
                screenLocked: { [weak self] in self?.policy.screenLocked ?? false },
                desktopKeys: { [weak self] in self?.state.withLock { $0.desktopKeys.summary } ?? "" }),
            signals: ArbiterSignal.declarations
        )
    }

    /// Carries out a decoded call on the caller's session; `Register` returns its situation.
    private func perform(_ call: ArbiterCall, _ message: DBusMethodCall) throws(DBusError) -> [DBusValue] {
        let id = try Arbiter.caller(message)
        switch call {
        case let .register(app, registration):
            return [try register(id, app: app, registration, message).encoded]
        case .unregister:
            try apply(.vanished(id), for: id)
            state.withLock { s in
                s.forgetPendingRestorations(of: id)
                s.outputs[id] = nil
            }
            announceRoom()
        case let .setCategory(category, options, mode):
            try apply(.setCategory(id, category, options: options, mode: mode), for: id)
        case let .setActive(active, notifyOthers):
            try apply(active ? .activate(id) : .deactivate(id, notifyOthers: notifyOthers), for: id)
        case let .reportSound(producing):
            let tick = self.tick
            try apply(producing ? .soundStarted(id, tick: tick) : .soundStopped(id, tick: tick), for: id)
        case let .setRemoteCommandsEnabled(enabled):
            try apply(.remoteCommandsChanged(id, anyEnabled: enabled), for: id)
        case let .setOutput(output):
            try setOutput(output, for: id)
        }
        return []
    }

    static func caller(_ call: DBusMethodCall) throws(DBusError) -> SessionID {
        guard let sender = call.sender, sender.hasPrefix(":") else {
            throw .accessDenied("the arbiter needs the caller's unique name")
        }
        return SessionID(sender)
    }

    /// Applies `event`; a rejection becomes an error reply naming the reason.
    func apply(_ event: SessionPolicy.Event, for id: SessionID) throws(DBusError) {
        for decision in handle(event) {
            if case let .rejected(_, reason) = decision {
                let name = reason == .unknownSession ? ArbiterName.Error.notRegistered : ArbiterName.Error.rejected
                if case let .setCategory(_, category, options, _) = event, reason == .optionsNotAllowedForCategory,
                   let refusal = WireFormat.refusal(of: options, with: category) {
                    throw DBusError(name, "\(id): \(refusal)")
                }
                throw DBusError(name, "\(id): \(reason.message)")
            }
        }
    }

    /// `Register(app_name, state)`, decoded (and so validated) before anything changes:
    /// registers the caller and replays its state (after the arbiter changed hosts,
    /// processes register again with what they had). The first registration of a
    /// connection waits for the bus to say which process it belongs to (for the
    /// per-process limit) and replies then.
    func register(
        _ id: SessionID, app: String, _ registration: ArbiterRegistration, _ call: DBusMethodCall
    ) throws(DBusError) -> ArbiterSituation {
        let (pid, waiting) = state.withLock { s -> (Int64?, Bool) in
            (s.processes[id], s.registering.contains(id))
        }
        if let pid { return try completeRegistration(id, app: app, registration, process: pid) }
        guard !waiting else {
            throw DBusError(ArbiterName.Error.rejected, "\(id): a registration of this connection is already on its way")
        }
        guard policy[id] == nil else { return try completeRegistration(id, app: app, registration, process: -1) }
        state.withLock { _ = $0.registering.insert(id) }
        let connection = self.connection
        lookUpProcess(of: id) { [weak self] pid in
            guard let self else { return }
            do throws(DBusError) {
                call.reply([try self.completeRegistration(id, app: app, registration, process: pid).encoded], on: connection)
            } catch {
                call.reply(error: error, on: connection)
            }
        }
        throw DBusMethodCall.replyLater
    }

    /// Registers `id` of process `pid` if there is room, then replays its state.
    private func completeRegistration(
        _ id: SessionID, app: String, _ r: ArbiterRegistration, process pid: Int64
    ) throws(DBusError) -> ArbiterSituation {
        if policy[id] == nil, let error = refusal(of: id, process: pid) { throw refuse(error) }
        try apply(.register(id, appName: app, tick: tick), for: id)
        do {
            if let category = r.category { try apply(.setCategory(id, category, options: r.options, mode: r.mode), for: id) }
            if r.remoteCommands { try apply(.remoteCommandsChanged(id, anyEnabled: true), for: id) }
            if r.active { try apply(.activate(id), for: id) }
            if r.producingSound { try apply(.soundStarted(id, tick: tick), for: id) }
        } catch {
            handle(.vanished(id))  // all or nothing
            throw error
        }
        if let interruptedBy = r.interruptedBy {
            // Only re-registration after a host change says who interrupted it. Later, the
            // claim would make the arbiter treat another session as an interrupter (and
            // deactivate it once silent): it is ignored, and the caller's interruption ends.
            if Duration.nanoseconds(tick) <= configuration.reRegistrationWindow, interruptedBy != id {
                restore(id, interruptedBy: interruptedBy, wasPlaying: r.wasPlaying)
            } else if let object = state.withLock({ $0.object }) {
                try? object.emit(.interruptionEnded(shouldResume: r.wasPlaying), to: id)
            }
        }
        if let silencedBy = r.silencedBy { restore(id, silencedBy: silencedBy, wasPlaying: r.wasPlaying) }
        if let output = r.output { state.withLock { $0.outputs[id] = output } }
        restorePending(interruptedBy: id)
        // Its connection and process are Earshot's for as long as the connection is on the
        // bus: when it unregisters (at exit, before its MPRIS name and stream go), they
        // must not turn into another app's, which would pause or interrupt sessions.
        state.withLock { s in
            if pid > 0 || s.earshotPeers[id.rawValue] == nil { s.earshotPeers[id.rawValue] = pid }
        }
        reconcileOthers()  // its process's players and streams are no longer another app's
        return situation(of: id)
    }

    /// `SetOutput`: remembers what the session plays through and invalidates `Sessions`
    /// when that changed.
    func setOutput(_ output: ArbiterRegistration.Output, for id: SessionID) throws(DBusError) {
        guard policy[id] != nil else { throw DBusError(ArbiterName.Error.notRegistered, "\(id): \(SessionPolicy.Rejection.unknownSession.message)") }
        let (changed, object) = state.withLock { s in
            defer { s.outputs[id] = output }
            return (s.outputs[id] != output, s.object)
        }
        if changed, let object { announceChanges(via: object) }
    }

    /// What a session needs to know right after registering.
    func situation(of id: SessionID) -> ArbiterSituation {
        let policy = self.policy
        let session = policy[id]
        var situation = ArbiterSituation()
        situation.otherAudioPlaying = policy.otherAudioPlaying(for: id)
        situation.secondaryAudioShouldBeSilenced = policy.secondaryAudioShouldBeSilencedHint(for: id)
        situation.interrupted = session?.isInterrupted ?? false
        situation.duckGain = session?.isDucked == true ? Double(policy.configuration.duckGain) : 1
        situation.target = policy.target?.busName ?? ""
        return situation
    }

    /// Other apps' players, and processes sounding without one, for `earshot status`;
    /// the most recent sounder first.
    func othersSummary() -> [ArbiterOtherSummary] {
        let (policy, observed, ducker) = state.withLock { s in (s.policy, s.players, s.ducker) }
        let ducked = ducker?.loweredProcesses ?? []
        let duckers = policy.foreignDuckers.map(\.rawValue).sorted()
        func row(player: String, pid: Int64, status: String, pausedBy: SessionID?) -> ArbiterOtherSummary {
            let sound = policy.foreignSounds[pid]
            var row = ArbiterOtherSummary()
            row.player = player
            row.app = observed[player]?.names.min().map { String($0.dropFirst(MPRISPlayerManager.namePrefix.count)) } ?? ""
            row.pid = pid
            row.status = status
            row.sounding = sound?.isSounding ?? false
            row.lastSound = sound?.lastSoundTick ?? 0
            row.pausedBy = pausedBy?.rawValue ?? ""
            row.duckedBy = ducked.contains(pid) ? duckers : []
            row.target = !player.isEmpty && policy.target == .foreign(player: player)
            return row
        }
        var rows: [ArbiterOtherSummary] = []
        for player in policy.foreignPlayers.values {
            rows.append(row(player: player.id, pid: player.pid, status: player.status.rawValue, pausedBy: player.pausedBy))
        }
        let withPlayers = Set(policy.foreignPlayers.values.map(\.pid))
        for sound in policy.foreignSounds.values where sound.isSounding && !withPlayers.contains(sound.pid) {
            rows.append(row(player: "", pid: sound.pid, status: "", pausedBy: nil))
        }
        return rows.sorted { ($0.lastSound, $1.player) > ($1.lastSound, $0.player) }
    }

    /// Every session, for `earshot status`; the most recent sounder first.
    func sessionsSummary() -> [ArbiterSessionSummary] {
        let (policy, outputs) = state.withLock { ($0.policy, $0.outputs) }
        return policy.sessions.values
            .sorted { ($0.lastSoundTick ?? 0, $1.id) > ($1.lastSoundTick ?? 0, $0.id) }
            .map { session in
                var row = ArbiterSessionSummary()
                row.id = session.id.rawValue
                row.app = session.appName
                row.category = session.category.rawValue
                row.options = session.options.names
                row.mode = session.mode.rawValue
                row.active = session.isActive
                row.producingSound = session.isProducingSound
                row.interrupted = session.isInterrupted
                row.ducked = session.isDucked
                row.lastSound = session.lastSoundTick ?? 0
                row.eligible = session.isEligibleRemoteTarget
                row.target = policy.target == .session(session.id)
                row.outputKind = outputs[session.id]?.kind ?? ArbiterProtocol.OutputKind.none
                row.outputName = outputs[session.id]?.name ?? ""
                return row
            }
    }
}
