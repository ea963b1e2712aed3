internal import CDBus

/// Writes ``DBusValue`` trees into libdbus message iterators.
/// Values are validated before they reach here.
enum MessageEncoder {
    static func append(_ value: DBusValue, to iter: inout DBusMessageIter) throws(DBusError) {
        switch value {
        case .byte(let v): try basic(v, CDBUS_TYPE_BYTE, &iter)
        case .boolean(let v): try basic(dbus_bool_t(v ? 1 : 0), CDBUS_TYPE_BOOLEAN, &iter)
        case .int16(let v): try basic(v, CDBUS_TYPE_INT16, &iter)
        case .uint16(let v): try basic(v, CDBUS_TYPE_UINT16, &iter)
        case .int32(let v): try basic(v, CDBUS_TYPE_INT32, &iter)
        case .uint32(let v): try basic(v, CDBUS_TYPE_UINT32, &iter)
        case .int64(let v): try basic(v, CDBUS_TYPE_INT64, &iter)
        case .uint64(let v): try basic(v, CDBUS_TYPE_UINT64, &iter)
        case .double(let v): try basic(v, CDBUS_TYPE_DOUBLE, &iter)
        case .string(let v): try text(v, CDBUS_TYPE_STRING, &iter)
        case .objectPath(let v): try text(v.rawValue, CDBUS_TYPE_OBJECT_PATH, &iter)
        case .signature(let v): try text(v.rawValue, CDBUS_TYPE_SIGNATURE, &iter)
        case .variant(let inner):
            try container(CDBUS_TYPE_VARIANT, inner.type.signature, &iter) { (sub) throws(DBusError) in
                try append(inner, to: &sub)
            }
        case .array(let element, let items):
            try container(CDBUS_TYPE_ARRAY, element.signature, &iter) { (sub) throws(DBusError) in
                for item in items { try append(item, to: &sub) }
            }
        case .dictionary(let key, let valueType, let entries):
            let entrySignature = "{" + key.signature + valueType.signature + "}"
            try container(CDBUS_TYPE_ARRAY, entrySignature, &iter) { (array) throws(DBusError) in
                for entry in entries {
                    try container(CDBUS_TYPE_DICT_ENTRY, nil, &array) { (pair) throws(DBusError) in
                        try append(entry.key, to: &pair)
                        try append(entry.value, to: &pair)
                    }
                }
            }
        case .structure(let fields):
            try container(CDBUS_TYPE_STRUCT, nil, &iter) { (sub) throws(DBusError) in
                for field in fields { try append(field, to: &sub) }
            }
        }
    }

    private static func basic<T: BitwiseCopyable>(_ value: T, _ type: Int, _ iter: inout DBusMessageIter) throws(DBusError) {
        var copy = value
        guard dbus_message_iter_append_basic(&iter, Int32(type), &copy) != 0 else { throw outOfMemory }
    }

    private static func text(_ value: String, _ type: Int, _ iter: inout DBusMessageIter) throws(DBusError) {
        let ok = value.withCString { pointer -> Bool in
            var p: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iter, Int32(type), &p) != 0
        }
        guard ok else { throw outOfMemory }
    }

    /// Opens a container, fills it, and closes it; abandons it if filling fails.
    private static func container(
        _ type: Int, _ contained: String?, _ iter: inout DBusMessageIter,
        _ fill: (inout DBusMessageIter) throws(DBusError) -> Void
    ) throws(DBusError) {
        var sub = DBusMessageIter()
        let opened = contained.withOptionalCString { sig in
            dbus_message_iter_open_container(&iter, Int32(type), sig, &sub) != 0
        }
        guard opened else { throw outOfMemory }
        do {
            try fill(&sub)
        } catch {
            dbus_message_iter_abandon_container_if_open(&iter, &sub)
            throw error
        }
        guard dbus_message_iter_close_container(&iter, &sub) != 0 else { throw outOfMemory }
    }

    private static var outOfMemory: DBusError {
        DBusError(DBusError.Name.noMemory, "libdbus ran out of memory while building a message")
    }
}

