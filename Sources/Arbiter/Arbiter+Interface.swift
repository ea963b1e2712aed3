import DBus
import SessionPolicy

/// `org.earshot.AudioSession` (see `dbus/org.earshot.AudioSession.xml`): every method acts
/// on the caller's own session; arguments are validated before anything changes.
extension Arbiter {
    func interfaceDeclaration() -> DBusInterface {
        DBusInterface(
            ArbiterName.interface,
            methods: [
                DBusMethod("Register", inputs: [.init("app_name", .string), .init("state", .dictionary(key: .string, value: .variant))],
                           outputs: [.init("situation", .dictionary(key: .string, value: .variant))]) { [weak self] call in
                    guard let self else { return [.vardict([:])] }
                    return [try self.register(call)]
                },
                method("Unregister") { arbiter, id, _ in try arbiter.apply(.vanished(id), for: id) },
                method("SetCategory", [.init("category", .string), .init("options", .array(.string)), .init("mode", .string)]) { arbiter, id, args in
                    let category = try WireFormat.category(args[0].string ?? "")
                    let options = try WireFormat.options(args[1].stringArray ?? [])
                    let mode = try WireFormat.mode(args[2].string ?? "")
                    try arbiter.apply(.setCategory(id, category, options: options, mode: mode), for: id)
                },
                method("SetActive", [.init("active", .boolean), .init("notify_others_on_deactivation", .boolean)]) { arbiter, id, args in
                    let event: SessionPolicy.Event = args[0].bool == true ? .activate(id) : .deactivate(id, notifyOthers: args[1].bool == true)
                    try arbiter.apply(event, for: id)
                },
                method("ReportSound", [.init("producing", .boolean)]) { arbiter, id, args in
                    let tick = arbiter.tick
                    try arbiter.apply(args[0].bool == true ? .soundStarted(id, tick: tick) : .soundStopped(id, tick: tick), for: id)
                },
                method("SetRemoteCommandsEnabled", [.init("enabled", .boolean)]) { arbiter, id, args in
                    try arbiter.apply(.remoteCommandsChanged(id, anyEnabled: args[0].bool == true), for: id)
                },
            ],
            properties: [
                DBusProperty("Sessions", .array(.dictionary(key: .string, value: .variant)), changeSignal: .invalidates) { [weak self] in
                    .array(.dictionary(key: .string, value: .variant), self?.sessionsSummary() ?? [])
                },
                DBusProperty("Target", .string) { [weak self] in .string(self?.policy.remoteTarget?.rawValue ?? "") },
                DBusProperty("ScreenLocked", .boolean) { [weak self] in .boolean(self?.policy.screenLocked ?? false) },
            ],
            signals: [
                DBusSignalDeclaration("InterruptionBegan", arguments: [.init("reason", .string), .init("by", .string)]),
                DBusSignalDeclaration("InterruptionEnded", arguments: [.init("should_resume", .boolean)]),
                DBusSignalDeclaration("DuckGainChanged", arguments: [.init("gain", .double)]),
                DBusSignalDeclaration("OtherAudioPlayingChanged", arguments: [.init("playing", .boolean)]),
                DBusSignalDeclaration("SecondaryAudioShouldBeSilencedChanged", arguments: [.init("silenced", .boolean)]),
            ]
        )
    }

