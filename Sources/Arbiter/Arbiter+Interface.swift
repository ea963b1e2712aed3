import DBus
import SessionPolicy

/// `org.earshot.AudioSession` (see `dbus/org.earshot.AudioSession.xml`): every method acts
/// on the caller's own session; arguments are validated before anything changes.
extension Arbiter {
    func interfaceDeclaration() -> DBusInterface {
        DBusInterface(
            ArbiterName.interface,
            methods: [
                DBusMethod(ArbiterProtocol.Method.register.rawValue, inputs: [.init("app_name", .string), .init("state", .dictionary(key: .string, value: .variant))],
                           outputs: [.init("situation", .dictionary(key: .string, value: .variant))]) { [weak self] call in
                    guard let self else { return [.vardict([:])] }
                    return [try self.register(call)]
                },
                method(.unregister) { arbiter, id, _ in
                    try arbiter.apply(.vanished(id), for: id)
                    arbiter.state.withLock { s in
                        s.forgetPendingRestorations(of: id)
                        s.outputs[id] = nil
                    }
                    arbiter.announceRoom()
                },
                method(.setCategory, [.init("category", .string), .init("options", .array(.string)), .init("mode", .string)]) { arbiter, id, args in
                    let category = try WireFormat.category(args[0].string ?? "")
                    let names = args[1].stringArray ?? []
                    guard names.count <= RegistrationState.maximumOptions else {
                        throw DBusError.invalidArgs("options has \(names.count) entries; at most \(RegistrationState.maximumOptions)")
                    }
                    let options = try WireFormat.options(names)
                    let mode = try WireFormat.mode(args[2].string ?? "")
                    try arbiter.apply(.setCategory(id, category, options: options, mode: mode), for: id)
                },
                method(.setActive, [.init("active", .boolean), .init("notify_others_on_deactivation", .boolean)]) { arbiter, id, args in
                    let event: SessionPolicy.Event = args[0].bool == true ? .activate(id) : .deactivate(id, notifyOthers: args[1].bool == true)
                    try arbiter.apply(event, for: id)
                },
                method(.reportSound, [.init("producing", .boolean)]) { arbiter, id, args in
                    let tick = arbiter.tick
                    try arbiter.apply(args[0].bool == true ? .soundStarted(id, tick: tick) : .soundStopped(id, tick: tick), for: id)
                },
                method(.setRemoteCommandsEnabled, [.init("enabled", .boolean)]) { arbiter, id, args in
                    try arbiter.apply(.remoteCommandsChanged(id, anyEnabled: args[0].bool == true), for: id)
                },
                method(.setOutput, [.init("kind", .string), .init("name", .string)]) { arbiter, id, args in
                    let output = try RegistrationState.Output(kind: args[0].string ?? "", name: args[1].string ?? "")
                    try arbiter.setOutput(output, for: id)
                },
            ],
            properties: [
                DBusProperty(ArbiterProtocol.Property.sessions.rawValue, .array(.dictionary(key: .string, value: .variant)), changeSignal: .invalidates) { [weak self] in
                    .array(.dictionary(key: .string, value: .variant), self?.sessionsSummary() ?? [])
                },
                DBusProperty(ArbiterProtocol.Property.others.rawValue, .array(.dictionary(key: .string, value: .variant)), changeSignal: .invalidates) { [weak self] in
                    .array(.dictionary(key: .string, value: .variant), self?.othersSummary() ?? [])
                },
                DBusProperty(ArbiterProtocol.Property.target.rawValue, .string) { [weak self] in .string(self?.policy.target?.busName ?? "") },
                DBusProperty(ArbiterProtocol.Property.screenLocked.rawValue, .boolean) { [weak self] in .boolean(self?.policy.screenLocked ?? false) },
                DBusProperty(ArbiterProtocol.Property.desktopKeys.rawValue, .string) { [weak self] in
                    .string(self?.state.withLock { $0.desktopKeys.summary } ?? "")
                },
            ],
            signals: [
                DBusSignalDeclaration(ArbiterProtocol.Signal.deactivated.rawValue, arguments: [.init("reason", .string)]),
                DBusSignalDeclaration(ArbiterProtocol.Signal.interruptionBegan.rawValue, arguments: [.init("reason", .string), .init("by", .string)]),
                DBusSignalDeclaration(ArbiterProtocol.Signal.interruptionEnded.rawValue, arguments: [.init("should_resume", .boolean)]),
                DBusSignalDeclaration(ArbiterProtocol.Signal.duckGainChanged.rawValue, arguments: [.init("gain", .double)]),
                DBusSignalDeclaration(ArbiterProtocol.Signal.otherAudioPlayingChanged.rawValue, arguments: [.init("playing", .boolean)]),
                DBusSignalDeclaration(ArbiterProtocol.Signal.secondaryAudioShouldBeSilencedChanged.rawValue, arguments: [.init("silenced", .boolean)]),
                DBusSignalDeclaration(ArbiterProtocol.Signal.sessionsAvailable.rawValue),
            ]
        )
    }

