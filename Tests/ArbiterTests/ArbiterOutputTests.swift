import Arbiter
import ArbiterTestSupport
import DBus
import SessionPolicy
import Testing
import TestSupport

/// `SetOutput` and the `output…` keys: what each session plays through, for `earshot status`.
@Suite("Arbiter: each session's output")
struct ArbiterOutputTests {
    /// The caller's row of `Sessions`.
    static func row(of client: Client, in f: ArbiterFixture) async throws -> ArbiterSessionSummary? {
        try await ArbiterStatus.read(on: f.host).sessions.first { $0.id == client.id }
    }

    static func output(of client: Client, in f: ArbiterFixture) async throws -> (kind: String?, name: String?) {
        let row = try await row(of: client, in: f)
        return (row?.outputKind?.rawValue, row?.outputName)
    }

    @Test("SetOutput shows in Sessions, invalidating it; Register carries it; empty until said")
    func setOutputShows() async throws {
        let f = try await ArbiterFixture()
        let client = try await Client(f.bus)
        try await client.register("music")
        #expect(try await Self.output(of: client, in: f) == ("", ""))

        let invalidated = Locked(0)
        let watcher = try DBusConnection(.address(f.bus.address))
        _ = try await watcher.subscribe(MatchRule(interface: StandardInterface.properties, member: "PropertiesChanged", path: ArbiterName.path)) { _ in
            invalidated.withLock { $0 += 1 }
        }
        try await client.call("SetOutput", [.string("soundServer"), .string("pulseaudio 16.1")])
        #expect(try await Self.output(of: client, in: f) == ("soundServer", "pulseaudio 16.1"))
        try await eventually("Sessions to be invalidated") { invalidated.value >= 1 }

        // Registering again (after a host change) with the output keeps it.
        let other = try await Client(f.bus)
        try await other.call("Register", [.string("radio"), .vardict(["category": .string("playback"), "outputKind": .string("alsa"),
                                                                      "outputName": .string("hw:0")])])
        #expect(try await Self.output(of: other, in: f) == ("alsa", "hw:0"))
    }

    @Test("a bad output is InvalidArgs and changes nothing; an unregistered caller is NotRegistered", arguments: [
        ("speakers", "x"), ("alsa", ""), ("", "default"), ("alsa", "dev\u{1B}[2J"), ("soundServer", String(repeating: "x", count: 256)),
    ])
    func badOutput(kind: String, name: String) async throws {
        let f = try await ArbiterFixture()
        let client = try await Client(f.bus)
        try await client.register("music")
        try await client.call("SetOutput", [.string("alsa"), .string("default")])
        do {
            try await client.call("SetOutput", [.string(kind), .string(name)])
            Issue.record("SetOutput(\(kind), \(name)) succeeded")
        } catch let error as DBusError {
            #expect(error.name == DBusError.Name.invalidArgs, "\(error)")
            #expect(!error.message.contains("\u{1B}"), "\(error)")
        }
        #expect(try await Self.output(of: client, in: f) == ("alsa", "default"))
        // The same in Register: refused whole.
        let other = try await Client(f.bus)
        await #expect(throws: DBusError.self) {
            try await other.call("Register", [.string("radio"), .vardict(["outputKind": .string(kind), "outputName": .string(name)])])
        }
        #expect(f.arbiter.policy[SessionID(other.id)] == nil)
        // Not registered: nothing to describe.
        let stranger = try await Client(f.bus)
        do {
            try await stranger.call("SetOutput", [.string("alsa"), .string("default")])
            Issue.record("SetOutput from an unregistered caller succeeded")
        } catch let error as DBusError {
            #expect(error.name == ArbiterName.Error.notRegistered, "\(error)")
        }
    }

    @Test("one output key without the other is InvalidArgs")
    func halfAnOutput() async throws {
        let f = try await ArbiterFixture()
        let client = try await Client(f.bus)
        do {
            try await client.call("Register", [.string("radio"), .vardict(["outputKind": .string("alsa")])])
            Issue.record("a registration with outputKind alone succeeded")
        } catch let error as DBusError {
            #expect(error.name == DBusError.Name.invalidArgs && error.message.contains("outputName"), "\(error)")
        }
    }
}
