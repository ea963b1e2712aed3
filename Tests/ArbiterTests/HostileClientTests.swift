@testable import Arbiter
import ArbiterTestSupport
import DBus
import Foundation
import SessionPolicy
import Testing
import TestSupport

/// The error a call throws (name and message), or nil when it succeeds.
private func dbusError(_ body: () async throws -> Void) async -> DBusError? {
    do {
        try await body()
        return nil
    } catch let error as DBusError {
        return error
    } catch {
        return DBusError("not a D-Bus error", "\(error)")
    }
}

/// Clients that lie: spoofed screen-saver signals, wrongly typed registrations, floods of
/// connections from one process, and registrations that describe another session.
@Suite("Arbiter against hostile clients")
struct HostileClientTests {
    @Test("ActiveChanged counts only from the owner of the screen saver's name", arguments: [
        "org.freedesktop.ScreenSaver", "org.gnome.ScreenSaver",
    ])
    func spoofedScreenSaver(saver: String) async throws {
        let f = try await ArbiterFixture()
        let ambient = try await Client(f.bus)
        try await ambient.register("chimes", category: "ambient", active: true, producing: true)
        let path = try ObjectPath("/" + saver.replacingOccurrences(of: ".", with: "/"))
        let spoofer = try DBusConnection(.address(f.bus.address))
        func spoof(_ locked: Bool) throws {
            try spoofer.send(DBusMessage.signal(path: path, interface: saver, name: "ActiveChanged", arguments: [.boolean(locked)]))
        }
        // No saver runs: nobody may say the screen is locked.
        try spoof(true)
        // A round trip through the arbiter after the spoof: it has handled the signal.
        try await ambient.call("SetRemoteCommandsEnabled", [.boolean(false)])
        _ = try await spoofer.nameOwner(ArbiterName.bus)
        #expect(!f.arbiter.policy.screenLocked, "a signal from a connection that owns no saver name")
        #expect(ambient.received("InterruptionBegan").isEmpty)

        // The real saver locks; a spoofed unlock does not unlock.
        let real = try await ScreenSaverStandIn(f.bus, name: saver, locked: false)
        try real.set(locked: true)
        try await eventually("the real lock") { f.arbiter.policy.screenLocked }
        try spoof(false)
        try await ambient.call("SetRemoteCommandsEnabled", [.boolean(false)])
        try await Task.sleep(for: .milliseconds(100))
        #expect(f.arbiter.policy.screenLocked, "a spoofed unlock while the real saver says locked")
        #expect(ambient.received("InterruptionEnded").isEmpty)
        try real.set(locked: false)
        try await eventually("the real unlock") { !f.arbiter.policy.screenLocked }

        // Once the saver has left, its old unique name counts no more either.
        let formerOwner = real.connection.uniqueName
        _ = try await real.connection.releaseName(saver)
        try await eventually("the arbiter to see the name go") { try await f.host.nameOwner(saver) == nil }
        _ = try await f.host.nameOwner(StandardInterface.bus)
        try real.connection.send(DBusMessage.signal(path: path, interface: saver, name: "ActiveChanged", arguments: [.boolean(true)]))
        try await Task.sleep(for: .milliseconds(100))
        #expect(!f.arbiter.policy.screenLocked, "\(formerOwner) no longer owns \(saver)")
    }

