import DBus
import SessionPolicy

/// The `state` argument of `Register`, checked strictly before anything changes: every
/// key is known and given once, and every value is a variant holding exactly the key's
/// type (not a variant inside a variant, not a number for a list). Anything else is
/// `InvalidArgs` naming the key.
struct RegistrationState {
    var category: Category?
    var options: CategoryOptions = []
    var mode: Mode = .default
    var active = false
    var producingSound = false
    var remoteCommands = false
    var wasPlaying = false
    var interruptedBy: SessionID?
    var silencedBy: InterruptionReason?
    var output: Output?

    /// What a session plays through, as `SetOutput` says it; checked by ``init(kind:name:)``.
    struct Output: Equatable {
        var kind: ArbiterProtocol.OutputKind
        var name: String

        /// Validates `SetOutput`'s (or `Register`'s) values: a known kind, and a name of at
        /// most ``ArbiterProtocol/maximumOutputNameBytes`` without control characters
        /// (it is shown in a terminal), empty exactly when the kind is.
        init(kind: String, name: String) throws(DBusError) {
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
            self.kind = known
            self.name = name
        }
    }

    /// At most this many category options in one list (there are seven names; a list
    /// may repeat one, but not without bound).
    static let maximumOptions = 8

    init(_ value: DBusValue) throws(DBusError) {
        guard case .dictionary(.string, .variant, let entries) = value else {
            throw .invalidArgs("state must be a dictionary a{sv}, not \(WireFormat.describe(value))")
        }
        typealias Key = ArbiterProtocol.RegisterKey
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
            guard names.count <= RegistrationState.maximumOptions else {
                throw .invalidArgs("state “options” has \(names.count) entries; at most \(RegistrationState.maximumOptions)")
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
