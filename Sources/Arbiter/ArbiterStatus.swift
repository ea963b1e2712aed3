public import DBus

/// The arbiter's read-only properties, typed (``ArbiterProtocol/Property``): the arbiter
/// declares and announces them through ``properties(sessions:others:target:screenLocked:desktopKeys:)``
/// and ``changes(target:screenLocked:desktopKeys:)``; `earshot status` and `earshot remote`
/// read them with ``read(on:)`` and ``readTarget(on:)``.
public struct ArbiterStatus: Sendable, Hashable {
    /// Every session, the most recent sounder first.
    public var sessions: [ArbiterSessionSummary] = []
    /// Other apps' players and processes sounding without one, the most recent sounder first.
    public var others: [ArbiterOtherSummary] = []
    /// The unique name of the remote-control target, "" when none.
    public var target = ""
    /// Whether the screen is locked.
    public var screenLocked = false
    /// Where the desktop's media keys go, "" when the arbiter knows no key daemon.
    public var desktopKeys = ""

    private typealias Property = ArbiterProtocol.Property

    /// Reads the properties as `GetAll` returns them; a property that is missing or of
    /// another type keeps its default.
    public init(decoding properties: [String: DBusValue]) {
        sessions = properties[Property.sessions.rawValue]?.elements?.compactMap(ArbiterSessionSummary.init(decoding:)) ?? []
        others = properties[Property.others.rawValue]?.elements?.compactMap(ArbiterOtherSummary.init(decoding:)) ?? []
        target = properties[Property.target.rawValue]?.string ?? ""
        screenLocked = properties[Property.screenLocked.rawValue]?.bool ?? false
        desktopKeys = properties[Property.desktopKeys.rawValue]?.string ?? ""
    }

    /// Reads every property of the arbiter on `connection`.
    ///
    /// - Throws: ``DBusError`` when the arbiter cannot be reached.
    public static func read(on connection: DBusConnection) async throws(DBusError) -> ArbiterStatus {
        let reply = try await connection.call(destination: ArbiterName.bus, path: ArbiterName.path, interface: StandardInterface.properties,
                                              method: "GetAll", [.string(ArbiterName.interface)])
        return ArbiterStatus(decoding: reply.first?.stringKeyedDictionary ?? [:])
    }

    /// Reads only the remote-control target: its unique name, "" when none.
    ///
    /// - Throws: ``DBusError`` when the arbiter cannot be reached.
    public static func readTarget(on connection: DBusConnection) async throws(DBusError) -> String {
        try await connection.call(destination: ArbiterName.bus, path: ArbiterName.path, interface: StandardInterface.properties,
                                   method: "Get", [.string(ArbiterName.interface), .string(Property.target.rawValue)]).first?.string ?? ""
    }

    /// The properties `Sessions` and `Others` change with: announced by invalidation.
    public static let invalidatedOnChange = [Property.sessions.rawValue, Property.others.rawValue]

    /// The `changed` dictionary of a `PropertiesChanged` that states the values given.
    public static func changes(target: String? = nil, screenLocked: Bool? = nil, desktopKeys: String? = nil) -> [String: DBusValue] {
        var changed: [String: DBusValue] = [:]
        if let target { changed[Property.target.rawValue] = .string(target) }
        if let screenLocked { changed[Property.screenLocked.rawValue] = .boolean(screenLocked) }
        if let desktopKeys { changed[Property.desktopKeys.rawValue] = .string(desktopKeys) }
        return changed
    }

    /// The interface's property declarations, each reading its value from its closure.
    public static func properties(
        sessions: @escaping @Sendable () -> [ArbiterSessionSummary], others: @escaping @Sendable () -> [ArbiterOtherSummary],
        target: @escaping @Sendable () -> String, screenLocked: @escaping @Sendable () -> Bool,
        desktopKeys: @escaping @Sendable () -> String
    ) -> [DBusProperty] {
        let rows = DBusType.dictionary(key: .string, value: .variant)
        return [
            DBusProperty(Property.sessions.rawValue, .array(rows), changeSignal: .invalidates) { .array(rows, sessions().map(\.encoded)) },
            DBusProperty(Property.others.rawValue, .array(rows), changeSignal: .invalidates) { .array(rows, others().map(\.encoded)) },
            DBusProperty(Property.target.rawValue, .string) { .string(target()) },
            DBusProperty(Property.screenLocked.rawValue, .boolean) { .boolean(screenLocked()) },
            DBusProperty(Property.desktopKeys.rawValue, .string) { .string(desktopKeys()) },
        ]
    }
}
