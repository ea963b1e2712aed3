import SessionPolicy
import Testing
import TestSupport

/// A session client's registration, driven by random sequences: the arbiter's name changes
/// hands (new unique names, or none for a while), the arbiter runs out of room and has room
/// again (announcing it), and the path's registrations run one at a time at random moments,
/// each answered by the arbiter that owns the name when it runs.
private struct RegistrationWorld {
    enum Step: Hashable {
        case register(reset: Bool)
        case retry
    }

    var client = SessionClient()
    var path: [Step] = [.register(reset: false)]  // the connection's own registration
    var random: SplitMix64
    var owner: String? = ":1.1"
    var names = 1
    var room = true
    /// A registration after a host change was refused: the one accepted next must be one too.
    var resetOwed = false
    var problems: [String] = []
    var log: [String] = []

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
        _ = client.handle(.arbiterOwnerAnswered(owner, changesBefore: 0))
    }

    mutating func handle(_ input: SessionClient.Input) {
        log.append("\(input)")
        for effect in client.handle(input) {
            switch effect {
            case .enqueueRegistration(let reset): path.append(.register(reset: reset))
            case .enqueueRegistrationRetry: path.append(.retry)
            case .register(let reset): register(reset: reset)
            default: problems.append("\(effect) from \(input)")
            }
        }
    }

    /// A registration reaches whoever owns the name now.
    mutating func register(reset: Bool) {
        log.append("register reset \(reset) with \(owner ?? "none"), room \(room)")
        guard let owner else {
            // The call fails and nothing changes; a first registration failing fails the
            // connection, which the session's next call makes again.
            if client.registration == .unregistered { path.append(.register(reset: false)) }
            return
        }
        guard room else {
            if reset { resetOwed = true }
            handle(.registrationRefused(reset: reset))
            return
        }
        if resetOwed, !reset { problems.append("a refused host change registered as a first registration") }
        resetOwed = false
        handle(.registrationAccepted(host: owner))
    }

    mutating func step() {
        guard !path.isEmpty else { return }
        switch path.removeFirst() {
        case .register(let reset): register(reset: reset)
        case .retry: handle(.registrationRetryDue)
        }
    }

    mutating func randomInput() {
        switch Int.random(in: 0..<10, using: &random) {
        case 0:
            if owner != nil, Bool.random(using: &random) {
                owner = nil
            } else {
                names += 1
                owner = ":1.\(names)"
            }
            handle(.arbiterOwnerChanged(owner))
        case 1:
            room.toggle()
            if room, owner != nil { handle(.sessionsAvailable) }
        default:
            step()
        }
    }

    /// The arbiter has room and a host, announces it, and the path runs to its end.
    mutating func settle() {
        if owner == nil {
            names += 1
            owner = ":1.\(names)"
            handle(.arbiterOwnerChanged(owner))
        }
        while !path.isEmpty { step() }
        if !room {
            room = true
            handle(.sessionsAvailable)
        }
        while !path.isEmpty { step() }
    }
}

@Suite("Session client: registration over random sequences")
struct SessionClientRegistrationTests {
    static let sequences = 2000
    static let length = 80

    /// Whatever the order of host changes, refusals and room, once the arbiter has room and
    /// a host and the path has run, the session is registered with that host, and a refused
    /// registration after a host change is retried as one.
    @Test func theSessionEndsRegisteredWithTheHost() {
        for seed in 0..<UInt64(Self.sequences) {
            var world = RegistrationWorld(seed: seed)
            for _ in 0..<Int.random(in: 0..<Self.length, using: &world.random) { world.randomInput() }
            world.settle()
            let tail = world.log.suffix(14).joined(separator: "\n")
            #expect(world.problems.isEmpty, "seed \(seed): \(world.problems)\n\(tail)")
            #expect(world.client.registration == .registered(host: world.owner!), "seed \(seed): \(world.client.registration)\n\(tail)")
            if !world.problems.isEmpty || world.client.registration != .registered(host: world.owner!) { return }
        }
    }

    /// An answer to "who owns the arbiter's name" that a change overtook is not kept.
    @Test func aStaleOwnerAnswerIsDropped() {
        var client = SessionClient()
        let before = client.arbiterOwnerChanges
        _ = client.handle(.arbiterOwnerChanged(":1.2"))
        _ = client.handle(.arbiterOwnerAnswered(":1.1", changesBefore: before))
        #expect(client.arbiterOwner == ":1.2")
    }

    /// A session waiting for room tries any new host, and keeps the host change it waits with.
    @Test func waitingForRoomTriesEveryNewHost() {
        var client = SessionClient()
        _ = client.handle(.registrationAccepted(host: ":1.1"))
        #expect(client.handle(.arbiterOwnerChanged(":1.2")) == [.enqueueRegistration(reset: true)])
        _ = client.handle(.registrationRefused(reset: true))
        #expect(client.registration == .waitingForRoom(afterHostChange: true, lastHost: ":1.1"))
        #expect(client.handle(.arbiterOwnerChanged(":1.3")) == [.enqueueRegistrationRetry])
        #expect(client.handle(.registrationRetryDue) == [.register(reset: true)])
        _ = client.handle(.registrationAccepted(host: ":1.3"))
        #expect(client.handle(.registrationRetryDue) == [])
        #expect(client.handle(.arbiterOwnerChanged(":1.3")) == [])
    }
}
