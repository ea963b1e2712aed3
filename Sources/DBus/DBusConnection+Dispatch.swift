/// Method-call dispatch for exported objects: the object's own interfaces, then
/// `Properties` and `Introspectable`. (libdbus itself answers `org.freedesktop.DBus.Peer`.)
extension DBusConnection {
    /// Builds the reply (or error reply) for a method call; runs on the bus thread.
    func dispatch(_ message: DBusMessage) -> DBusMessage? {
        if let forwarder = registry.withLock({ $0.forwarders[ObjectPath(unchecked: message.path ?? "/")] }) {
            forwarder(message)
            return nil  // the forwarder replies (DBusConnection+Forwarding)
        }
        do {
            return try message.makeReply(try invoke(message))
        } catch where error.name == DBusMethodCall.replyLaterName {
            return nil  // the handler replies itself (DBusMethodCall+ReplyLater)
        } catch {
            return message.makeErrorReply(error)
        }
    }

    private func invoke(_ message: DBusMessage) throws(DBusError) -> [DBusValue] {
        let member = message.member ?? ""
        let interfaceName = message.interface
        let pathText = message.path ?? "/"
        let path = ObjectPath(unchecked: pathText)
        let (interfaces, children) = registry.withLock { state in
            (state.objects[path], DBusConnection.childNodes(of: path, in: Array(state.objects.keys) + Array(state.forwarders.keys)))
        }
        let call = DBusMethodCall(arguments: try message.arguments(), sender: message.sender, message: message)

        if (interfaceName == StandardInterface.introspectable || interfaceName == nil), member == "Introspect",
           interfaces != nil || !children.isEmpty {
            try expect(call, "", "\(StandardInterface.introspectable).Introspect")
            return [.string(Introspection.xml(interfaces: interfaces ?? [], children: children))]
        }
        guard let interfaces else {
            throw DBusError(DBusError.Name.unknownObject, "no object is exported at \(pathText)")
        }
        if interfaceName == StandardInterface.properties {
            return try properties(member, call, interfaces)
        }
        let candidates = interfaceName.map { name in interfaces.filter { $0.name == name } } ?? interfaces
        if let interfaceName, candidates.isEmpty {
            throw DBusError(DBusError.Name.unknownInterface, "the object at \(pathText) has no interface \(interfaceName)")
        }
        guard let method = candidates.lazy.compactMap({ $0.method(member) }).first else {
            throw DBusError(DBusError.Name.unknownMethod,
                            "no method \(member) in \(interfaceName ?? "any interface") at \(pathText)")
        }
        try expect(call, method.inputSignature, "\(interfaceName ?? "").\(member)")
        let outputs = try DBusError.from { try method.handler(call) }
        let produced = DBusSignature(outputs.map { $0.type })
        let declared = DBusSignature(method.outputs.map { $0.type })
        guard produced == declared else {
            throw .failed("\(member) produced (\(produced)) instead of its declared (\(declared))")
        }
        return outputs
    }

    private func expect(_ call: DBusMethodCall, _ signature: String, _ what: String) throws(DBusError) {
        let actual = call.message.signature
        guard actual == signature else {
            throw .invalidArgs("\(what) takes arguments of signature “\(signature)”, not “\(actual)”")
        }
    }

    private func properties(_ member: String, _ call: DBusMethodCall, _ interfaces: [DBusInterface]) throws(DBusError) -> [DBusValue] {
        func lookup(_ interfaceName: String) throws(DBusError) -> DBusInterface {
            guard let interface = interfaces.first(where: { $0.name == interfaceName }) else {
                throw DBusError(DBusError.Name.unknownInterface, "the object has no interface \(interfaceName)")
            }
            return interface
        }
        func lookup(_ property: String, in interface: DBusInterface) throws(DBusError) -> DBusProperty {
            guard let found = interface.property(property) else {
                throw DBusError(DBusError.Name.unknownProperty, "\(interface.name) has no property \(property)")
            }
            return found
        }
        let args = call.arguments
        switch member {
        case "Get":
            try expect(call, "ss", "\(StandardInterface.properties).Get")
            let interface = try lookup(args[0].string ?? "")
            let property = try lookup(args[1].string ?? "", in: interface)
            guard let get = property.get, property.access != .write else {
                throw .accessDenied("\(interface.name).\(property.name) is write-only")
            }
            return [.variant(try checked(get(), property, interface))]
        case "GetAll":
            try expect(call, "s", "\(StandardInterface.properties).GetAll")
            let interface = try lookup(args[0].string ?? "")
            var values: [String: DBusValue] = [:]
            for property in interface.properties where property.access != .write {
                if let get = property.get { values[property.name] = try checked(get(), property, interface) }
            }
            return [.vardict(values)]
        case "Set":
            try expect(call, "ssv", "\(StandardInterface.properties).Set")
            let interface = try lookup(args[0].string ?? "")
            let property = try lookup(args[1].string ?? "", in: interface)
            guard let set = property.set, property.access != .read else {
                throw DBusError(DBusError.Name.propertyReadOnly, "\(interface.name).\(property.name) is read-only")
            }
            // Exactly one variant level, as the signature `ssv` says: the value inside must
            // have the declared type itself, not be another variant around it.
            guard case .variant(let value) = args[2], value.type == property.type else {
                let given = args[2].variantContentType.map(\.signature) ?? args[2].type.signature
                throw .invalidArgs("\(interface.name).\(property.name) has type “\(property.type.signature)”, not “\(given)”")
            }
            try DBusError.from { try set(value, call) }
            return []
        default:
            throw DBusError(DBusError.Name.unknownMethod, "\(StandardInterface.properties) has no method \(member)")
        }
    }

    private func checked(_ value: DBusValue, _ property: DBusProperty, _ interface: DBusInterface) throws(DBusError) -> DBusValue {
        guard value.type == property.type else {
            throw .failed("\(interface.name).\(property.name) produced a \(value.type) instead of its declared \(property.type)")
        }
        return value
    }

    /// The names of the next path elements below `path` that lead to exported objects.
    static func childNodes(of path: ObjectPath, in paths: some Sequence<ObjectPath>) -> [String] {
        let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
        var names = Set<String>()
        for candidate in paths where candidate.isDescendant(of: path) {
            let rest = candidate.rawValue.dropFirst(prefix.count)
            names.insert(String(rest.prefix { $0 != "/" }))
        }
        return names.sorted()
    }
}

extension DBusError {
    /// Runs a handler, turning any error it throws into a ``DBusError``.
    static func from<T>(_ body: () throws -> T) throws(DBusError) -> T {
        do {
            return try body()
        } catch let error as DBusError {
            throw error
        } catch {
            throw .failed(String(describing: error))
        }
    }

    /// `org.freedesktop.DBus.Error.AccessDenied`.
    public static func accessDenied(_ message: String) -> DBusError {
        DBusError(Name.accessDenied, message)
    }
}

extension DBusValue {
    /// The type of the value one variant level in, if this is a variant.
    fileprivate var variantContentType: DBusType? {
        if case .variant(let inner) = self { return inner.type }
        return nil
    }
}
