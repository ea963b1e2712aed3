/// Any D-Bus value, typed: the tree that messages, properties and signals carry.
///
/// Containers carry their element types so that empty arrays and dictionaries keep a
/// signature. ``validate()`` checks what libdbus would otherwise abort on (element types
/// that disagree with the declared one, strings holding NUL); every send validates first.
public indirect enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(ObjectPath)
    case signature(DBusSignature)
    case variant(DBusValue)
    /// An array whose elements all have the given type.
    case array(DBusType, [DBusValue])
    /// A dictionary `a{KV}`, as ordered entries; keys have a basic type.
    case dictionary(key: DBusType, value: DBusType, [DictEntry])
    case structure([DBusValue])

    /// One entry of a ``DBusValue/dictionary(key:value:_:)``.
    public struct DictEntry: Sendable, Hashable {
        public var key: DBusValue
        public var value: DBusValue
        public init(_ key: DBusValue, _ value: DBusValue) {
            self.key = key
            self.value = value
        }
    }

    /// The value's type.
    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .variant: .variant
        case .array(let element, _): .array(element)
        case .dictionary(let key, let value, _): .dictionary(key: key, value: value)
        case .structure(let fields): .structure(fields.map(\.type))
        }
    }

    /// Checks the whole tree: container elements match their declared types and
    /// strings hold no NUL (Swift strings are otherwise always valid UTF-8).
    ///
    /// - Throws: ``DBusError`` `InvalidArgs` naming the offending value.
    public func validate() throws(DBusError) {
        switch self {
        case .string(let text):
            if text.utf8.contains(0) {
                throw .invalidArgs("string “\(text.debugDescription)” holds a NUL byte, which D-Bus strings cannot carry")
            }
        case .variant(let inner):
            try inner.validate()
        case .array(let element, let items):
            for item in items {
                guard item.type == element else {
                    throw .invalidArgs("array of \(element) holds a \(item.type) element")
                }
                try item.validate()
            }
        case .dictionary(let keyType, let valueType, let entries):
            guard keyType.isBasic else { throw .invalidArgs("dictionary key type \(keyType) is not basic") }
            for entry in entries {
                guard entry.key.type == keyType, entry.value.type == valueType else {
                    throw .invalidArgs("dictionary a{\(keyType)\(valueType)} holds a {\(entry.key.type)\(entry.value.type)} entry")
                }
                try entry.key.validate()
                try entry.value.validate()
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw .invalidArgs("a struct must hold at least one field") }
            for field in fields { try field.validate() }
        default:
            break
        }
    }
}

// MARK: - Building values

extension DBusValue {
    /// `as`: an array of strings.
    public static func strings(_ values: [String]) -> DBusValue {
        .array(.string, values.map(DBusValue.string))
    }

    /// `a{sv}`: a string-keyed dictionary of variants, entries sorted by key so that
    /// equal dictionaries compare equal.
    public static func vardict(_ values: [String: DBusValue]) -> DBusValue {
        .dictionary(key: .string, value: .variant,
                    values.sorted { $0.key < $1.key }.map { DictEntry(.string($0.key), .variant($0.value)) })
    }
}

// MARK: - Reading values

extension DBusValue {
    /// The value inside any number of variant wrappers.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    public var string: String? {
        switch unwrapped {
        case .string(let s): s
        case .objectPath(let p): p.rawValue
        default: nil
        }
    }

    public var bool: Bool? {
        if case .boolean(let b) = unwrapped { return b }
        return nil
    }

    public var double: Double? {
        if case .double(let d) = unwrapped { return d }
        return nil
    }

    /// Any integer type, widened to `Int64` when it fits.
    public var int64: Int64? {
        switch unwrapped {
        case .byte(let v): Int64(v)
        case .int16(let v): Int64(v)
        case .uint16(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .int64(let v): v
        case .uint64(let v): Int64(exactly: v)
        default: nil
        }
    }

    public var objectPath: ObjectPath? {
        if case .objectPath(let p) = unwrapped { return p }
        return nil
    }

    /// The elements of an array (not a dictionary).
    public var elements: [DBusValue]? {
        if case .array(_, let items) = unwrapped { return items }
        return nil
    }

    /// The strings of an `as` array.
    public var stringArray: [String]? {
        elements?.compactMap(\.string)
    }

    /// A string-keyed dictionary, values unwrapped from their variants.
    public var stringKeyedDictionary: [String: DBusValue]? {
        guard case .dictionary(.string, _, let entries) = unwrapped else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            if let key = entry.key.string { result[key] = entry.value.unwrapped }
        }
        return result
    }
}

extension DBusValue: CustomStringConvertible {
    /// A compact, gdbus-like rendering for logs and test messages.
    public var description: String {
        switch self {
        case .byte(let v): "byte \(v)"
        case .boolean(let v): "\(v)"
        case .int16(let v): "int16 \(v)"
        case .uint16(let v): "uint16 \(v)"
        case .int32(let v): "\(v)"
        case .uint32(let v): "uint32 \(v)"
        case .int64(let v): "int64 \(v)"
        case .uint64(let v): "uint64 \(v)"
        case .double(let v): "\(v)"
        case .string(let v): v.debugDescription
        case .objectPath(let v): "objectpath '\(v)'"
        case .signature(let v): "signature '\(v)'"
        case .variant(let v): "<\(v)>"
        case .array(_, let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(_, _, let entries):
            "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .structure(let fields): "(" + fields.map(\.description).joined(separator: ", ") + ")"
        }
    }
}
