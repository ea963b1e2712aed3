@testable import Arbiter
import ArbiterTestSupport
import AudioEngine
import DBus
@testable import Earshot
import SessionPolicy
import Testing
import TestSupport

/// An `AudioSession` that the arbiter refuses for lack of room (issue 7, item 4): it keeps
/// working on its own state and registers, with that state, when the arbiter broadcasts
/// `SessionsAvailable`.
@Suite("AudioSession refused for lack of room")
struct SessionRetryTests {
    @Test("a refused session registers when a session leaves, carrying what changed meanwhile")
    func registersWhenRoomAppears() async throws {
        let f = try await ArbiterFixture { $0.maximumSessions = 1 }
        let filler = try await Client(f.bus)
        try await filler.register("filler")
        // An engine on no device: the session never plays here.
        let session = AudioSession(appName: "late", bus: .address(f.bus.address),
                                   engine: AudioEngine(configuration: .init(device: "earshot_no_such_device")))
        try await session.connect()
        try await session.setCategory(.playback)
        try await session.setActive(true)
        try await Task.sleep(for: .milliseconds(300))
        #expect(f.arbiter.policy.sessions.values.map(\.appName) == ["filler"], "no room yet")

        filler.connection.close()
        // Waits for the arbiter's reply, not for the session to appear in its policy: the
        // arbiter applies a registration's category and activation one step after another
        // on its bus thread, and this test reads the policy from another thread.
        try await eventually("the refused session to register") {
            session.state.withLock { $0.client.registeredWith != nil && !$0.client.isWaitingForRoom }
        }
        let late = try #require(f.arbiter.policy.sessions.values.first { $0.appName == "late" })
        #expect(late.category == .playback && late.isActive, "the registration carries the category and activation: \(late)")
    }

    @Test("a retry refused again waits for the next SessionsAvailable")
    func refusedAgain() async throws {
        // The limit per process refuses the retry whatever the order of messages: the room
        // that another process's session leaves is announced to the waiting session, which
        // may still not take it while the filler (of this process, as it is) stays. (An
        // earlier version had the filler leave and register again at once, racing the retry:
        // the bus keeps no order between two connections, and under load the retry won.)
        let f = try await ArbiterFixture { $0.maximumSessionsPerProcess = 1 }
        let listener = try DBusConnection(.address(f.bus.address))
        let announcements = Locked(0)
        _ = try await listener.subscribe(MatchRule(sender: ArbiterName.bus, interface: ArbiterName.interface, member: "SessionsAvailable")) { _ in
            announcements.withLock { $0 += 1 }
        }
        let filler = try await Client(f.bus)
        try await filler.register("filler")
        let session = AudioSession(appName: "late", bus: .address(f.bus.address),
                                   engine: AudioEngine(configuration: .init(device: "earshot_no_such_device")))
        try await session.connect()
        try await eventually("the session to be refused") { session.state.withLock { $0.client.isWaitingForRoom } }

        // Another process (gdbus) registers, and its session goes when it exits.
        let other = try await run("gdbus", ["call", "--address", f.bus.address, "--dest", ArbiterName.bus,
                                             "--object-path", ArbiterName.path.rawValue, "--method", "org.earshot.AudioSession.Register",
                                             "other", "{}"])
        #expect(other.status == 0, "\(other.stderr)")
        try await eventually("SessionsAvailable for the room it left") { announcements.value == 1 }
        // The announcement cleared the arbiter's note of a refusal; the retry's refusal sets it
        // again, so the next session to go announces room again.
        try await eventually("the retry to be refused") { f.arbiter.state.withLock { $0.refusedForRoom } }
        #expect(f.arbiter.policy.sessions.values.map(\.appName) == ["filler"])
        #expect(session.state.withLock { $0.client.isWaitingForRoom && $0.client.registeredWith == nil })

        filler.connection.close()
        try await eventually("the session to register on the next announcement") {
            f.arbiter.policy.sessions.values.map(\.appName) == ["late"]
        }
        #expect(announcements.value == 2)
    }
}