/// Reads libdbus message iterators into ``DBusValue`` trees. libdbus has already
/// validated incoming messages (UTF-8, paths, signatures) on receipt.
enum MessageDecoder {
    static func readAll(_ iter: inout DBusMessageIter) throws(DBusError) -> [DBusValue] {
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iter) != Int32(CDBUS_TYPE_INVALID) {
            values.append(try read(&iter))
            dbus_message_iter_next(&iter)
        }
        return values
    }

    static func read(_ iter: inout DBusMessageIter) throws(DBusError) -> DBusValue {
        let type = Int(dbus_message_iter_get_arg_type(&iter))
        switch type {
        case CDBUS_TYPE_BYTE: return .byte(basic(&iter, UInt8(0)))
        case CDBUS_TYPE_BOOLEAN: return .boolean(basic(&iter, dbus_bool_t(0)) != 0)
        case CDBUS_TYPE_INT16: return .int16(basic(&iter, Int16(0)))
        case CDBUS_TYPE_UINT16: return .uint16(basic(&iter, UInt16(0)))
        case CDBUS_TYPE_INT32: return .int32(basic(&iter, Int32(0)))
        case CDBUS_TYPE_UINT32: return .uint32(basic(&iter, UInt32(0)))
        case CDBUS_TYPE_INT64: return .int64(basic(&iter, Int64(0)))
        case CDBUS_TYPE_UINT64: return .uint64(basic(&iter, UInt64(0)))
        case CDBUS_TYPE_DOUBLE: return .double(basic(&iter, Double(0)))
        case CDBUS_TYPE_STRING: return .string(text(&iter))
        case CDBUS_TYPE_OBJECT_PATH: return .objectPath(ObjectPath(unchecked: text(&iter)))
        case CDBUS_TYPE_SIGNATURE: return .signature(try DBusSignature(text(&iter)))
        case CDBUS_TYPE_VARIANT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .variant(try read(&sub))
        case CDBUS_TYPE_STRUCT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .structure(try readAll(&sub))
        case CDBUS_TYPE_ARRAY:
            let signature = containedSignature(&iter)
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            if signature.hasPrefix("{") {
                guard case .dictionary(let key, let value) = try DBusType("a" + signature) else {
                    throw DBusError(DBusError.Name.invalidSignature, "malformed dictionary signature \(signature)")
                }
                var entries: [DBusValue.DictEntry] = []
                while dbus_message_iter_get_arg_type(&sub) != Int32(CDBUS_TYPE_INVALID) {
                    var pair = DBusMessageIter()
                    dbus_message_iter_recurse(&sub, &pair)
                    let k = try read(&pair)
                    dbus_message_iter_next(&pair)
                    let v = try read(&pair)
                    entries.append(.init(k, v))
                    dbus_message_iter_next(&sub)
                }
                return .dictionary(key: key, value: value, entries)
            }
            let element = try DBusType(signature)
            return .array(element, try readAll(&sub))
        case CDBUS_TYPE_UNIX_FD:
            throw .notSupported("unix file descriptor arguments are not supported")
        default:
            throw DBusError(DBusError.Name.invalidSignature, "unknown type code \(type) in message")
        }
    }

    private static func basic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        dbus_message_iter_get_basic(&iter, &value)
        return value
    }

    private static func text(_ iter: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &pointer)
        return pointer.map { String(cString: $0) } ?? ""
    }

    private static func containedSignature(_ iter: inout DBusMessageIter) -> String {
        guard let sig = dbus_message_iter_get_signature(&iter) else { return "" }
        defer { dbus_free(sig) }
        // The iterator's signature is the array's own ("aX"); drop the "a".
        return String(String(cString: sig).dropFirst())
    }
}
