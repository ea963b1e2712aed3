/// A named, typed argument of a method or signal.
public struct DBusArgument: Sendable, Hashable {
    public var name: String
    public var type: DBusType
    public init(_ name: String, _ type: DBusType) {
        self.name = name
        self.type = type
    }
}

/// What a method handler receives.
public struct DBusMethodCall: Sendable {
    /// The arguments, already checked against the declared input signature.
    public let arguments: [DBusValue]
    /// The caller's unique bus name.
    public let sender: String?
    public let message: DBusMessage
}

/// A method of an exported interface. The handler runs on the bus thread and returns
/// the output arguments, or throws: a ``DBusError`` becomes that error reply, any other
/// error a `Failed` reply carrying its description.
public struct DBusMethod: Sendable {
    public var name: String
    public var inputs: [DBusArgument]
    public var outputs: [DBusArgument]
    public var handler: @Sendable (DBusMethodCall) throws -> [DBusValue]

    public init(
        _ name: String, inputs: [DBusArgument] = [], outputs: [DBusArgument] = [],
        handler: @escaping @Sendable (DBusMethodCall) throws -> [DBusValue]
    ) {
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.handler = handler
    }

    var inputSignature: String { inputs.map(\.type.signature).joined() }
}

/// A property of an exported interface.
public struct DBusProperty: Sendable {
    public enum Access: String, Sendable {
        case read, write, readwrite
    }

    /// The `org.freedesktop.DBus.Property.EmitsChangedSignal` annotation.
    public enum ChangeSignal: String, Sendable {
        /// PropertiesChanged carries the new value (the default).
        case `true`
        /// PropertiesChanged names the property without its value.
        case invalidates
        /// The value never changes for the object's lifetime.
        case const
        /// Changes are not signalled (for example a position that moves continuously).
        case `false`
    }

    public var name: String
    public var type: DBusType
    public var access: Access
    public var changeSignal: ChangeSignal
    public var get: (@Sendable () -> DBusValue)?
    /// Receives a value already checked to have ``type``; throws as method handlers do.
    public var set: (@Sendable (DBusValue, DBusMethodCall) throws -> Void)?

    public init(
        _ name: String, _ type: DBusType, changeSignal: ChangeSignal = .true,
        get: @escaping @Sendable () -> DBusValue,
        set: (@Sendable (DBusValue, DBusMethodCall) throws -> Void)? = nil
    ) {
        self.name = name
        self.type = type
        self.access = set == nil ? .read : .readwrite
        self.changeSignal = changeSignal
        self.get = get
        self.set = set
    }
}

/// A signal an interface declares; ``DBusExportedObject/emit(_:interface:_:)`` checks
/// emitted arguments against it.
public struct DBusSignalDeclaration: Sendable {
    public var name: String
    public var arguments: [DBusArgument]
    public init(_ name: String, arguments: [DBusArgument] = []) {
        self.name = name
        self.arguments = arguments
    }
}

/// An interface to export: its methods, properties and signals, from which both the
/// dispatch and the introspection data are derived.
public struct DBusInterface: Sendable {
    public var name: String
    public var methods: [DBusMethod]
    public var properties: [DBusProperty]
    public var signals: [DBusSignalDeclaration]

    public init(
        _ name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [],
        signals: [DBusSignalDeclaration] = []
    ) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }

    func method(_ name: String) -> DBusMethod? { methods.first { $0.name == name } }
    func property(_ name: String) -> DBusProperty? { properties.first { $0.name == name } }
}

/// Standard interface names.
public enum StandardInterface {
    public static let properties = "org.freedesktop.DBus.Properties"
    public static let introspectable = "org.freedesktop.DBus.Introspectable"
    public static let peer = "org.freedesktop.DBus.Peer"
    public static let bus = "org.freedesktop.DBus"
}

/// A handle on an object exported with ``DBusConnection/export(_:at:)``: emits its
/// signals and property changes; ``unexport()`` removes it.
public struct DBusExportedObject: Sendable {
    public let path: ObjectPath
    let connection: DBusConnection
    let interfaces: [DBusInterface]

    /// Emits a declared signal, to everyone or (with `destination`) to one connection.
    ///
    /// - Throws: ``DBusError`` `InvalidArgs` when the interface does not declare the
    ///   signal or the arguments do not match its declared types.
    public func emit(_ signal: String, interface: String, _ arguments: [DBusValue] = [], to destination: String? = nil) throws(DBusError) {
        guard let declared = interfaces.first(where: { $0.name == interface })?.signals.first(where: { $0.name == signal }) else {
            throw .invalidArgs("\(interface) does not declare a signal \(signal)")
        }
        let expected = declared.arguments.map(\.type)
        guard arguments.map(\.type) == expected else {
            throw .invalidArgs("signal \(interface).\(signal) takes (\(expected.map(\.signature).joined())), not (\(arguments.map(\.type.signature).joined()))")
        }
        try connection.send(DBusMessage.signal(path: path, interface: interface, name: signal, arguments: arguments,
                                               destination: destination))
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged`: `changed` with values,
    /// `invalidated` by name only.
    public func emitPropertiesChanged(
        interface: String, changed: [String: DBusValue], invalidated: [String] = []
    ) throws(DBusError) {
        let message = try DBusMessage.signal(
            path: path, interface: StandardInterface.properties, name: "PropertiesChanged",
            arguments: [.string(interface), .vardict(changed), .strings(invalidated)])
        try connection.send(message)
    }

    /// Removes the object from the bus; later calls to it get `UnknownObject`.
    public func unexport() {
        connection.unexport(path)
    }
}
