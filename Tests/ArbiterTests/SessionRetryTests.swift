import Arbiter
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
        defer { AudioSession.connected.withLock { if $0 === session { $0 = nil } } }
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
            session.state.withLock { $0.registeredWith != nil && !$0.waitingForRoom }
        }
        let late = try #require(f.arbiter.policy.sessions.values.first { $0.appName == "late" })
        #expect(late.category == .playback && late.isActive, "the registration carries the category and activation: \(late)")
    }

    @Test("a retry refused again waits for the next SessionsAvailable")
    func refusedAgain() async throws {
        let f = try await ArbiterFixture { $0.maximumSessions = 1 }
        let filler = try await Client(f.bus)
        try await filler.register("filler")
        let session = AudioSession(appName: "late", bus: .address(f.bus.address),
                                   engine: AudioEngine(configuration: .init(device: "earshot_no_such_device")))
        defer { AudioSession.connected.withLock { if $0 === session { $0 = nil } } }
        try await session.connect()
        // The filler leaves and registers again at once (its Register sent right behind its
        // Unregister, in one go on its bus thread): the room is gone before the waiting
        // session's retry arrives. (Sent apart, a loaded CI run delayed the Register past
        // the retry, and the filler was the one refused.)
        let unregister = try DBusMessage.methodCall(destination: ArbiterName.bus, path: ArbiterName.path,
                                                    interface: ArbiterName.interface, method: "Unregister", arguments: [])
        let register = try DBusMessage.methodCall(destination: ArbiterName.bus, path: ArbiterName.path,
                                                  interface: ArbiterName.interface, method: "Register",
                                                  arguments: Client.registerArguments("filler"))
        for reply in await filler.connection.calls([unregister, register]) { _ = try reply.get() }
        try await Task.sleep(for: .milliseconds(300))
        #expect(f.arbiter.policy.sessions.values.map(\.appName) == ["filler"])

        filler.connection.close()
        try await eventually("the session to register on the next announcement") {
            f.arbiter.policy.sessions.values.map(\.appName) == ["late"]
        }
    }
}
