public import DBus
public import SessionPolicy

/// A call of one of `org.earshot.AudioSession`'s methods, typed: the client encodes it
/// (``method``, ``arguments``, ``message()``) and the arbiter decodes it
/// (``init(_:_:)``), so both sides speak the wire format written here and only here.
/// Every method acts on the caller's own session.
public enum ArbiterCall: Sendable, Hashable {
    /// `Register(app_name s, state a{sv}) -> (situation a{sv})`: registers the caller with
    /// its whole state and returns its ``ArbiterSituation``.
    case register(appName: String, state: ArbiterRegistration)
    /// `Unregister()`: the caller's session goes.
    case unregister
    /// `SetCategory(category s, options as, mode s)`.
    case setCategory(Category, options: CategoryOptions, mode: Mode)
    /// `SetActive(active b, notify_others_on_deactivation b)`.
    case setActive(Bool, notifyOthersOnDeactivation: Bool)
    /// `ReportSound(producing b)`: the process started or stopped producing sound.
    case reportSound(producing: Bool)
    /// `SetRemoteCommandsEnabled(enabled b)`: whether any remote command is enabled.
    case setRemoteCommandsEnabled(Bool)
    /// `SetOutput(kind s, name s)`: what the process's players play through.
    case setOutput(ArbiterRegistration.Output)

    /// At most this many bytes in an app name.
    public static let maximumAppNameBytes = 255

    /// The method called.
    public var method: ArbiterProtocol.Method {
        switch self {
        case .register: .register
        case .unregister: .unregister
        case .setCategory: .setCategory
        case .setActive: .setActive
        case .reportSound: .reportSound
        case .setRemoteCommandsEnabled: .setRemoteCommandsEnabled
        case .setOutput: .setOutput
        }
    }

    /// The call's input arguments, in the order ``inputs(of:)`` declares them.
    public var arguments: [DBusValue] {
        switch self {
        case let .register(appName, state): [.string(appName), state.encoded]
        case .unregister: []
        case let .setCategory(category, options, mode): [.string(category.rawValue), .strings(options.names), .string(mode.rawValue)]
        case let .setActive(active, notify): [.boolean(active), .boolean(notify)]
        case let .reportSound(producing): [.boolean(producing)]
        case let .setRemoteCommandsEnabled(enabled): [.boolean(enabled)]
        case let .setOutput(output): [.string(output.kind.rawValue), .string(output.name)]
        }
    }

    /// The method call to the arbiter.
    ///
    /// - Throws: ``DBusError`` for a value the bus cannot carry (a string holding NUL).
    public func message() throws(DBusError) -> DBusMessage {
        try .methodCall(destination: ArbiterName.bus, path: ArbiterName.path, interface: ArbiterName.interface,
                        method: method.rawValue, arguments: arguments)
    }

    /// Reads a call of `method`, strictly: values the arbiter does not know (a category,
    /// an option or mode name, an app or output name out of bounds) are refused before
    /// anything changes.
    ///
    /// - Throws: `InvalidArgs` naming the argument and what is wrong with it.
    public init(_ method: ArbiterProtocol.Method, _ arguments: [DBusValue]) throws(DBusError) {
        let signature = arguments.map(\.type.signature).joined()
        let expected = Self.inputs(of: method).map(\.type.signature).joined()
        guard signature == expected else {
            throw .invalidArgs("\(method.rawValue) takes arguments of signature “\(expected)”, not “\(signature)”")
        }
        func string(_ i: Int) -> String { arguments[i].string ?? "" }
        func flag(_ i: Int) -> Bool { arguments[i].bool == true }
        switch method {
        case .register:
            let app = string(0)
            guard !app.isEmpty, app.utf8.count <= Self.maximumAppNameBytes else {
                throw .invalidArgs("app_name must be 1 to \(Self.maximumAppNameBytes) bytes, not \(WireFormat.quoted(app)) (\(app.utf8.count) bytes)")
            }
            // It is shown to users (earshot status): no terminal escapes or line breaks.
            guard !app.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw .invalidArgs("app_name must not contain control characters: \(WireFormat.quoted(app))")
            }
            self = .register(appName: app, state: try ArbiterRegistration(decoding: arguments[1]))
        case .unregister:
            self = .unregister
        case .setCategory:
            let category = try WireFormat.category(string(0))
            let names = arguments[1].stringArray ?? []
            guard names.count <= ArbiterRegistration.maximumOptions else {
                throw .invalidArgs("options has \(names.count) entries; at most \(ArbiterRegistration.maximumOptions)")
            }
            let options = try WireFormat.options(names)
            self = .setCategory(category, options: options, mode: try WireFormat.mode(string(2)))
        case .setActive:
            self = .setActive(flag(0), notifyOthersOnDeactivation: flag(1))
        case .reportSound:
            self = .reportSound(producing: flag(0))
        case .setRemoteCommandsEnabled:
            self = .setRemoteCommandsEnabled(flag(0))
        case .setOutput:
            self = .setOutput(try ArbiterRegistration.Output(kind: string(0), name: string(1)))
        }
    }

    /// The input arguments `method` declares (as `dbus/org.earshot.AudioSession.xml` does).
    public static func inputs(of method: ArbiterProtocol.Method) -> [DBusArgument] {
        switch method {
        case .register: [.init("app_name", .string), .init("state", .dictionary(key: .string, value: .variant))]
        case .unregister: []
        case .setCategory: [.init("category", .string), .init("options", .array(.string)), .init("mode", .string)]
        case .setActive: [.init("active", .boolean), .init("notify_others_on_deactivation", .boolean)]
        case .reportSound: [.init("producing", .boolean)]
        case .setRemoteCommandsEnabled: [.init("enabled", .boolean)]
        case .setOutput: [.init("kind", .string), .init("name", .string)]
        }
    }

    /// The output arguments `method` declares: `Register`'s situation, nothing for the others.
    public static func outputs(of method: ArbiterProtocol.Method) -> [DBusArgument] {
        method == .register ? [.init("situation", .dictionary(key: .string, value: .variant))] : []
    }

    /// The interface's methods, each decoding its call before `perform` sees it: a call
    /// of the wrong shape gets `InvalidArgs` and reaches no handler. `perform` returns
    /// the output arguments (``ArbiterSituation/encoded`` for ``register(appName:state:)``).
    public static func declarations(
        _ perform: @escaping @Sendable (ArbiterCall, DBusMethodCall) throws -> [DBusValue]
    ) -> [DBusMethod] {
        ArbiterProtocol.Method.allCases.map { method in
            DBusMethod(method.rawValue, inputs: inputs(of: method), outputs: outputs(of: method)) { call in
                try perform(try ArbiterCall(method, call.arguments), call)
            }
        }
    }
}

extension DBusConnection {
    /// Calls the arbiter and returns its output arguments.
    ///
    /// - Throws: ``DBusError``: the arbiter's refusal (`org.earshot.AudioSession.Error.*`,
    ///   `InvalidArgs`), or the bus's when the arbiter cannot be reached.
    public func call(_ call: ArbiterCall) async throws(DBusError) -> [DBusValue] {
        try await self.call(call.message()).arguments()
    }
}
