/// The session's registration with the arbiter: the host it registered with, the arbiter's
/// owner as the bus says it, and waiting for room after a refusal.
extension SessionClient {
    /// Where the session stands with the arbiter.
    package enum Registration: Sendable, Hashable {
        /// Not registered yet (connecting, or registering for the first time).
        case unregistered
        /// The arbiter refused the registration for lack of room: the session keeps its state
        /// and registers again when the arbiter says there is room (`SessionsAvailable`) or a
        /// new host takes over; meanwhile the calls that would change the session change only
        /// the state kept here. `afterHostChange`: the refused registration followed a host
        /// change (the retry is one too). `lastHost`: the host it last registered with.
        case waitingForRoom(afterHostChange: Bool, lastHost: String?)
        /// Registered with the arbiter whose unique name is `host`.
        case registered(host: String)
    }

    /// Whether the session waits for room in the arbiter (its calls are not made).
    package var isWaitingForRoom: Bool {
        if case .waitingForRoom = registration { true } else { false }
    }

    /// The unique name of the host the session last registered with, if it has.
    package var registeredWith: String? {
        switch registration {
        case .unregistered: nil
        case .waitingForRoom(_, let host): host
        case .registered(let host): host
        }
    }

    mutating func handleRegistration(_ input: Input) -> [Effect] {
        switch input {
        case .arbiterOwnerChanged(let owner):
            arbiterOwner = owner
            arbiterOwnerChanges += 1
            guard let owner else { return [] }
            // A session still waiting for room tries any new host.
            if isWaitingForRoom { return [.enqueueRegistrationRetry] }
            guard let previous = registeredWith, previous != owner else { return [] }
            return [.enqueueRegistration(reset: true)]
        case .arbiterOwnerAnswered(let owner, let changesBefore):
            // Stale if a change arrived while it was asked.
            if arbiterOwnerChanges == changesBefore { arbiterOwner = owner }
            return []
        case .sessionsAvailable:
            // Tried on the path whether or not a refusal has arrived yet: a registration on
            // its way may be refused before the attempt runs.
            return [.enqueueRegistrationRetry]
        case .registrationRefused(let reset):
            if case .waitingForRoom(let afterHostChange, let host) = registration {
                registration = .waitingForRoom(afterHostChange: afterHostChange || reset, lastHost: host)
            } else {
                registration = .waitingForRoom(afterHostChange: reset, lastHost: registeredWith)
            }
            return []
        case .registrationAccepted(let host):
            registration = host.map { .registered(host: $0) } ?? .unregistered
            return []
        case .registrationRetryDue:
            // A registration refused after a host change is still one: it says why the
            // session is interrupted, and the app hears that media services were reset.
            guard case .waitingForRoom(let afterHostChange, _) = registration else { return [] }
            return [.register(reset: afterHostChange)]
        default:
            preconditionFailure("not a registration input: \(input)")
        }
    }
}
