public import DBus
public import SessionPolicy

/// The `state` argument of `Register`: the whole state of a session, which a client sends
/// when it registers, and again after the arbiter changed hosts.
///
/// ``encoded`` writes the `a{sv}` dictionary, keyed by the properties' names;
/// ``init(decoding:)`` reads it strictly, before anything changes: every key is known and
/// given once, and every value is a variant holding exactly the key's type (not a variant
/// inside a variant, not a number for a list). Anything else is `InvalidArgs` naming the key.
public struct ArbiterRegistration: Sendable, Hashable {
    /// The category, if the session set one (`category`).
    public var category: Category?
    /// The category's options (`options`).
    public var options: CategoryOptions = []
    /// The mode (`mode`).
    public var mode: Mode = .default
    /// Whether the session is active (`active`).
    public var active = false
    /// Whether the process produces sound (`producingSound`).
    public var producingSound = false
    /// Whether any remote command is enabled (`remoteCommands`).
    public var remoteCommands = false
    /// Whether the session was playing when interrupted (`wasPlaying`); sent only with
    /// ``interruptedBy`` or ``silencedBy``.
    public var wasPlaying = false
    /// The session that interrupted this one (`interruptedBy`), after a host change.
    public var interruptedBy: SessionID?
    /// What silenced this session (`silencedBy`: ``InterruptionReason/screenLocked`` or
    /// ``InterruptionReason/silentMode``), after a host change.
    public var silencedBy: InterruptionReason?
    /// What the session plays through (`outputKind` and `outputName`), if it said.
    public var output: Output?

    /// A registration of a session that has set nothing yet.
    public init() {}

    /// What a session plays through, as `SetOutput` says it.
    public struct Output: Sendable, Hashable {
        /// The kind of output.
        public var kind: ArbiterProtocol.OutputKind
        /// The server's name and version, or the ALSA device; empty for ``ArbiterProtocol/OutputKind/none``.
        public var name: String

        /// No output opened yet.
        public static let none = Output(unchecked: .none, name: "")

        /// An output of `kind` named `name`, cut to ``ArbiterProtocol/maximumOutputNameBytes``.
        public init(_ kind: ArbiterProtocol.OutputKind, name: String) {
            var shown = name
            while shown.utf8.count > ArbiterProtocol.maximumOutputNameBytes { shown.removeLast() }
            self.init(unchecked: kind, name: shown)
        }

        private init(unchecked kind: ArbiterProtocol.OutputKind, name: String) {
            self.kind = kind
            self.name = name
        }

