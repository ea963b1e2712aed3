public import DBus

/// One session as the `Sessions` property shows it, for `earshot status`, keyed by the
/// properties' names. Names are the iOS names the session gave; a reader
/// shows what it does not know rather than refusing it.
public struct ArbiterSessionSummary: Sendable, Hashable {
    /// The session's unique bus name.
    public var id = ""
    /// The app name it registered with.
    public var app = ""
    /// The category's iOS name.
    public var category = ""
    /// The category options' names.
    public var options: [String] = []
    /// The mode's iOS name.
    public var mode = ""
    /// Whether the session is active.
    public var active = false
    /// Whether it produces sound.
    public var producingSound = false
    /// Whether it is interrupted.
    public var interrupted = false
    /// Whether it is ducked.
    public var ducked = false
    /// When it last produced sound (higher is more recent; 0 never).
    public var lastSound: UInt64 = 0
    /// Whether it may be the remote-control target.
    public var eligible = false
    /// Whether it is the remote-control target.
    public var target = false
    /// Its output's kind (``ArbiterProtocol/OutputKind/none`` until it said; nil for a
    /// kind this reader does not know).
    public var outputKind: ArbiterProtocol.OutputKind? = ArbiterProtocol.OutputKind.none
    /// Its output's name ("" until it said).
    public var outputName = ""

    /// A summary with every value at its default, to fill in.
    public init() {}

    private enum Key: String {
        case id, app, category, options, mode, active, producingSound, interrupted, ducked, lastSound, eligible, target
        case outputKind, outputName
    }

    /// The `a{sv}` dictionary of the `Sessions` property.
    public var encoded: DBusValue {
        .vardict([
            Key.id.rawValue: .string(id), Key.app.rawValue: .string(app), Key.category.rawValue: .string(category),
            Key.options.rawValue: .strings(options), Key.mode.rawValue: .string(mode), Key.active.rawValue: .boolean(active),
            Key.producingSound.rawValue: .boolean(producingSound), Key.interrupted.rawValue: .boolean(interrupted),
            Key.ducked.rawValue: .boolean(ducked), Key.lastSound.rawValue: .uint64(lastSound),
            Key.eligible.rawValue: .boolean(eligible), Key.target.rawValue: .boolean(target),
            Key.outputKind.rawValue: .string(outputKind?.rawValue ?? ""), Key.outputName.rawValue: .string(outputName),
        ])
    }

    /// Reads one dictionary of the `Sessions` property; a key that is missing or of
    /// another type keeps its default. Nil when `value` is no string-keyed dictionary.
    public init?(decoding value: DBusValue) {
        guard let d = value.stringKeyedDictionary else { return nil }
        id = d[Key.id.rawValue]?.string ?? "?"
        app = d[Key.app.rawValue]?.string ?? "?"
        category = d[Key.category.rawValue]?.string ?? "?"
        options = d[Key.options.rawValue]?.stringArray ?? []
        mode = d[Key.mode.rawValue]?.string ?? "?"
        active = d[Key.active.rawValue]?.bool ?? false
        producingSound = d[Key.producingSound.rawValue]?.bool ?? false
        interrupted = d[Key.interrupted.rawValue]?.bool ?? false
        ducked = d[Key.ducked.rawValue]?.bool ?? false
        lastSound = d[Key.lastSound.rawValue]?.int64.map { UInt64(clamping: $0) } ?? 0
        eligible = d[Key.eligible.rawValue]?.bool ?? false
        target = d[Key.target.rawValue]?.bool ?? false
        outputKind = ArbiterProtocol.OutputKind(rawValue: d[Key.outputKind.rawValue]?.string ?? "")
        outputName = d[Key.outputName.rawValue]?.string ?? ""
    }
}

/// One other app's player, or a process sounding without one, as the `Others` property
/// shows it, for `earshot status`, keyed by the properties' names.
public struct ArbiterOtherSummary: Sendable, Hashable {
    /// The unique name owning the player's MPRIS name; "" for a process without one.
    public var player = ""
    /// Its MPRIS name without `org.mpris.MediaPlayer2.` ("mpv"); "" without one.
    public var app = ""
    /// Its process (-1 when unknown).
    public var pid: Int64 = -1
    /// Its `PlaybackStatus`; "" without a player.
    public var status = ""
    /// Whether a playback stream of it runs (not corked, not an event sound).
    public var sounding = false
    /// When it last started sounding (higher is more recent; 0 never).
    public var lastSound: UInt64 = 0
    /// The session whose activation paused it, "" when none.
    public var pausedBy = ""
    /// The sessions whose duckOthers lowers its streams now (none: not ducked).
    public var duckedBy: [String] = []
    /// Whether it is the remote-control target.
    public var target = false

    /// A summary with every value at its default, to fill in.
    public init() {}

    private enum Key: String { case player, app, pid, status, sounding, lastSound, pausedBy, duckedBy, target }

    /// The `a{sv}` dictionary of the `Others` property.
    public var encoded: DBusValue {
        .vardict([
            Key.player.rawValue: .string(player), Key.app.rawValue: .string(app), Key.pid.rawValue: .int64(pid),
            Key.status.rawValue: .string(status), Key.sounding.rawValue: .boolean(sounding),
            Key.lastSound.rawValue: .uint64(lastSound), Key.pausedBy.rawValue: .string(pausedBy),
            Key.duckedBy.rawValue: .strings(duckedBy), Key.target.rawValue: .boolean(target),
        ])
    }

    /// Reads one dictionary of the `Others` property; a key that is missing or of
    /// another type keeps its default. Nil when `value` is no string-keyed dictionary.
    public init?(decoding value: DBusValue) {
        guard let d = value.stringKeyedDictionary else { return nil }
        player = d[Key.player.rawValue]?.string ?? ""
        app = d[Key.app.rawValue]?.string ?? ""
        pid = d[Key.pid.rawValue]?.int64 ?? -1
        status = d[Key.status.rawValue]?.string ?? ""
        sounding = d[Key.sounding.rawValue]?.bool ?? false
        lastSound = d[Key.lastSound.rawValue]?.int64.map { UInt64(clamping: $0) } ?? 0
        pausedBy = d[Key.pausedBy.rawValue]?.string ?? ""
        duckedBy = d[Key.duckedBy.rawValue]?.stringArray ?? []
        target = d[Key.target.rawValue]?.bool ?? false
    }
}
