/// Flags of `org.freedesktop.DBus.RequestName`.
public struct NameRequestFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `DBUS_NAME_FLAG_ALLOW_REPLACEMENT`: another connection may take the name.
    public static let allowReplacement = NameRequestFlags(rawValue: 0x1)
    /// `DBUS_NAME_FLAG_REPLACE_EXISTING`: take the name if its owner allows replacement.
    public static let replaceExisting = NameRequestFlags(rawValue: 0x2)
    /// `DBUS_NAME_FLAG_DO_NOT_QUEUE`: fail rather than wait in the queue.
    public static let doNotQueue = NameRequestFlags(rawValue: 0x4)
}

/// The reply of `RequestName`.
public enum NameRequestReply: UInt32, Sendable {
    /// `DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER`
    case primaryOwner = 1
    /// `DBUS_REQUEST_NAME_REPLY_IN_QUEUE`
    case inQueue = 2
    /// `DBUS_REQUEST_NAME_REPLY_EXISTS`
    case exists = 3
    /// `DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER`
    case alreadyOwner = 4
}

/// The reply of `ReleaseName`.
public enum NameReleaseReply: UInt32, Sendable {
    case released = 1, nonExistent = 2, notOwner = 3
}

extension NameRequestReply {
    /// The answer carried by a `RequestName` reply.
    ///
    /// - Throws: ``DBusError`` `Failed` when the reply carries no known answer.
    public init(_ reply: DBusMessage) throws(DBusError) {
        let arguments = try reply.arguments()
        guard case .uint32(let code)? = arguments.first, let result = NameRequestReply(rawValue: code) else {
            throw .failed("RequestName returned \(arguments)")
        }
        self = result
    }
}

extension DBusMessage {
    /// A call of `org.freedesktop.DBus.RequestName` for `name`, to send with other calls
    /// (``DBusConnection/calls(_:timeout:)``); read its reply with ``NameRequestReply/init(_:)``.
    ///
    /// - Throws: ``DBusError`` `InvalidArgs` for an invalid or unique name.
    public static func requestName(_ name: String, flags: NameRequestFlags = []) throws(DBusError) -> DBusMessage {
        try BusName.validate(name)
        guard !name.hasPrefix(":") else { throw .invalidArgs("“\(name)” is a unique name; only well-known names can be requested") }
        return try .methodCall(destination: StandardInterface.bus, path: "/org/freedesktop/DBus", interface: StandardInterface.bus,
                               method: "RequestName", arguments: [.string(name), .uint32(flags.rawValue)])
    }
}

/// A change of a name's owner, from `NameOwnerChanged`; `nil` means no owner.
public struct NameOwnerChange: Sendable, Hashable {
    public var name: String
    public var oldOwner: String?
    public var newOwner: String?
}

extension DBusConnection {
    private func busCall(_ method: String, _ arguments: [DBusValue], timeout: Duration = .seconds(25)) async throws(DBusError) -> [DBusValue] {
        try await call(destination: StandardInterface.bus, path: "/org/freedesktop/DBus",
                       interface: StandardInterface.bus, method: method, arguments, timeout: timeout)
    }

    /// Requests a well-known name.
    ///
    /// - Throws: ``DBusError`` `InvalidArgs` for an invalid or unique name, or the bus's error.
    public func requestName(_ name: String, flags: NameRequestFlags = []) async throws(DBusError) -> NameRequestReply {
        try NameRequestReply(try await call(try .requestName(name, flags: flags)))
    }

    /// Releases a well-known name (or leaves its queue).
    public func releaseName(_ name: String) async throws(DBusError) -> NameReleaseReply {
        try BusName.validate(name)
        let reply = try await busCall("ReleaseName", [.string(name)])
        guard case .uint32(let code)? = reply.first, let result = NameReleaseReply(rawValue: code) else {
            throw .failed("ReleaseName(\(name)) returned \(reply)")
        }
        return result
    }

