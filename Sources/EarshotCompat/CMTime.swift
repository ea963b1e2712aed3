// Core Media's time type, as AVPlayer's members take and return it.

/// A time value's numerator.
public typealias CMTimeValue = Int64
/// A time value's denominator: units per second.
public typealias CMTimeScale = Int32

/// A time as a rational number of seconds, `value / timescale`, with Core Media's names.
/// Only the members players use: no epochs, no rounding methods.
public struct CMTime: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The numerator.
    public var value: CMTimeValue
    /// The denominator (units per second).
    public var timescale: CMTimeScale
    private var kind: Kind

    private enum Kind: Hashable, Sendable { case numeric, invalid, indefinite, positiveInfinity, negativeInfinity }

    /// `value / timescale` seconds.
    public init(value: CMTimeValue, timescale: CMTimeScale) {
        self.value = value
        self.timescale = timescale
        kind = timescale > 0 ? .numeric : .invalid
    }

    /// `seconds`, in units of `1 / preferredTimescale`.
    public init(seconds: Double, preferredTimescale: CMTimeScale) {
        if seconds.isNaN || preferredTimescale <= 0 {
            self = .invalid
        } else if seconds.isInfinite {
            self = seconds > 0 ? .positiveInfinity : .negativeInfinity
        } else {
            self.init(value: CMTimeValue((seconds * Double(preferredTimescale)).rounded()), timescale: preferredTimescale)
        }
    }

    private init(kind: Kind) {
        value = 0
        timescale = 0
        self.kind = kind
    }

    /// Zero seconds.
    public static let zero = CMTime(value: 0, timescale: 1)
    /// No time (`isValid` false).
    public static let invalid = CMTime(kind: .invalid)
    /// An unknown time, such as a live stream's duration.
    public static let indefinite = CMTime(kind: .indefinite)
    /// Plus infinity.
    public static let positiveInfinity = CMTime(kind: .positiveInfinity)
    /// Minus infinity.
    public static let negativeInfinity = CMTime(kind: .negativeInfinity)

    /// Whether the time is a time (numeric, indefinite or infinite), not `invalid`.
    public var isValid: Bool { kind != .invalid }
    /// Whether the time is unknown.
    public var isIndefinite: Bool { kind == .indefinite }
    /// Whether the time is a finite number of seconds.
    public var isNumeric: Bool { kind == .numeric }
    /// Whether the time is plus infinity.
    public var isPositiveInfinity: Bool { kind == .positiveInfinity }
    /// Whether the time is minus infinity.
    public var isNegativeInfinity: Bool { kind == .negativeInfinity }

    /// The time in seconds (NaN when invalid or indefinite, ±infinity when infinite).
    public var seconds: Double {
        switch kind {
        case .numeric: Double(value) / Double(timescale)
        case .positiveInfinity: .infinity
        case .negativeInfinity: -.infinity
        case .invalid, .indefinite: .nan
        }
    }

    /// Orders by seconds; invalid and indefinite times come last.
    public static func < (lhs: CMTime, rhs: CMTime) -> Bool {
        let (l, r) = (lhs.seconds, rhs.seconds)
        if l.isNaN { return false }
        if r.isNaN { return true }
        return l < r
    }

    /// `value/timescale = seconds`.
    public var description: String { isNumeric ? "CMTime(\(value)/\(timescale) = \(seconds))" : "CMTime(\(kind))" }
}

/// `value / timescale` seconds.
public func CMTimeMake(value: CMTimeValue, timescale: CMTimeScale) -> CMTime {
    CMTime(value: value, timescale: timescale)
}

/// `seconds`, in units of `1 / preferredTimescale`.
public func CMTimeMakeWithSeconds(_ seconds: Double, preferredTimescale: CMTimeScale) -> CMTime {
    CMTime(seconds: seconds, preferredTimescale: preferredTimescale)
}

/// The time in seconds.
public func CMTimeGetSeconds(_ time: CMTime) -> Double { time.seconds }