    /// A method acting on the caller's session.
    private func method(
        _ name: ArbiterProtocol.Method, _ inputs: [DBusArgument] = [],
        _ body: @escaping @Sendable (Arbiter, SessionID, [DBusValue]) throws -> Void
    ) -> DBusMethod {
        DBusMethod(name.rawValue, inputs: inputs) { [weak self] call in
            guard let self else { return [] }
            try body(self, try Arbiter.caller(call), call.arguments)
            return []
        }
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

    /// `Register(app_name, state)`: validates everything first, then registers the caller
    /// and replays its state (after the arbiter changed hosts, processes register again
    /// with what they had). The first registration of a connection waits for the bus to
    /// say which process it belongs to (for the per-process limit) and replies then.
    func register(_ call: DBusMethodCall) throws(DBusError) -> DBusValue {
        let id = try Arbiter.caller(call)
        let app = call.arguments[0].string ?? ""
        guard !app.isEmpty, app.utf8.count <= 255 else {
            throw .invalidArgs("app_name must be 1 to 255 bytes, not \(WireFormat.quoted(app)) (\(app.utf8.count) bytes)")
        }
        // It is shown to users (earshot status): no terminal escapes or line breaks.
        guard !app.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidArgs("app_name must not contain control characters: \(WireFormat.quoted(app))")
        }
        let registration = try RegistrationState(call.arguments[1])
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
                call.reply([try self.completeRegistration(id, app: app, registration, process: pid)], on: connection)
            } catch {
                call.reply(error: error, on: connection)
            }
        }
        throw DBusMethodCall.replyLater
    }

    /// Registers `id` of process `pid` if there is room, then replays its state.
    private func completeRegistration(
        _ id: SessionID, app: String, _ r: RegistrationState, process pid: Int64
    ) throws(DBusError) -> DBusValue {
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
                try? object.emit(.interruptionEnded, [.boolean(r.wasPlaying)], to: id)
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
    func setOutput(_ output: RegistrationState.Output, for id: SessionID) throws(DBusError) {
        guard policy[id] != nil else { throw DBusError(ArbiterName.Error.notRegistered, "\(id): \(SessionPolicy.Rejection.unknownSession.message)") }
        let (changed, object) = state.withLock { s in
            defer { s.outputs[id] = output }
            return (s.outputs[id] != output, s.object)
        }
        if changed, let object { announceChanges(via: object) }
    }

    /// What a session needs to know right after registering.
    func situation(of id: SessionID) -> DBusValue {
        let policy = self.policy
        let session = policy[id]
        return .vardict([
            ArbiterProtocol.SituationKey.otherAudioPlaying.rawValue: .boolean(policy.otherAudioPlaying(for: id)),
            ArbiterProtocol.SituationKey.secondaryAudioShouldBeSilenced.rawValue: .boolean(policy.secondaryAudioShouldBeSilencedHint(for: id)),
            ArbiterProtocol.SituationKey.interrupted.rawValue: .boolean(session?.isInterrupted ?? false),
            ArbiterProtocol.SituationKey.duckGain.rawValue: .double(session?.isDucked == true ? Double(policy.configuration.duckGain) : 1),
            ArbiterProtocol.SituationKey.target.rawValue: .string(policy.target?.busName ?? ""),
        ])
    }

    /// One dictionary per other app's player, and per process sounding without one, for
    /// `earshot status`; the most recent sounder first.
    func othersSummary() -> [DBusValue] {
        let (policy, observed, ducked) = state.withLock { s in
            (s.policy, s.players, Set(s.ducked.values.filter { !$0.ladder.isEmpty && ($0.position ?? 1) > 0 }.map(\.pid)))
        }
        let duckers = policy.foreignDuckers.map(\.rawValue).sorted()
        typealias Key = ArbiterProtocol.OtherKey
        var rows: [(tick: UInt64, player: String, value: DBusValue)] = []
        func row(player: String, pid: Int64, status: String, pausedBy: SessionID?) -> (UInt64, String, DBusValue) {
            let sound = policy.foreignSounds[pid]
            let tick = sound?.lastSoundTick ?? 0
            let app = observed[player]?.names.min().map { String($0.dropFirst(Arbiter.mprisPrefix.count)) } ?? ""
            return (tick, player, .vardict([
                Key.player.rawValue: .string(player), Key.app.rawValue: .string(app), Key.pid.rawValue: .int64(pid), Key.status.rawValue: .string(status),
                Key.sounding.rawValue: .boolean(sound?.isSounding ?? false), Key.lastSound.rawValue: .uint64(tick),
                Key.pausedBy.rawValue: .string(pausedBy?.rawValue ?? ""),
                Key.duckedBy.rawValue: .strings(ducked.contains(pid) ? duckers : []),
                Key.target.rawValue: .boolean(!player.isEmpty && policy.target == .foreign(player: player)),
            ]))
        }
        for player in policy.foreignPlayers.values {
            rows.append(row(player: player.id, pid: player.pid, status: player.status.rawValue, pausedBy: player.pausedBy))
        }
        let withPlayers = Set(policy.foreignPlayers.values.map(\.pid))
        for sound in policy.foreignSounds.values where sound.isSounding && !withPlayers.contains(sound.pid) {
            rows.append(row(player: "", pid: sound.pid, status: "", pausedBy: nil))
        }
        return rows.sorted { ($0.tick, $1.player) > ($1.tick, $0.player) }.map(\.value)
    }

    /// One dictionary per session, for `earshot status`; the most recent sounder first.
    func sessionsSummary() -> [DBusValue] {
        let (policy, outputs) = state.withLock { ($0.policy, $0.outputs) }
        return policy.sessions.values
            .sorted { ($0.lastSoundTick ?? 0, $1.id) > ($1.lastSoundTick ?? 0, $0.id) }
            .map { session in
                .vardict([
                    ArbiterProtocol.SessionKey.id.rawValue: .string(session.id.rawValue),
                    ArbiterProtocol.SessionKey.app.rawValue: .string(session.appName),
                    ArbiterProtocol.SessionKey.category.rawValue: .string(session.category.rawValue),
                    ArbiterProtocol.SessionKey.options.rawValue: .strings(session.options.names),
                    ArbiterProtocol.SessionKey.mode.rawValue: .string(session.mode.rawValue),
                    ArbiterProtocol.SessionKey.active.rawValue: .boolean(session.isActive),
                    ArbiterProtocol.SessionKey.producingSound.rawValue: .boolean(session.isProducingSound),
                    ArbiterProtocol.SessionKey.interrupted.rawValue: .boolean(session.isInterrupted),
                    ArbiterProtocol.SessionKey.ducked.rawValue: .boolean(session.isDucked),
                    ArbiterProtocol.SessionKey.lastSound.rawValue: .uint64(session.lastSoundTick ?? 0),
                    ArbiterProtocol.SessionKey.eligible.rawValue: .boolean(session.isEligibleRemoteTarget),
                    ArbiterProtocol.SessionKey.target.rawValue: .boolean(policy.target == .session(session.id)),
                    ArbiterProtocol.SessionKey.outputKind.rawValue: .string(outputs[session.id]?.kind.rawValue ?? ""),
                    ArbiterProtocol.SessionKey.outputName.rawValue: .string(outputs[session.id]?.name ?? ""),
                ])
            }
    }
}