    /// A method acting on the caller's session.
    private func method(
        _ name: String, _ inputs: [DBusArgument] = [],
        _ body: @escaping @Sendable (Arbiter, SessionID, [DBusValue]) throws -> Void
    ) -> DBusMethod {
        DBusMethod(name, inputs: inputs) { [weak self] call in
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
                throw DBusError(name, "\(id): \(reason.message)")
            }
        }
    }

    /// `Register(app_name, state)`: validates everything first, then registers the caller
    /// and replays its state (after the arbiter changed hosts, processes register again
    /// with what they had).
    func register(_ call: DBusMethodCall) throws(DBusError) -> DBusValue {
        let id = try Arbiter.caller(call)
        let app = call.arguments[0].string ?? ""
        guard !app.isEmpty, app.utf8.count <= 255 else { throw .invalidArgs("app_name must be 1 to 255 bytes, not “\(app)”") }
        let state = call.arguments[1].stringKeyedDictionary ?? [:]
        let known: Set<String> = ["category", "options", "mode", "active", "producingSound", "remoteCommands",
                                  "interruptedBy", "silencedBy", "wasPlaying"]
        if let unknown = state.keys.first(where: { !known.contains($0) }) {
            throw .invalidArgs("unknown state key “\(unknown)” (known: \(known.sorted().joined(separator: ", ")))")
        }
        func bool(_ key: String) throws(DBusError) -> Bool {
            guard let value = state[key] else { return false }
            guard let flag = value.bool else { throw .invalidArgs("state “\(key)” must be a boolean, not \(value)") }
            return flag
        }
        let category = try state["category"].map { value throws(DBusError) in try WireFormat.category(value.string ?? "\(value)") }
        let options = try WireFormat.options(state["options"]?.stringArray ?? [])
        let mode = try state["mode"].map { value throws(DBusError) in try WireFormat.mode(value.string ?? "\(value)") } ?? .default
        let active = try bool("active"), producing = try bool("producingSound"), remote = try bool("remoteCommands")
        let wasPlaying = try bool("wasPlaying")
        let interruptedBy = try state["interruptedBy"].map { value throws(DBusError) -> SessionID in
            guard let name = value.string, name.hasPrefix(":"), (try? BusName.validate(name)) != nil else {
                throw .invalidArgs("state “interruptedBy” must be a unique bus name, not \(value)")
            }
            return SessionID(name)
        }
        let silencedBy = try state["silencedBy"].map { value throws(DBusError) -> InterruptionReason in
            switch value.string {
            case "screenLocked": .screenLocked
            case "silentMode": .silentMode
            default: throw .invalidArgs("state “silencedBy” must be screenLocked or silentMode, not \(value)")
            }
        }

        let count = policy.sessions.count
        guard count < configuration.maximumSessions else {
            throw DBusError(ArbiterName.Error.limitsExceeded, "the arbiter already has \(count) sessions")
        }
        try apply(.register(id, appName: app, tick: tick), for: id)
        do {
            if let category { try apply(.setCategory(id, category, options: options, mode: mode), for: id) }
            if remote { try apply(.remoteCommandsChanged(id, anyEnabled: true), for: id) }
            if active { try apply(.activate(id), for: id) }
            if producing { try apply(.soundStarted(id, tick: tick), for: id) }
        } catch {
            handle(.vanished(id))  // all or nothing
            throw error
        }
        if let interruptedBy { restore(id, interruptedBy: interruptedBy, wasPlaying: wasPlaying) }
        if let silencedBy { restore(id, silencedBy: silencedBy, wasPlaying: wasPlaying) }
        restorePending(interruptedBy: id)
        return situation(of: id)
    }

    /// What a session needs to know right after registering.
    func situation(of id: SessionID) -> DBusValue {
        let policy = self.policy
        let session = policy[id]
        return .vardict([
            "otherAudioPlaying": .boolean(policy.otherAudioPlaying(for: id)),
            "secondaryAudioShouldBeSilenced": .boolean(policy.secondaryAudioShouldBeSilencedHint(for: id)),
            "interrupted": .boolean(session?.isInterrupted ?? false),
            "duckGain": .double(session?.isDucked == true ? Double(policy.configuration.duckGain) : 1),
            "target": .string(policy.remoteTarget?.rawValue ?? ""),
        ])
    }

    /// One dictionary per session, for `earshot status`; the most recent sounder first.
    func sessionsSummary() -> [DBusValue] {
        let policy = self.policy
        return policy.sessions.values
            .sorted { ($0.lastSoundTick ?? 0, $1.id) > ($1.lastSoundTick ?? 0, $0.id) }
            .map { session in
                .vardict([
                    "id": .string(session.id.rawValue),
                    "app": .string(session.appName),
                    "category": .string(session.category.rawValue),
                    "options": .strings(WireFormat.names(of: session.options)),
                    "mode": .string(session.mode.rawValue),
                    "active": .boolean(session.isActive),
                    "producingSound": .boolean(session.isProducingSound),
                    "interrupted": .boolean(session.isInterrupted),
                    "ducked": .boolean(session.isDucked),
                    "lastSound": .uint64(session.lastSoundTick ?? 0),
                    "eligible": .boolean(session.isEligibleRemoteTarget),
                    "target": .boolean(policy.remoteTarget == session.id),
                ])
            }
    }
}
