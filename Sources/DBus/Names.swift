internal import CDBus

/// Bus name validation (`org.example.App`, `:1.42`), with libdbus's own rules.
public enum BusName {
    /// - Throws: ``DBusError`` `InvalidArgs` naming the bus name.
    public static func validate(_ name: String) throws(DBusError) {
        try check(name, "bus name", dbus_validate_bus_name)
    }
}

/// Interface name validation (`org.mpris.MediaPlayer2.Player`).
public enum InterfaceName {
    public static func validate(_ name: String) throws(DBusError) {
        try check(name, "interface name", dbus_validate_interface)
    }
}

/// Member (method, signal, property) name validation.
public enum MemberName {
    public static func validate(_ name: String) throws(DBusError) {
        try check(name, "member name", dbus_validate_member)
    }
}

/// Error name validation (same rules as interface names).
public enum ErrorName {
    public static func validate(_ name: String) throws(DBusError) {
        try check(name, "error name", dbus_validate_error_name)
    }
}

private func check(
    _ name: String, _ what: String,
    _ validator: (UnsafePointer<CChar>?, UnsafeMutablePointer<CDBus.DBusError>?) -> dbus_bool_t
) throws(DBusError) {
    guard !name.utf8.contains(0) else {
        throw .invalidArgs("\(what) “\(name.debugDescription)” holds a NUL byte")
    }
    var error = CDBus.DBusError()
    dbus_error_init(&error)
    defer { dbus_error_free(&error) }
    if name.withCString({ validator($0, &error) }) == 0 {
        let reason = error.message.map { String(cString: $0) } ?? "invalid"
        throw .invalidArgs("“\(name)” is not a valid \(what): \(reason)")
    }
}
