public import DBus
public import SessionPolicy

/// How session values travel on the bus: categories, options and modes by their iOS
/// names, reasons by name. Shared by the arbiter and its clients.
public enum WireFormat {
    public static func category(_ name: String) throws(DBusError) -> Category {
        guard let category = Category(rawValue: name) else {
            throw .invalidArgs("\(quoted(name)) is not a category (\(Category.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return category
    }

    /// The sentence for options `category` refuses, naming the first refused option and
    /// the category ("duckOthers is not allowed with record"); `nil` if it accepts them.
    public static func refusal(of options: CategoryOptions, with category: Category) -> String? {
        refusedOption(of: options, with: category).map { "\($0) is not allowed with \(category.rawValue)" }
    }

    /// The name of the first of `options` that `category` refuses; `nil` if it accepts them.
    public static func refusedOption(of options: CategoryOptions, with category: Category) -> String? {
        guard let option = options.firstDisallowed(with: category) else { return nil }
        return CategoryOptions.named.first { $0.option == option }?.name ?? "option 0x\(String(option.rawValue, radix: 16))"
    }

    /// The options named, by their iOS names (``CategoryOptions/named``: the route options
    /// change nothing on a desktop but travel, so that a session reads back what it set,
    /// and a new arbiter host learns it). Lists carry them in that order
    /// (``CategoryOptions/names``).
    public static func options(_ names: [String]) throws(DBusError) -> CategoryOptions {
        var options: CategoryOptions = []
        for name in names {
            guard let option = CategoryOptions.named.first(where: { $0.name == name })?.option else {
                throw .invalidArgs("\(quoted(name)) is not a category option (\(CategoryOptions.named.map(\.name).joined(separator: ", ")))")
            }
            options.insert(option)
        }
        return options
    }

    public static func mode(_ name: String) throws(DBusError) -> Mode {
        guard let mode = Mode(rawValue: name) else {
            throw .invalidArgs("\(quoted(name)) is not a mode (\(Mode.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return mode
    }

    /// At most this many characters of a caller's string are quoted back in an error.
    static let quotedLimit = 64

    /// A caller's string for an error message: in quotes, control characters escaped, and
    /// cut after ``quotedLimit`` characters (a megabyte of garbage is not echoed back).
    public static func quoted(_ text: String) -> String {
        var out = ""
        for (i, scalar) in text.unicodeScalars.enumerated() {
            if i == quotedLimit {
                out += "… (\(text.utf8.count) bytes)"
                break
            }
            out += scalar.properties.generalCategory == .control ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return "“\(out)”"
    }

    /// A value's type, for an error message (the value itself may be huge).
    static func describe(_ value: DBusValue) -> String {
        "a value of type “\(value.type.signature)”"
    }

    /// `(reason, by)`: the reason's name and the interrupting session ("" if none, and for
    /// another app).
    public static func encode(_ reason: InterruptionReason) -> (String, String) {
        switch reason {
        case .sessionActivated(let id): ("sessionActivated", id.rawValue)
        case .screenLocked: ("screenLocked", "")
        case .silentMode: ("silentMode", "")
        case .routeDisconnected: ("routeDisconnected", "")
        // No `by`: a client would name it as its interrupter when it registers again, and
        // another app never registers.
        case .otherApp: ("otherApp", "")
        }
    }

    public static func reason(_ name: String, by: String) -> InterruptionReason? {
        switch name {
        case "sessionActivated": .sessionActivated(SessionID(by))
        case "screenLocked": .screenLocked
        case "silentMode": .silentMode
        case "routeDisconnected": .routeDisconnected
        case "otherApp": .otherApp(player: by)
        default: nil
        }
    }
}

/// The service's names.
public enum ArbiterName {
    public static let bus = "org.earshot.AudioSession"
    public static let interface = "org.earshot.AudioSession"
    public static let path: ObjectPath = "/org/earshot/AudioSession"
    /// Errors the arbiter replies with.
    public enum Error {
        public static let notRegistered = "org.earshot.AudioSession.Error.NotRegistered"
        public static let rejected = "org.earshot.AudioSession.Error.Rejected"
        public static let limitsExceeded = "org.earshot.AudioSession.Error.LimitsExceeded"
    }
}