    /// Releases a well-known name without waiting for the bus's answer (from a teardown
    /// path that cannot await). The bus keeps the connection's order: a later request for
    /// the name on this connection comes after the release.
    ///
    /// - Throws: ``DBusError`` `InvalidArgs` for an invalid name; an error if the
    ///   connection is closed.
    public func releaseNameWithoutReply(_ name: String) throws(DBusError) {
        try BusName.validate(name)
        let release = try DBusMessage.methodCall(destination: StandardInterface.bus, path: "/org/freedesktop/DBus",
                                                 interface: StandardInterface.bus, method: "ReleaseName", arguments: [.string(name)])
        release.setNoReply()
        try send(release)
    }

    /// The unique name owning `name`, or `nil` when it has no owner.
    public func nameOwner(_ name: String) async throws(DBusError) -> String? {
        try BusName.validate(name)
        do {
            return try await busCall("GetNameOwner", [.string(name)]).first?.string
        } catch where error.name == DBusError.Name.nameHasNoOwner {
            return nil
        }
    }

    /// The process id of the connection that owns `name` (`GetConnectionUnixProcessID`), or
    /// `nil` when the bus cannot say; the bus is waited for at most `timeout`.
    ///
    /// - Throws: ``DBusError`` `InvalidArgs` for an invalid name; the bus's error
    ///   (`NameHasNoOwner`) when nobody owns it; `NoReply` after `timeout`.
    public func processID(of name: String, timeout: Duration = .seconds(25)) async throws(DBusError) -> Int64? {
        try BusName.validate(name)
        return try await busCall("GetConnectionUnixProcessID", [.string(name)], timeout: timeout).first?.int64
    }

    /// The unique names waiting for `name`, owner first; the bus is waited for at most
    /// `timeout`.
    public func nameQueue(_ name: String, timeout: Duration = .seconds(25)) async throws(DBusError) -> [String] {
        try BusName.validate(name)
        do {
            return try await busCall("ListQueuedOwners", [.string(name)], timeout: timeout).first?.stringArray ?? []
        } catch where error.name == DBusError.Name.nameHasNoOwner {
            return []
        }
    }

    /// Delivers `NameOwnerChanged` for `name` (or for every name when `nil`).
    public func watchNameOwner(
        _ name: String? = nil, handler: @escaping @Sendable (NameOwnerChange) -> Void
    ) async throws(DBusError) -> SignalSubscription {
        if let name { try BusName.validate(name) }
        return try await subscribe(DBusConnection.nameOwnerRule(name), handler: DBusConnection.nameOwnerHandler(handler))
    }

    /// ``watchNameOwner(_:handler:)`` without waiting for the bus to confirm the match.
    public func watchNameOwnerNow(
        _ name: String? = nil, handler: @escaping @Sendable (NameOwnerChange) -> Void
    ) throws(DBusError) -> SignalSubscription {
        if let name { try BusName.validate(name) }
        return subscribeNow(DBusConnection.nameOwnerRule(name), handler: DBusConnection.nameOwnerHandler(handler))
    }

    private static func nameOwnerRule(_ name: String?) -> MatchRule {
        MatchRule(sender: StandardInterface.bus, interface: StandardInterface.bus,
                  member: "NameOwnerChanged", path: "/org/freedesktop/DBus", arg0: name)
    }

    private static func nameOwnerHandler(_ handler: @escaping @Sendable (NameOwnerChange) -> Void) -> @Sendable (DBusMessage) -> Void {
        { message in
            guard let args = try? message.arguments(), args.count == 3,
                  let changed = args[0].string, let old = args[1].string, let new = args[2].string else { return }
            handler(NameOwnerChange(name: changed, oldOwner: old.isEmpty ? nil : old, newOwner: new.isEmpty ? nil : new))
        }
    }

    /// Delivers `NameAcquired` (`true`) and `NameLost` (`false`) for this connection's names.
    public func watchOwnNames(handler: @escaping @Sendable (_ name: String, _ acquired: Bool) -> Void) async throws(DBusError) -> SignalSubscription {
        let rule = MatchRule(sender: StandardInterface.bus, interface: StandardInterface.bus, path: "/org/freedesktop/DBus")
        let me = uniqueName  // not `self`: the handler lives in this connection's registry
        return try await subscribe(rule, addMatch: false) { message in
            guard let member = message.member, member == "NameAcquired" || member == "NameLost",
                  message.destination == nil || message.destination == me,
                  let name = (try? message.arguments())?.first?.string else { return }
            handler(name, member == "NameAcquired")
        }
    }
}
