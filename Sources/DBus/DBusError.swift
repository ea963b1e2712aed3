/// An error in D-Bus terms: a well-formed error name and a human-readable message.
///
/// Method and property handlers throw `DBusError` to make the bus reply with that
/// error; ``DBusConnection/call(_:timeout:)`` throws it when the peer replies with one.
/// Local failures (an invalid value that libdbus would abort on, a closed connection)
/// are reported with the standard names below, so callers handle one error type.
public struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error name, for example `org.freedesktop.DBus.Error.InvalidArgs`.
    public var name: String
    /// What went wrong, naming the thing and the reason.
    public var message: String

    public init(_ name: String, _ message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name): \(message)" }
}

extension DBusError {
    /// `org.freedesktop.DBus.Error.Failed`: a generic failure.
    public static func failed(_ message: String) -> DBusError {
        DBusError(Name.failed, message)
    }
    /// `org.freedesktop.DBus.Error.InvalidArgs`: an argument has the wrong type or value.
    public static func invalidArgs(_ message: String) -> DBusError {
        DBusError(Name.invalidArgs, message)
    }
    /// `org.freedesktop.DBus.Error.NotSupported`.
    public static func notSupported(_ message: String) -> DBusError {
        DBusError(Name.notSupported, message)
    }
    /// `org.freedesktop.DBus.Error.Disconnected`: the connection is closed.
    public static func disconnected(_ message: String = "the bus connection is closed") -> DBusError {
        DBusError(Name.disconnected, message)
    }

    /// The standard error names of the D-Bus specification that this layer uses.
    public enum Name {
        public static let failed = "org.freedesktop.DBus.Error.Failed"
        public static let noMemory = "org.freedesktop.DBus.Error.NoMemory"
        public static let noReply = "org.freedesktop.DBus.Error.NoReply"
        public static let timeout = "org.freedesktop.DBus.Error.Timeout"
        public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
        public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
        public static let invalidSignature = "org.freedesktop.DBus.Error.InvalidSignature"
        public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
        public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
        public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
        public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
        public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
        public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
        public static let notSupported = "org.freedesktop.DBus.Error.NotSupported"
        public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
        public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    }
}