        /// Validates `SetOutput`'s (or `Register`'s) values: a known kind, and a name of at
        /// most ``ArbiterProtocol/maximumOutputNameBytes`` without control characters
        /// (it is shown in a terminal), empty exactly when the kind is.
        ///
        /// - Throws: `InvalidArgs` naming the value and why.
        public init(kind: String, name: String) throws(DBusError) {
            guard let known = ArbiterProtocol.OutputKind(rawValue: kind) else {
                throw .invalidArgs("output kind must be soundServer, alsa or \"\", not \(WireFormat.quoted(kind))")
            }
            guard name.utf8.count <= ArbiterProtocol.maximumOutputNameBytes else {
                throw .invalidArgs("output name is \(name.utf8.count) bytes; at most \(ArbiterProtocol.maximumOutputNameBytes)")
            }
            guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw .invalidArgs("output name must not contain control characters: \(WireFormat.quoted(name))")
            }
            guard name.isEmpty == (known == .none) else {
                throw .invalidArgs(known == .none ? "an output of no kind has no name, not \(WireFormat.quoted(name))"
                                                  : "an output of kind \(known.rawValue) needs a name")
            }
            self.init(unchecked: known, name: name)
        }
    }

    /// At most this many category options in one list (there are seven names; a list
    /// may repeat one, but not without bound).
    public static let maximumOptions = 8

    /// The keys of the dictionary, each with the one type its variant holds.
    private enum Key: String, CaseIterable {
        case category, options, mode, active, producingSound, remoteCommands, interruptedBy, silencedBy, wasPlaying
        case outputKind, outputName

        var type: DBusType {
            switch self {
            case .options: .array(.string)
            case .category, .mode, .interruptedBy, .silencedBy, .outputKind, .outputName: .string
            case .active, .producingSound, .remoteCommands, .wasPlaying: .boolean
            }
        }
    }

    /// The `a{sv}` dictionary `Register` carries.
    public var encoded: DBusValue {
        var state: [String: DBusValue] = [
            Key.options.rawValue: .strings(options.names), Key.mode.rawValue: .string(mode.rawValue),
            Key.active.rawValue: .boolean(active), Key.producingSound.rawValue: .boolean(producingSound),
            Key.remoteCommands.rawValue: .boolean(remoteCommands),
        ]
        if let category { state[Key.category.rawValue] = .string(category.rawValue) }
        if let output {
            state[Key.outputKind.rawValue] = .string(output.kind.rawValue)
            state[Key.outputName.rawValue] = .string(output.name)
        }
        if let interruptedBy {
            state[Key.interruptedBy.rawValue] = .string(interruptedBy.rawValue)
            state[Key.wasPlaying.rawValue] = .boolean(wasPlaying)
        } else if let silencedBy {
            state[Key.silencedBy.rawValue] = .string(WireFormat.encode(silencedBy).0)
            state[Key.wasPlaying.rawValue] = .boolean(wasPlaying)
        }
        return .vardict(state)
    }

    /// Reads `Register`'s `state` strictly.
    ///
    /// - Throws: `InvalidArgs` naming the key and what is wrong with it; nothing is read then.
    public init(decoding value: DBusValue) throws(DBusError) {
        guard case .dictionary(.string, .variant, let entries) = value else {
            throw .invalidArgs("state must be a dictionary a{sv}, not \(WireFormat.describe(value))")
        }
        var seen: [Key: DBusValue] = [:]
        for entry in entries {
            guard case .string(let key) = entry.key else { throw .invalidArgs("state keys must be strings") }
            guard let declared = Key(rawValue: key) else {
                throw .invalidArgs("unknown state key \(WireFormat.quoted(key)) "
                                   + "(known: \(Key.allCases.map(\.rawValue).sorted().joined(separator: ", ")))")
            }
            guard seen[declared] == nil else { throw .invalidArgs("state “\(key)” is given twice") }
            // One level of variant, holding exactly the declared type.
            guard case .variant(let inner) = entry.value, inner.type == declared.type else {
                let actual = if case .variant(let inner) = entry.value { inner.type.signature } else { entry.value.type.signature }
                throw .invalidArgs("state “\(key)” must be of type “\(declared.type.signature)”, not “\(actual)”")
            }
            seen[declared] = inner
        }
        if case .string(let name)? = seen[.category] { category = try WireFormat.category(name) }
        if case .array(_, let names)? = seen[.options] {
            guard names.count <= Self.maximumOptions else {
                throw .invalidArgs("state “options” has \(names.count) entries; at most \(Self.maximumOptions)")
            }
            options = try WireFormat.options(names.compactMap(\.string))
        }
        if case .string(let name)? = seen[.mode] { mode = try WireFormat.mode(name) }
        func flag(_ key: Key) -> Bool { if case .boolean(let b)? = seen[key] { b } else { false } }
        active = flag(.active)
        producingSound = flag(.producingSound)
        remoteCommands = flag(.remoteCommands)
        wasPlaying = flag(.wasPlaying)
        if case .string(let name)? = seen[.interruptedBy] {
            guard name.hasPrefix(":"), (try? BusName.validate(name)) != nil else {
                throw .invalidArgs("state “interruptedBy” must be a unique bus name, not \(WireFormat.quoted(name))")
            }
            interruptedBy = SessionID(name)
        }
        if case .string(let name)? = seen[.silencedBy] {
            switch name {
            case "screenLocked": silencedBy = .screenLocked
            case "silentMode": silencedBy = .silentMode
            default: throw .invalidArgs("state “silencedBy” must be screenLocked or silentMode, not \(WireFormat.quoted(name))")
            }
        }
        switch (seen[.outputKind], seen[.outputName]) {
        case (.string(let kind)?, .string(let name)?): output = try Output(kind: kind, name: name)
        case (nil, nil): break
        default: throw .invalidArgs("state gives “outputKind” and “outputName” together or neither")
        }
        if interruptedBy != nil, silencedBy != nil {
            throw .invalidArgs("state gives both “interruptedBy” and “silencedBy”; a session says one cause")
        }
        if seen[.wasPlaying] != nil, interruptedBy == nil, silencedBy == nil {
            throw .invalidArgs("state “wasPlaying” only goes with “interruptedBy” or “silencedBy”")
        }
    }
}
