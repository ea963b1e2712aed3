internal import CDBus

/// One D-Bus message: a method call, a reply, an error or a signal.
///
/// Messages are immutable once built and may cross threads; libdbus reference-counts
/// them atomically.
public final class DBusMessage: @unchecked Sendable {
    let raw: OpaquePointer

    /// Takes over one reference to `raw`.
    init(taking raw: OpaquePointer) {
        self.raw = raw
    }

    deinit { dbus_message_unref(raw) }

    public enum Kind: Sendable, Hashable {
        case methodCall, methodReturn, error, signal, other
    }

    public var kind: Kind {
        switch dbus_message_get_type(raw) {
        case DBUS_MESSAGE_TYPE_METHOD_CALL: .methodCall
        case DBUS_MESSAGE_TYPE_METHOD_RETURN: .methodReturn
        case DBUS_MESSAGE_TYPE_ERROR: .error
        case DBUS_MESSAGE_TYPE_SIGNAL: .signal
        default: .other
        }
    }

    public var path: String? { dbus_message_get_path(raw).map { String(cString: $0) } }
    public var interface: String? { dbus_message_get_interface(raw).map { String(cString: $0) } }
    public var member: String? { dbus_message_get_member(raw).map { String(cString: $0) } }
    public var sender: String? { dbus_message_get_sender(raw).map { String(cString: $0) } }
    public var destination: String? { dbus_message_get_destination(raw).map { String(cString: $0) } }
    public var errorName: String? { dbus_message_get_error_name(raw).map { String(cString: $0) } }
    /// The signature of the body, `""` when it is empty.
    public var signature: String { dbus_message_get_signature(raw).map { String(cString: $0) } ?? "" }
    public var serial: UInt32 { dbus_message_get_serial(raw) }
    public var replySerial: UInt32 { dbus_message_get_reply_serial(raw) }
    public var noReplyExpected: Bool { dbus_message_get_no_reply(raw) != 0 }

    /// The body, decoded.
    ///
    /// - Throws: ``DBusError`` `NotSupported` for unix file descriptors.
    public func arguments() throws(DBusError) -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iter) != 0 else { return [] }
        return try MessageDecoder.readAll(&iter)
    }

    /// The error this message carries, if it is an error reply. Its text comes from another
    /// process and goes on into errors that are logged and printed: at most
    /// ``maximumErrorText`` Unicode scalars of it are kept, and a cut says how much was left out.
    public var error: DBusError? {
        guard kind == .error else { return nil }
        let text = (try? arguments())?.first?.string ?? ""
        return DBusError(errorName ?? DBusError.Name.failed, DBusMessage.bounded(text))
    }

    /// How many Unicode scalars of an error reply's text ``error`` keeps.
    public static let maximumErrorText = 1024

    static func bounded(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard scalars.count > maximumErrorText else { return text }
        let kept = String(String.UnicodeScalarView(scalars.prefix(maximumErrorText)))
        return kept + "… (cut: \(text.utf8.count) bytes in all)"
    }
}

// MARK: - Building messages

extension DBusMessage {
    /// A method call.
    ///
    /// - Throws: ``DBusError`` `InvalidArgs` when a name, the path or an argument
    ///   is invalid; nothing is built.
    public static func methodCall(
        destination: String?, path: ObjectPath, interface: String?, method: String,
        arguments: [DBusValue] = []
    ) throws(DBusError) -> DBusMessage {
        if let destination { try BusName.validate(destination) }
        if let interface { try InterfaceName.validate(interface) }
        try MemberName.validate(method)
        let raw = try allocate(
            destination.withOptionalCString { dest in
                path.rawValue.withCString { p in
                    interface.withOptionalCString { iface in
                        method.withCString { m in dbus_message_new_method_call(dest, p, iface, m) }
                    }
                }
            })
        let message = DBusMessage(taking: raw)
        try message.append(arguments)
        return message
    }

    /// A signal; with a `destination` it is unicast: the bus delivers it to that
    /// connection only.
    public static func signal(
        path: ObjectPath, interface: String, name: String, arguments: [DBusValue] = [], destination: String? = nil
    ) throws(DBusError) -> DBusMessage {
        try InterfaceName.validate(interface)
        try MemberName.validate(name)
        if let destination { try BusName.validate(destination) }
        let raw = try allocate(
            path.rawValue.withCString { p in
                interface.withCString { i in name.withCString { n in dbus_message_new_signal(p, i, n) } }
            })
        let message = DBusMessage(taking: raw)
        if let destination {
            guard destination.withCString({ dbus_message_set_destination(raw, $0) }) != 0 else {
                throw DBusError(DBusError.Name.noMemory, "libdbus could not set the destination")
            }
        }
        try message.append(arguments)
        return message
    }

    /// A method return answering `self`.
    public func makeReply(_ arguments: [DBusValue] = []) throws(DBusError) -> DBusMessage {
        let reply = DBusMessage(taking: try DBusMessage.allocate(dbus_message_new_method_return(raw)))
        try reply.append(arguments)
        return reply
    }

    /// An error reply answering `self`. An invalid error name becomes `Failed`.
    public func makeErrorReply(_ error: DBusError) -> DBusMessage? {
        let name = (try? ErrorName.validate(error.name)) != nil ? error.name : DBusError.Name.failed
        // A message with NUL would be refused; keep the part before it.
        let text = String(decoding: error.message.utf8.prefix { $0 != 0 }, as: UTF8.self)
        guard let raw = name.withCString({ n in text.withCString { t in dbus_message_new_error(raw, n, t) } }) else {
            return nil
        }
        return DBusMessage(taking: raw)
    }

    /// Marks a method call as not expecting a reply.
    public func setNoReply() { dbus_message_set_no_reply(raw, 1) }

    /// Whether the bus may start (D-Bus activate) the destination to deliver this call
    /// (`NO_AUTO_START` when false). Asking an optional service about its state should
    /// not start it.
    public var autoStart: Bool {
        get { dbus_message_get_auto_start(raw) != 0 }
        set { dbus_message_set_auto_start(raw, newValue ? 1 : 0) }
    }

    private static func allocate(_ raw: OpaquePointer?) throws(DBusError) -> OpaquePointer {
        guard let raw else { throw DBusError(DBusError.Name.noMemory, "libdbus could not allocate a message") }
        return raw
    }

    /// Validates then appends; on failure the message body is left unusable, so callers
    /// build a fresh message (every builder above does).
    func append(_ values: [DBusValue]) throws(DBusError) {
        for value in values { try value.validate() }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(raw, &iter)
        for value in values { try MessageEncoder.append(value, to: &iter) }
    }
}

extension Optional where Wrapped == String {
    func withOptionalCString<R>(_ body: (UnsafePointer<CChar>?) throws -> R) rethrows -> R {
        switch self {
        case .some(let s): try s.withCString { try body($0) }
        case .none: try body(nil)
        }
    }
}
