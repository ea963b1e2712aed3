/// A signal match rule, as the bus's `AddMatch` takes it and as the connection
/// applies it locally to route signals to subscribers.
public struct MatchRule: Sendable, Hashable {
    public var sender: String?
    public var interface: String?
    public var member: String?
    public var path: ObjectPath?
    public var pathNamespace: ObjectPath?
    /// Matches the first argument when it is a string equal to this value.
    public var arg0: String?

    public init(
        sender: String? = nil, interface: String? = nil, member: String? = nil,
        path: ObjectPath? = nil, pathNamespace: ObjectPath? = nil, arg0: String? = nil
    ) {
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.arg0 = arg0
    }

    /// The rule in the bus's text syntax, values quoted and escaped.
    public var text: String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            // Inside quotes nothing is special but the quote itself, written '\''.
            var quoted = ""
            for character in value { quoted += character == "'" ? "'\\''" : String(character) }
            parts.append("\(key)='\(quoted)'")
        }
        add("sender", sender)
        add("interface", interface)
        add("member", member)
        add("path", path?.rawValue)
        add("path_namespace", pathNamespace?.rawValue)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }

    /// Whether a received signal matches. A well-known `sender` is resolved by the bus,
    /// not here: locally only unique names (and the bus's own name) are compared.
    func matches(_ message: DBusMessage) -> Bool {
        guard message.kind == .signal else { return false }
        if let sender, sender.hasPrefix(":") || sender == StandardInterface.bus, message.sender != sender { return false }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        if let path, message.path != path.rawValue { return false }
        if let pathNamespace, let messagePath = message.path {
            guard messagePath == pathNamespace.rawValue
                || (try? ObjectPath(messagePath))?.isDescendant(of: pathNamespace) == true else { return false }
        }
        if let arg0 {
            guard (try? message.arguments())?.first?.string == arg0 else { return false }
        }
        return true
    }
}