    @Test("Register's state is typed strictly: a wrong type, a nested variant or a repeated key is InvalidArgs naming the key")
    func strictRegistration() async throws {
        let f = try await ArbiterFixture()
        let victim = try await Client(f.bus)
        try await victim.register("victim", active: true, producing: true, remote: true)
        let before = f.arbiter.policy
        let hostile = try await Client(f.bus)
        let cases: [(key: String, state: DBusValue)] = [
            ("options", .vardict(["options": .string("duckOthers")])),
            ("options", .vardict(["options": .double(.nan)])),
            ("options", .vardict(["options": .double(.infinity)])),
            ("options", .dictionary(key: .string, value: .variant, [
                .init(.string("options"), .variant(.array(.variant, [.variant(.string("mixWithOthers")), .variant(.int32(1))]))),
            ])),
            ("options", .vardict(["options": .strings(Array(repeating: "mixWithOthers", count: 1000))])),
            ("category", .vardict(["category": .variant(.string("playback"))])),
            ("category", .vardict(["category": .objectPath("/playback")])),
            ("active", .vardict(["active": .int32(1)])),
            ("active", .vardict(["active": .double(.nan)])),
            ("producingSound", .vardict(["producingSound": .string("true")])),
            ("mode", .vardict(["mode": .strings(["default"])])),
            ("interruptedBy", .vardict(["interruptedBy": .int64(1)])),
            ("category", .dictionary(key: .string, value: .variant, [
                .init(.string("category"), .variant(.string("ambient"))),
                .init(.string("category"), .variant(.string("playback"))),
            ])),
            ("wasPlaying", .vardict(["wasPlaying": .boolean(true)])),
        ]
        for (key, state) in cases {
            let error = await dbusError { try await hostile.call("Register", [.string("x"), state]) }
            #expect(error?.name == DBusError.Name.invalidArgs, "\(key): \(state)")
            #expect(error?.message.contains(key) == true, "the error names “\(key)”: \(error?.message ?? "none")")
        }
        // Huge strings are refused without being echoed back whole.
        let huge = String(repeating: "x", count: 1 << 20)
        for call in [
            { _ = try await hostile.call("Register", [.string(huge), .vardict([:])]) },
            { _ = try await hostile.register("x", category: huge) },
            { _ = try await hostile.register("x", options: [huge]) },
        ] as [@Sendable () async throws -> Void] {
            let error = await dbusError(call)
            #expect(error?.name == DBusError.Name.invalidArgs)
            #expect((error?.message.utf8.count ?? .max) < 1000, "the error quotes a prefix: \(error?.message.prefix(200) ?? "")")
        }
        let escape = await dbusError { try await hostile.call("Register", [.string("x\u{1B}]0;owned\u{07}\n"), .vardict([:])]) }
        #expect(escape?.name == DBusError.Name.invalidArgs && escape?.message.contains("app_name") == true)
        #expect(escape?.message.contains("\u{1B}") == false, "the error escapes what it quotes: \(escape?.message ?? "")")
        #expect(f.arbiter.policy == before, "nothing changed")
        // SetCategory's options are bounded too, once registered.
        try await hostile.register("x")
        let error = await dbusError {
            try await hostile.call("SetCategory", [.string("playback"), .strings(Array(repeating: "mixWithOthers", count: 1000)), .string("default")])
        }
        #expect(error?.name == DBusError.Name.invalidArgs && error?.message.contains("options") == true, "\(String(describing: error))")
        #expect(f.arbiter.policy[SessionID(hostile.id)]?.options == [])
    }

    @Test("one process's connections get a few sessions; another process still registers")
    func perProcessLimit() async throws {
        let f = try await ArbiterFixture()
        let limit = Arbiter.Configuration().maximumSessionsPerProcess
        var clients: [Client] = []
        var refusals: [DBusError] = []
        for _ in 0..<(limit + 4) {
            let client = try await Client(f.bus)
            clients.append(client)
            if let error = await dbusError({ try await client.register("flood") }) { refusals.append(error) }
        }
        #expect(f.arbiter.policy.sessions.count == limit)
        #expect(refusals.count == 4 && refusals.allSatisfy { $0.name == ArbiterName.Error.limitsExceeded }, "\(refusals)")
        #expect(refusals.first?.message.contains("process \(getpid())") == true, "\(refusals.first?.message ?? "")")
        // Another process (gdbus) registers, and its session goes with it when it exits.
        let other = try await run("gdbus", ["call", "--address", f.bus.address, "--dest", ArbiterName.bus,
                                             "--object-path", ArbiterName.path.rawValue, "--method", "org.earshot.AudioSession.Register",
                                             "other", "{'category': <'playback'>}"])
        #expect(other.status == 0, "\(other.stderr)")
        #expect(other.stdout.contains("otherAudioPlaying"), "\(other.stdout)")
    }

    @Test("a refusal for lack of room is followed by SessionsAvailable when a session leaves, and only then")
    func sessionsAvailable() async throws {
        let f = try await ArbiterFixture { $0.maximumSessions = 2 }
        let listener = try DBusConnection(.address(f.bus.address))
        let announcements = Locked(0)
        _ = try await listener.subscribe(MatchRule(sender: ArbiterName.bus, interface: ArbiterName.interface, member: "SessionsAvailable")) { _ in
            announcements.withLock { $0 += 1 }
        }
        let a = try await Client(f.bus), b = try await Client(f.bus), c = try await Client(f.bus)
        try await a.register("a")
        try await b.register("b")
        try await a.call("Unregister")
        try await a.register("a")
        _ = try await listener.nameOwner(ArbiterName.bus)
        #expect(announcements.value == 0, "no one was refused")
        #expect(await dbusErrorName { try await c.register("c") } == ArbiterName.Error.limitsExceeded)
        b.connection.close()
        try await eventually("SessionsAvailable") { announcements.value == 1 }
        try await c.register("c")
        #expect(f.arbiter.policy.sessions.count == 2)
    }

