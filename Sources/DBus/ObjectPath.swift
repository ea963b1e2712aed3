/// A validated D-Bus object path, such as `/org/mpris/MediaPlayer2`.
///
/// libdbus aborts the process when asked to send an invalid path; constructing an
/// `ObjectPath` checks the rules first and throws instead.
public struct ObjectPath: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    /// Validates `rawValue`: `/`, or `/`-separated non-empty elements of
    /// `[A-Za-z0-9_]` with no trailing slash.
    ///
    /// - Throws: ``DBusError`` `InvalidArgs` naming the path and the broken rule.
    public init(_ rawValue: String) throws(DBusError) {
        if let reason = ObjectPath.invalidReason(rawValue) {
            throw .invalidArgs("“\(rawValue)” is not a valid object path: \(reason)")
        }
        self.rawValue = rawValue
    }

    /// For literals in source code; an invalid literal is a programming error.
    public init(stringLiteral value: String) {
        precondition(ObjectPath.invalidReason(value) == nil, "invalid object path literal \(value)")
        self.rawValue = value
    }

    public static let root: ObjectPath = "/"

    public var description: String { rawValue }

    public static func < (lhs: ObjectPath, rhs: ObjectPath) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Whether `self` lies strictly below `ancestor`.
    public func isDescendant(of ancestor: ObjectPath) -> Bool {
        if ancestor.rawValue == "/" { return rawValue != "/" }
        return rawValue.hasPrefix(ancestor.rawValue + "/")
    }

    /// Appends one element, escaping every byte outside `[A-Za-z0-9]` as `_XX`
    /// (hex), so any string becomes a valid, reversible path element.
    public func appending(escaped element: String) -> ObjectPath {
        var escaped = ""
        for byte in element.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"):
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16)
                escaped += "_" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        if escaped.isEmpty { escaped = "_" }
        let base = rawValue == "/" ? "" : rawValue
        return ObjectPath(unchecked: base + "/" + escaped)
    }

    init(unchecked rawValue: String) { self.rawValue = rawValue }

    static func invalidReason(_ path: String) -> String? {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return "it must start with “/”" }
        if bytes.count == 1 { return nil }
        guard bytes.last != UInt8(ascii: "/") else { return "it must not end with “/”" }
        var previousWasSlash = false
        for byte in bytes {
            if byte == UInt8(ascii: "/") {
                if previousWasSlash { return "it has an empty element (“//”)" }
                previousWasSlash = true
                continue
            }
            previousWasSlash = false
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                continue
            default:
                return "elements may hold only A–Z, a–z, 0–9 and “_”"
            }
        }
        return nil
    }
}

/// A validated D-Bus type signature holding zero or more complete types.
public struct DBusSignature: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    /// The complete types the signature holds, in order.
    public let types: [DBusType]

    /// - Throws: ``DBusError`` `InvalidSignature` when `rawValue` is not a valid signature.
    public init(_ rawValue: String) throws(DBusError) {
        self.types = try DBusType.parseList(rawValue)
        self.rawValue = rawValue
    }

    public init(_ types: [DBusType]) {
        self.types = types
        self.rawValue = types.map(\.signature).joined()
    }

    public var description: String { rawValue }
}
