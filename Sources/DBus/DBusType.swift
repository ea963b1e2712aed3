/// A complete D-Bus type, as one single complete type in a signature.
///
/// `DBusType` parses and renders signatures, so `DBusType("a{sv}")` is
/// `.dictionary(.string, .variant)` and its ``signature`` is `"a{sv}"`.
/// Unix file descriptors (`h`) are not supported by this layer.
public indirect enum DBusType: Sendable, Hashable, CustomStringConvertible {
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    case string, objectPath, signature
    case variant
    case array(DBusType)
    /// An array of dict entries, `a{KV}`; the key is a basic type.
    case dictionary(key: DBusType, value: DBusType)
    case structure([DBusType])

    /// The signature of this single complete type.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .variant: "v"
        case .array(let element): "a" + element.signature
        case .dictionary(let key, let value): "a{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        }
    }

    public var description: String { signature }

    /// Whether the type is basic (may be a dictionary key).
    public var isBasic: Bool {
        switch self {
        case .variant, .array, .dictionary, .structure: false
        default: true
        }
    }

    /// Parses exactly one single complete type.
    ///
    /// - Throws: ``DBusError`` named `InvalidSignature` when `signature` is not one
    ///   valid single complete type.
    public init(_ signature: String) throws(DBusError) {
        let types = try DBusType.parseList(signature)
        guard types.count == 1 else {
            throw DBusError(DBusError.Name.invalidSignature,
                            "“\(signature)” is not a single complete type (it holds \(types.count))")
        }
        self = types[0]
    }

    /// Parses a signature holding any number of complete types, such as a method's
    /// argument list.
    public static func parseList(_ signature: String) throws(DBusError) -> [DBusType] {
        guard signature.utf8.count <= 255 else {
            throw DBusError(DBusError.Name.invalidSignature, "signature is longer than 255 bytes")
        }
        var parser = SignatureParser(bytes: Array(signature.utf8), text: signature)
        var result: [DBusType] = []
        while !parser.atEnd {
            result.append(try parser.parseOne(arrayDepth: 0, structDepth: 0))
        }
        return result
    }
}

/// Recursive-descent parser over signature bytes, with the specification's nesting limits.
private struct SignatureParser {
    let bytes: [UInt8]
    let text: String
    var index = 0

    var atEnd: Bool { index >= bytes.count }

    func fail(_ reason: String) -> DBusError {
        DBusError(DBusError.Name.invalidSignature, "invalid signature “\(text)”: \(reason)")
    }

    mutating func parseOne(arrayDepth: Int, structDepth: Int) throws(DBusError) -> DBusType {
        guard index < bytes.count else { throw fail("ends in the middle of a type") }
        let code = bytes[index]
        index += 1
        switch code {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "h"): throw fail("unix file descriptors (h) are not supported")
        case UInt8(ascii: "a"):
            guard arrayDepth < 32 else { throw fail("arrays nest deeper than 32") }
            if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
                index += 1
                let key = try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth)
                guard key.isBasic else { throw fail("dictionary key \(key) is not a basic type") }
                let value = try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth)
                guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else {
                    throw fail("dict entry must hold exactly a key and a value")
                }
                index += 1
                return .dictionary(key: key, value: value)
            }
            return .array(try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth))
        case UInt8(ascii: "("):
            guard structDepth < 32 else { throw fail("structs nest deeper than 32") }
            var fields: [DBusType] = []
            while index < bytes.count, bytes[index] != UInt8(ascii: ")") {
                fields.append(try parseOne(arrayDepth: arrayDepth, structDepth: structDepth + 1))
            }
            guard index < bytes.count else { throw fail("struct is not closed") }
            index += 1
            guard !fields.isEmpty else { throw fail("empty struct") }
            return .structure(fields)
        case UInt8(ascii: "{"):
            throw fail("dict entry outside an array")
        default:
            throw fail("unknown type code “\(Character(Unicode.Scalar(code)))”")
        }
    }
}
