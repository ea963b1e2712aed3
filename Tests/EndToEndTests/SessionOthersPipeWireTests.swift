import DBus
import Foundation
import Testing
import TestSupport

/// The other apps' rules on PipeWire (pipewire, wireplumber, pipewire-pulse, headless):
/// the arbiter's libpulse connection follows pipewire-pulse's streams as it does
/// PulseAudio's.
@Suite("Other apps on PipeWire: mpv and paplay under the session rules", .tags(.ownPipeWire))
struct SessionOthersPipeWireTests {
    /// PipeWire with its private bus, `earshot daemon` on that bus, and a client connection.
    final class World: Sendable {
        let server: PipeWireServer
        let client: DBusConnection
        let daemon: Child
        var environment: [String: String] { server.environment }

        init() async throws {
            await SessionSlots.shared.acquire()
            do {
                server = try PipeWireServer()
                client = try DBusConnection(.address(try #require(server.environment["DBUS_SESSION_BUS_ADDRESS"])))
                daemon = try Child(Paths.earshot, ["daemon"], environment: server.environment)
                try await daemon.waitForOutput("serving ")
            } catch {
                SessionSlots.shared.release()
                throw error
            }
        }

        deinit {
            daemon.kill(SIGKILL)
            client.close()
            SessionSlots.shared.release()
        }

        func mprisStatus(_ name: String) async -> String? {
            let reply = try? await client.call(destination: name, path: "/org/mpris/MediaPlayer2", interface: StandardInterface.properties,
                                               method: "Get", [.string("org.mpris.MediaPlayer2.Player"), .string("PlaybackStatus")],
                                               timeout: .seconds(2))
            return reply?.first?.unwrapped.string
        }

        func waitForMPV(_ status: String, timeout: Double = 8) async throws {
            try await sessionPoll("mpv to say \(status)", timeout: timeout) { await self.mprisStatus("org.mpris.MediaPlayer2.mpv") == status }
        }

        /// Waits until the arbiter (the daemon) lists mpv among the other players as Playing.
        /// mpv-mpris answers Get with its new status before it signals the change, so a
        /// session started as soon as mpv said Playing could come before the arbiter heard it,
        /// and mpv, playing after that session, would rightly be left playing: one CI run
        /// timed out waiting for Paused that way (SessionOthersTests waits the same way).
        func waitForArbiterToKnowMPVPlaying() async throws {
            let mpv = try #require(try await client.nameOwner("org.mpris.MediaPlayer2.mpv"))
            try await sessionPoll("the arbiter to know mpv as Playing", timeout: 10) {
                let reply = try await self.client.call(destination: SessionArbiter.name, path: SessionArbiter.path,
                                                       interface: StandardInterface.properties, method: "Get",
                                                       [.string(SessionArbiter.interface), .string("Others")])
                let others = (try #require(reply.first).unwrapped.elements ?? []).compactMap(\.stringKeyedDictionary)
                return others.contains { $0["player"]?.string == mpv && $0["status"]?.string == "Playing" }
            }
        }
    }

    @Test("earshot play pauses mpv and plays it again when it ends")
    func pauseAndResume() async throws {
        let world = try await World()
        let mpv = try Child("mpv", ["--no-video", "--no-terminal", "--ao=pulse", "--loop-file=inf",
                                    try SessionWorld.tone(.right, frequency: 700, duration: 30)], environment: world.environment)
        try await world.waitForMPV("Playing")
        try await world.waitForArbiterToKnowMPVPlaying()
        let music = try Child(Paths.earshot, ["play", "--name", "music", try SessionWorld.tone(.left, frequency: 300, duration: 2)],
                              environment: world.environment)
        try await world.waitForMPV("Paused")
        #expect(try await music.wait(timeout: 20) == 0, "\(music.stderr)")
        try await world.waitForMPV("Playing")
        mpv.kill(SIGKILL)
    }

    @Test("earshot status names PipeWire as the output of a session playing there")
    func statusNamesPipeWire() async throws {
        let world = try await World()
        let music = try Child(Paths.earshot, ["play", "--name", "music", try SessionWorld.tone(.left, frequency: 300, duration: 20)],
                              environment: world.environment)
        defer { music.kill(SIGKILL) }
        try await sessionPoll("earshot status to name PipeWire", timeout: 10) {
            let status = try await run(Paths.earshot, ["status"], environment: world.environment, timeout: 10)
            return try SessionStatusTable(status.stdout).rows.contains { $0.app == "music" && $0.output.hasPrefix("pipewire-0.") }
        }
    }

    @Test("isOtherAudioPlaying follows a paplay stream, and not a media.role=event one")
    func otherAudioPlaying() async throws {
        let world = try await World()
        let changes = Locked<[Bool]>([])
        _ = try await world.client.subscribe(MatchRule(interface: SessionArbiter.interface, member: "OtherAudioPlayingChanged"),
                                             addMatch: false) { message in
            if let playing = (try? message.arguments())?.first?.bool { changes.withLock { $0.append(playing) } }
        }
        _ = try await world.client.call(destination: SessionArbiter.name, path: SessionArbiter.path, interface: SessionArbiter.interface,
                                        method: "Register", [.string("observer"), .vardict(["category": .string("ambient"), "active": .boolean(true)])])
        let tone = try SessionWorld.tone(.left, frequency: 440, duration: 1.5)
        let event = try Child("paplay", ["--property=media.role=event", tone], environment: world.environment)
        #expect(try await event.wait(timeout: 10) == 0, "\(event.stderr)")
        try await Task.sleep(for: .milliseconds(300))
        #expect(changes.value.isEmpty, "an event sound counted: \(changes.value)")
        let music = try Child("paplay", [tone], environment: world.environment)
        try await sessionPoll("OtherAudioPlayingChanged(true)") { changes.value == [true] }
        #expect(try await music.wait(timeout: 10) == 0, "\(music.stderr)")
        try await sessionPoll("OtherAudioPlayingChanged(false)") { changes.value == [true, false] }
    }
}
