public import DBus
public import SessionPolicy

/// One of `org.earshot.AudioSession`'s signals, typed: the arbiter emits it
/// (``member``, ``arguments``) and a client decodes it (``init(_:arbiter:)``), which also
/// checks that the arbiter sent it. All but ``sessionsAvailable`` are unicast to one session.
public enum ArbiterSignal: Sendable, Hashable {
    /// `Deactivated(reason s)`: the arbiter deactivated the session.
    case deactivated(reason: DeactivationReason)
    /// `InterruptionBegan(reason s, by s)`: the reason's name, and the interrupting
    /// session for ``InterruptionReason/sessionActivated(_:)`` ("" otherwise; see
    /// ``WireFormat/encode(_:)``).
    case interruptionBegan(InterruptionReason)
    /// `InterruptionEnded(should_resume b)`.
    case interruptionEnded(shouldResume: Bool)
    /// `DuckGainChanged(gain d)`: 1 when no longer ducked.
    case duckGainChanged(Double)
    /// `OtherAudioPlayingChanged(playing b)`.
    case otherAudioPlayingChanged(Bool)
    /// `SecondaryAudioShouldBeSilencedChanged(silenced b)`.
    case secondaryAudioShouldBeSilencedChanged(Bool)
    /// `SessionsAvailable()`, broadcast: a session went after a registration was refused
    /// for the limits; refused clients register again.
    case sessionsAvailable

    /// Why the arbiter deactivated a session.
    public enum DeactivationReason: String, Sendable, Hashable {
        /// It stayed silent past the timeout while interrupting others.
        case silenceTimeout
    }

    /// The signal's member.
    public var member: ArbiterProtocol.Signal {
        switch self {
        case .deactivated: .deactivated
        case .interruptionBegan: .interruptionBegan
        case .interruptionEnded: .interruptionEnded
        case .duckGainChanged: .duckGainChanged
        case .otherAudioPlayingChanged: .otherAudioPlayingChanged
        case .secondaryAudioShouldBeSilencedChanged: .secondaryAudioShouldBeSilencedChanged
        case .sessionsAvailable: .sessionsAvailable
        }
    }

    /// The signal's arguments, in the order ``arguments(of:)`` declares them.
    public var arguments: [DBusValue] {
        switch self {
        case let .deactivated(reason): [.string(reason.rawValue)]
        case let .interruptionBegan(reason): [.string(WireFormat.encode(reason).0), .string(WireFormat.encode(reason).1)]
        case let .interruptionEnded(shouldResume): [.boolean(shouldResume)]
        case let .duckGainChanged(gain): [.double(gain)]
        case let .otherAudioPlayingChanged(playing): [.boolean(playing)]
        case let .secondaryAudioShouldBeSilencedChanged(silenced): [.boolean(silenced)]
        case .sessionsAvailable: []
        }
    }

    /// Why a message is not a signal a client obeys.
    public enum DecodingError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The message is not a signal of the arbiter's interface, or names no member it has.
        case notAnArbiterSignal(interface: String?, member: String?)
        /// The signal's sender is not the unique name that owns `org.earshot.AudioSession`
        /// now (`owner`, nil when none does): any client can send a signal with the
        /// arbiter's interface to another.
        case notFromArbiter(ArbiterProtocol.Signal, sender: String?, owner: String?)
        /// The signal's arguments have another signature than the member declares.
        case wrongArguments(ArbiterProtocol.Signal, signature: String)

        /// A sentence naming the signal and why it is not obeyed.
        public var description: String {
            switch self {
            case let .notAnArbiterSignal(interface, member):
                "\(interface ?? "no interface").\(member ?? "no member") is not a signal of \(ArbiterName.interface)"
            case let .notFromArbiter(signal, sender, owner):
                "ignored \(signal.rawValue) from \(sender ?? "no sender"), not the arbiter (\(owner ?? "none"))"
            case let .wrongArguments(signal, signature):
                "ignored \(signal.rawValue) with arguments “\(signature)”; it carries "
                    + "“\(ArbiterSignal.arguments(of: signal).map(\.type.signature).joined())”"
            }
        }
    }

    /// Reads a signal that `owner` (the unique name owning `org.earshot.AudioSession`
    /// now) sent; `reason` names an interruption reason this client does not know as
    /// ``InterruptionReason/routeDisconnected`` (pause, and stay paused).
    ///
    /// - Throws: ``DecodingError`` when the message is not the arbiter's signal, or it
    ///   did not send it, or its arguments have another shape.
    public init(_ message: DBusMessage, arbiter owner: String?) throws(DecodingError) {
        guard message.kind == .signal, message.interface == ArbiterName.interface,
              let member = message.member.flatMap(ArbiterProtocol.Signal.init(rawValue:)) else {
            throw .notAnArbiterSignal(interface: message.interface, member: message.member)
        }
        guard let sender = message.sender, sender == owner else {
            throw .notFromArbiter(member, sender: message.sender, owner: owner)
        }
        let expected = Self.arguments(of: member).map(\.type.signature).joined()
        guard message.signature == expected, let args = try? message.arguments() else {
            throw .wrongArguments(member, signature: message.signature)
        }
        func flag(_ i: Int) -> Bool { args[i].bool == true }
        switch member {
        case .deactivated:
            self = .deactivated(reason: DeactivationReason(rawValue: args[0].string ?? "") ?? .silenceTimeout)
        case .interruptionBegan:
            self = .interruptionBegan(WireFormat.reason(args[0].string ?? "", by: args[1].string ?? "") ?? .routeDisconnected)
        case .interruptionEnded: self = .interruptionEnded(shouldResume: flag(0))
        case .duckGainChanged: self = .duckGainChanged(args[0].double ?? 1)
        case .otherAudioPlayingChanged: self = .otherAudioPlayingChanged(flag(0))
        case .secondaryAudioShouldBeSilencedChanged: self = .secondaryAudioShouldBeSilencedChanged(flag(0))
        case .sessionsAvailable: self = .sessionsAvailable
        }
    }

    /// The arguments `signal` declares (as `dbus/org.earshot.AudioSession.xml` does).
    public static func arguments(of signal: ArbiterProtocol.Signal) -> [DBusArgument] {
        switch signal {
        case .deactivated: [.init("reason", .string)]
        case .interruptionBegan: [.init("reason", .string), .init("by", .string)]
        case .interruptionEnded: [.init("should_resume", .boolean)]
        case .duckGainChanged: [.init("gain", .double)]
        case .otherAudioPlayingChanged: [.init("playing", .boolean)]
        case .secondaryAudioShouldBeSilencedChanged: [.init("silenced", .boolean)]
        case .sessionsAvailable: []
        }
    }

    /// The interface's signal declarations.
    public static var declarations: [DBusSignalDeclaration] {
        ArbiterProtocol.Signal.allCases.map { DBusSignalDeclaration($0.rawValue, arguments: arguments(of: $0)) }
    }

    /// The match rule for the broadcast ``sessionsAvailable`` (unicast signals need none).
    public static var sessionsAvailableRule: MatchRule {
        MatchRule(sender: ArbiterName.bus, interface: ArbiterName.interface, member: ArbiterProtocol.Signal.sessionsAvailable.rawValue)
    }
}

extension DBusExportedObject {
    /// Emits one of the arbiter's signals, unicast to `session` or, without one, broadcast.
    func emit(_ signal: ArbiterSignal, to session: SessionID? = nil) throws(DBusError) {
        try emit(signal.member.rawValue, interface: ArbiterName.interface, signal.arguments, to: session?.rawValue)
    }
}
