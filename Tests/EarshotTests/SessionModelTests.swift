import Arbiter
import ArbiterTestSupport
import AudioEngine
import DBus
@testable import Earshot
import Foundation
import SessionPolicy
import Testing
import TestSupport

/// An `AudioSession` against a real arbiter on a private bus, for the points of issue 11
/// ("the iOS model to the letter") that cross the bus: options and modes on the wire,
/// deactivating while busy, and the silence timeout told to the session.
@Suite("AudioSession as iOS describes it, across the bus", .serialized, .tags(.inProcessAudio))
struct SessionModelTests {
    /// A session on `f`'s bus whose engine has no device (it never sounds here).
    static func silentSession(_ f: ArbiterFixture, _ app: String) -> AudioSession {
        AudioSession(appName: app, bus: .address(f.bus.address),
                     engine: AudioEngine(configuration: .init(device: "earshot_no_such_device")))
    }

    @Test("categoryOptions read back normalised; route options and every mode travel and are kept")
    func optionsAndModesRoundTrip() async throws {
        let f = try await ArbiterFixture()
        let session = Self.silentSession(f, "options")
        let id = SessionID(try await session.connection().uniqueName)

        try await session.setCategory(.ambient)
        #expect(session.categoryOptions == .mixWithOthers, "ambient reads [.mixWithOthers], as on iOS")
        try await session.setCategory(.ambient, options: .duckOthers)
        #expect(session.categoryOptions == [.duckOthers, .mixWithOthers])

        let route: CategoryOptions = [.allowBluetooth, .allowBluetoothA2DP, .allowAirPlay, .defaultToSpeaker]
        let options = route.union(.interruptSpokenAudioAndMixWithOthers)
        for mode in Mode.allCases {
            try await session.setCategory(.playAndRecord, mode: mode, options: options)
            #expect(session.mode == mode && session.categoryOptions == options)
            let kept = try #require(f.arbiter.policy[id])
            #expect(kept.mode == mode && kept.options == options, "the arbiter keeps what was set: \(kept)")
        }
        // What `earshot status` shows: every option by its name.
        let sessions = try await f.host.call(destination: ArbiterName.bus, path: ArbiterName.path, interface: StandardInterface.properties,
                                             method: "Get", [.string(ArbiterName.interface), .string("Sessions")])
        let listed = sessions.first?.elements?.first?.stringKeyedDictionary?["options"]?.stringArray ?? []
        #expect(Set(listed) == ["interruptSpokenAudioAndMixWithOthers", "allowBluetooth", "allowBluetoothA2DP", "allowAirPlay",
                                "defaultToSpeaker"], "\(listed)")
    }

    @Test("a refused combination names the option and the category, and changes nothing")
    func refusalNamesOptionAndCategory() async throws {
        let f = try await ArbiterFixture()
        let session = Self.silentSession(f, "refused")
        try await session.setCategory(.playback, options: .allowAirPlay)
        let error = await #expect(throws: AudioSessionError.self) { try await session.setCategory(.record, options: .duckOthers) }
        #expect(error == .optionNotAllowed(option: "duckOthers", category: .record))
        #expect(error?.description.contains("duckOthers is not allowed with record") == true, "\(String(describing: error))")
        #expect(session.category == .playback && session.categoryOptions == .allowAirPlay)

        // The arbiter's own check, for a client that does not check first.
        let raw = try await Client(f.bus)
        try await raw.register("raw")
        let wire = await #expect(throws: DBusError.self) {
            try await raw.call("SetCategory", [.string("soloAmbient"), .strings(["allowBluetooth", "mixWithOthers"]), .string("default")])
        }
        #expect(wire?.message.hasSuffix("mixWithOthers is not allowed with soloAmbient") == true, "\(String(describing: wire))")
        #expect(f.arbiter.policy[SessionID(raw.id)]?.category == .playback)
        // Every option name at once is within the limit of eight.
        try await raw.call("SetCategory", [.string("playAndRecord"), .strings(CategoryOptions.named.map(\.name)), .string("measurement")])
        #expect(f.arbiter.policy[SessionID(raw.id)]?.options.contains(.defaultToSpeaker) == true)
    }

    @Test("Register carries every option name and a mode; a ninth option name is refused")
    func registrationCarriesOptions() async throws {
        let f = try await ArbiterFixture()
        let names = CategoryOptions.named.map(\.name)
        let client = try await Client(f.bus)
        let state: [String: DBusValue] = ["category": .string("playAndRecord"), "options": .strings(names), "mode": .string("videoChat")]
        try await client.call("Register", [.string("all"), .vardict(state)])
        let session = try #require(f.arbiter.policy[SessionID(client.id)])
        let expected: CategoryOptions = [.mixWithOthers, .duckOthers, .interruptSpokenAudioAndMixWithOthers,
                                         .allowBluetooth, .allowBluetoothA2DP, .allowAirPlay, .defaultToSpeaker]
        #expect(session.options == expected && session.mode == .videoChat)
        // interruptSpokenAudioAndMixWithOthers carries the mixWithOthers bit, so that name is not repeated.
        #expect(Set(session.options.names) == Set(names).subtracting(["mixWithOthers"]))

        let other = try await Client(f.bus)
        let tooMany: [String: DBusValue] = ["category": .string("playback"), "options": .strings(names + ["mixWithOthers", "duckOthers"])]
        await #expect(throws: DBusError.self) { try await other.call("Register", [.string("many"), .vardict(tooMany)]) }
        #expect(f.arbiter.policy[SessionID(other.id)] == nil)
    }

    @Test("setActive(false) while a player runs fails with isBusy and changes nothing")
    func deactivatingWhileBusy() async throws {
        try await withAudio { _ in
            let f = try await ArbiterFixture()
            let victim = try await Client(f.bus)
            try await victim.register("victim", active: true, producing: true)
            let session = AudioSession(appName: "busy", bus: .address(f.bus.address))
            defer { session.unfollow() }
            let id = SessionID(try await session.connection().uniqueName)
            try await session.setCategory(.playback)
            try await session.setActive(true)
            try await eventually("the victim's interruption") { !victim.received("InterruptionBegan").isEmpty }

            let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 440, duration: 3)))
            #expect(player.play())
            let error = await #expect(throws: AudioSessionError.self) {
                try await session.setActive(false, options: .notifyOthersOnDeactivation)
            }
            #expect(error == .isBusy(runningPlayers: 1))
            #expect(error.map(String.init(describing:))?.contains("busy") == true)
            try await Task.sleep(for: .milliseconds(200))
            #expect(session.isActive && f.arbiter.policy[id]?.isActive == true, "nothing changed")
            #expect(victim.received("InterruptionEnded").isEmpty, "the interrupted app does not resume over it")

            player.stop()
            try await session.setActive(false, options: .notifyOthersOnDeactivation)
            #expect(!session.isActive)
            try await eventually("the victim told to resume") { victim.received("InterruptionEnded") == [[.boolean(true)]] }
        }
    }

    @Test("a session deactivated by the silence timeout is told, reads inactive, and its next play activates it")
    func silenceTimeoutIsTold() async throws {
        let f = try await ArbiterFixture { $0.silenceTimeout = .milliseconds(300) }
        let victim = try await Client(f.bus)
        try await victim.register("victim", active: true, producing: true)
        let session = Self.silentSession(f, "quiet")
        let told = Locked(0)
        let token = session.observe { if case .deactivatedAfterSilence = $0 { told.withLock { $0 += 1 } } }
        defer { token.cancel() }
        let id = SessionID(try await session.connection().uniqueName)
        try await session.setCategory(.playback)
        try await session.setActive(true)
        #expect(session.isActive)
        try await eventually("the timeout", timeout: 3) { !victim.received("InterruptionEnded").isEmpty }
        try await eventually("the session told") { told.value == 1 }
        #expect(!session.isActive && f.arbiter.policy[id]?.isActive == false)

        // This engine has no device, so the player cannot sound; play() still activates
        // the session first, as any play() of an inactive session does.
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 440, duration: 1)),
                                     engine: session.engine)
        _ = player.play()
        try await eventually("the session active again") { f.arbiter.policy[id]?.isActive == true && session.isActive }
    }
}
