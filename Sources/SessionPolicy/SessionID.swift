/// The identity of one process's audio session: the process's unique name on the
/// session bus, such as `":1.42"`.
///
/// Unique names are never reused by the bus, so an identifier names one process for
/// its whole life. Identifiers are ordered by their raw string; the policy uses that
/// order wherever it walks several sessions, so its decisions come out in the same
/// order for the same input.
public struct SessionID: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The bus unique name.
    public let rawValue: String

    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { self.init(value) }

    public static func < (lhs: SessionID, rhs: SessionID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { rawValue }
}