    @Test("a registration claiming to be interrupted by another session, long after a host change, cannot deactivate it (a test clock)")
    func interruptedByAnother() async throws {
        let clock = ManualArbiterClock()
        let f = try await ArbiterFixture(clock: clock) { c in
            c.silenceTimeout = .seconds(30)
            c.reRegistrationWindow = .seconds(10)
        }
        await clock.advance(by: .seconds(10) + .nanoseconds(1))
        // A player, active and paused (silent), as `earshot play` is after a pause.
        let player = try await Client(f.bus)
        try await player.register("player", active: true, remote: true)
        let liar = try await Client(f.bus)
        try await liar.call("Register", [.string("liar"), .vardict([
            "category": .string("playback"), "interruptedBy": .string(player.id), "wasPlaying": .boolean(true),
        ])])
        try await eventually("the liar's own interruption to end") { !liar.received("InterruptionEnded").isEmpty }
        #expect(liar.received("InterruptionEnded") == [[.boolean(true)]], "the claim is ignored: its own interruption ends")
        #expect(f.arbiter.silenceTimers == 0, "no silence timer: the player interrupts nobody")
        await clock.advance(by: .seconds(60))
        _ = try await f.host.nameOwner(StandardInterface.bus)
        #expect(f.arbiter.policy[SessionID(player.id)]?.isActive == true, "the player stays active")
        #expect(f.arbiter.policy[SessionID(liar.id)]?.isInterrupted == false)
    }

    @Test("within the re-registration window the claim still carries an interruption over a host change")
    func interruptedByWithinWindow() async throws {
        // (A window far longer than the test, which a loaded machine may stretch.)
        let f = try await ArbiterFixture { $0.reRegistrationWindow = .seconds(600) }
        let interrupter = try await Client(f.bus)
        try await interrupter.register("game", active: true, producing: true)
        let victim = try await Client(f.bus)
        try await victim.call("Register", [.string("music"), .vardict([
            "category": .string("playback"), "interruptedBy": .string(interrupter.id), "wasPlaying": .boolean(true),
        ])])
        #expect(f.arbiter.policy[SessionID(victim.id)]?.isInterrupted == true)
        #expect(victim.received("InterruptionEnded").isEmpty)
    }

    @Test("registering again and again keeps one pending restoration per session")
    func pendingRestorationsBounded() async throws {
        let f = try await ArbiterFixture { $0.reRegistrationWindow = .seconds(600) }
        let client = try await Client(f.bus)
        for i in 0..<50 {
            try await client.call("Register", [.string("again"), .vardict([
                "interruptedBy": .string(":1.\(1000 + i)"), "wasPlaying": .boolean(false),
            ])])
            try await client.call("Unregister")
            try await client.call("Register", [.string("again"), .vardict([
                "silencedBy": .string("screenLocked"), "wasPlaying": .boolean(false),
            ])])
            try await client.call("Unregister")
        }
        try await client.call("Register", [.string("again"), .vardict([
            "interruptedBy": .string(":1.999"), "wasPlaying": .boolean(false),
        ])])
        let (restores, silenced) = f.arbiter.state.withLock { s in
            (s.pendingRestores.values.map(\.count).reduce(0, +), s.pendingSilenced.count)
        }
        #expect(restores <= 1 && silenced == 0, "\(restores) restorations and \(silenced) silencings pending")
        client.connection.close()
        try await eventually("the arbiter to forget the connection") {
            f.arbiter.state.withLock { $0.processes.isEmpty && $0.pendingRestores.isEmpty }
        }
    }

    @Test("every method and property refuses wrong types, variants for plain values and writes, and changes nothing")
    func methodSweep() async throws {
        let f = try await ArbiterFixture()
        let client = try await Client(f.bus)
        try await client.register("sweep", active: true, remote: true)
        let before = f.arbiter.policy
        let calls: [(String, [DBusValue])] = [
            ("Register", [.string("x")]),
            ("Register", [.variant(.string("x")), .vardict([:])]),
            ("Unregister", [.boolean(true)]),
            ("SetCategory", [.variant(.string("playback")), .variant(.strings([])), .variant(.string("default"))]),
            ("SetCategory", [.string("playback"), .strings([]), .string("x\u{1B}[2J")]),
            ("SetActive", [.boolean(true)]),
            ("SetActive", [.variant(.boolean(true)), .boolean(false)]),
            ("ReportSound", [.double(.nan)]),
            ("ReportSound", [.variant(.boolean(true))]),
            ("SetRemoteCommandsEnabled", [.int32(1)]),
        ]
        for (method, arguments) in calls {
            let error = await dbusError { try await client.call(method, arguments) }
            #expect(error?.name == DBusError.Name.invalidArgs, "\(method)\(arguments): \(String(describing: error))")
            #expect(error?.message.contains("\u{1B}") == false)
        }
        for property in ["Sessions", "Target", "ScreenLocked"] {
            let error = await dbusError {
                _ = try await client.connection.call(destination: ArbiterName.bus, path: ArbiterName.path, interface: StandardInterface.properties,
                                                     method: "Set", [.string(ArbiterName.interface), .string(property), .variant(.string(""))])
            }
            #expect(error != nil, "\(property) is read-only")
        }
        #expect(f.arbiter.policy == before, "nothing changed")
    }
}
