import DBus
import Foundation
import Testing
import TestSupport

/// Faults against real `earshot play` processes, each in a world of its own (private bus,
/// private PulseAudio): track-list edits over gdbus that once trapped it, and losing the
/// bus mid-play. (Named `Session…` so that `scripts/test` runs them in its pass for
/// multi-process real-time tests: under the parallel pass's load a player's start-up
/// alone can take seconds.)
@Suite("faults: earshot play over the bus", .tags(.sessions))
struct SessionPlayerFaultTests {
    static let trackList = "org.mpris.MediaPlayer2.TrackList"

    /// Starts `earshot play --name APP FILES…` in `world` and waits until it is on MPRIS.
    func play(_ app: String, _ files: [String], in world: SessionWorld) async throws -> Child {
        let process = try Child(Paths.earshot, ["play", "--name", app] + files, environment: world.environment)
        try await sessionPoll("\(app) to own its MPRIS name", timeout: 15) {
            try await world.client.nameOwner("org.mpris.MediaPlayer2." + app) != nil
        }
        return process
    }

    /// `gdbus call` of `method` on the MPRIS object of `app` in `world`.
    func gdbus(_ world: SessionWorld, _ app: String, _ method: String, _ arguments: [String] = []) async throws -> CommandResult {
        try await run("gdbus", ["call", "--session", "--dest", "org.mpris.MediaPlayer2." + app, "--object-path", "/org/mpris/MediaPlayer2",
                                "--method", method] + arguments, environment: world.environment)
    }

    func player(_ world: SessionWorld, _ app: String, _ property: String, interface: String = "org.mpris.MediaPlayer2.Player") async throws -> DBusValue {
        let reply = try await world.client.call(destination: "org.mpris.MediaPlayer2." + app, path: "/org/mpris/MediaPlayer2",
                                                interface: StandardInterface.properties, method: "Get",
                                                [.string(interface), .string(property)])
        return try #require(reply.first).unwrapped
    }

    func title(_ world: SessionWorld, _ app: String) async throws -> String? {
        try await player(world, app, "Metadata").stringKeyedDictionary?["xesam:title"]?.string
    }

    @Test("RemoveTrack of the only track over gdbus: earshot play stops (Stopped, empty Metadata) and exits 0, no trap")
    func removeOnlyTrack() async throws {
        let world = try await SessionWorld()
        let app = "removeOnly"
        let file = try SessionWorld.tone(.left, frequency: 310, duration: 60)
        let process = try await play(app, [file], in: world)
        let owner = try #require(try await world.client.nameOwner("org.mpris.MediaPlayer2." + app))
        try await sessionPoll("\(app) to play", timeout: 10) { try await self.player(world, app, "PlaybackStatus") == .string("Playing") }
        let statuses = Locked<[DBusValue]>([])
        let metadata = Locked<[DBusValue]>([])
        _ = try await world.client.subscribe(MatchRule(sender: owner, interface: StandardInterface.properties,
                                                       member: "PropertiesChanged", path: "/org/mpris/MediaPlayer2")) { message in
            guard let changed = (try? message.arguments())?.dropFirst().first?.stringKeyedDictionary else { return }
            if let status = changed["PlaybackStatus"] { statuses.withLock { $0.append(status) } }
            if let value = changed["Metadata"] { metadata.withLock { $0.append(value) } }
        }

        let removed = try await gdbus(world, app, "\(Self.trackList).RemoveTrack", ["/org/earshot/\(app)/Track/1"])
        #expect(removed.status == 0, "RemoveTrack failed: \(removed.stderr)")
        let status = try await process.wait(timeout: 8)
        #expect(status == 0, "earshot play exited with \(status) (132 is the trap): \(process.stderr)")
        #expect(statuses.value.last == .string("Stopped"), "PlaybackStatus went \(statuses.value)")
        #expect(metadata.value.last?.stringKeyedDictionary?.isEmpty == true, "Metadata went \(metadata.value)")
    }

    @Test("edits at the edges over gdbus: remove the current track, stale ids for GoTo, RemoveTrack and AddTrack, then empty the queue")
    func editsAtTheEdges() async throws {
        let world = try await SessionWorld()
        let app = "queueEdges"
        let files = try [320.0, 330, 340].map { try SessionWorld.tone(.left, frequency: $0, duration: 60) }
        let titles = files.map { URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent }
        let process = try await play(app, files, in: world)
        func track(_ n: Int) -> String { "/org/earshot/\(app)/Track/\(n)" }
        try await sessionPoll("\(app) to play", timeout: 10) { try await self.player(world, app, "PlaybackStatus") == .string("Playing") }
        #expect(try await title(world, app) == titles[0])

        // The current track goes: the next one takes its place and plays.
        #expect(try await gdbus(world, app, "\(Self.trackList).RemoveTrack", [track(1)]).status == 0)
        try await sessionPoll("the second track to be current") { try await self.title(world, app) == titles[1] }
        #expect(try await player(world, app, "PlaybackStatus") == .string("Playing"))

        // Ids that are gone: GoTo and RemoveTrack have no effect (as MPRIS says of ids
        // not in the list); AddTrack after one is InvalidArgs.
        #expect(try await gdbus(world, app, "\(Self.trackList).GoTo", [track(1)]).status == 0)
        #expect(try await gdbus(world, app, "\(Self.trackList).RemoveTrack", [track(1)]).status == 0)
        #expect(try await gdbus(world, app, "\(Self.trackList).GoTo", [track(99)]).status == 0)
        let added = try await gdbus(world, app, "\(Self.trackList).AddTrack",
                                    [URL(fileURLWithPath: files[0]).absoluteString, track(1), "true"])
        #expect(added.status != 0 && added.stderr.contains("InvalidArgs"), "\(added.stdout) \(added.stderr)")
        let tracks = try await player(world, app, "Tracks", interface: Self.trackList).elements?.compactMap(\.objectPath) ?? []
        #expect(tracks.map(\.rawValue) == [track(2), track(3)])
        #expect(try await title(world, app) == titles[1])

        // The last track, current: the new last one becomes current.
        #expect(try await gdbus(world, app, "\(Self.trackList).GoTo", [track(3)]).status == 0)
        try await sessionPoll("the third track to be current") { try await self.title(world, app) == titles[2] }
        #expect(try await gdbus(world, app, "\(Self.trackList).RemoveTrack", [track(3)]).status == 0)
        try await sessionPoll("the second track to be current again") { try await self.title(world, app) == titles[1] }
        #expect(process.isRunning, "\(process.stderr)")

        // Shuffle on with one track left, then remove it: the queue is empty and the process ends cleanly.
        #expect(try await gdbus(world, app, "org.freedesktop.DBus.Properties.Set",
                                ["org.mpris.MediaPlayer2.Player", "Shuffle", "<true>"]).status == 0)
        #expect(try await gdbus(world, app, "\(Self.trackList).RemoveTrack", [track(2)]).status == 0)
        let status = try await process.wait(timeout: 8)
        #expect(status == 0, "earshot play exited with \(status): \(process.stderr)")
    }

    @Test("earshot play keeps playing when the bus goes away, says so naming the bus, and exits 0 at the end")
    func playLosesBus() async throws {
        let world = try await SessionWorld()
        var bus: PrivateBus? = try PrivateBus()
        let address = bus!.address
        var environment = world.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        let file = try SessionWorld.tone(.left, frequency: 350, duration: 60)
        let process = try Child(Paths.earshot, ["play", "--name", "playLosesBus", file], environment: environment)
        try await process.waitForOutput("playing 1/1")
        try await Task.sleep(for: .milliseconds(500))
        withExtendedLifetime(bus) {}
        bus = nil
        try await sessionPoll("earshot play to say it lost the bus", timeout: 5) {
            process.stderr.contains("lost the connection to the session bus at \(address)")
        }
        #expect(process.stderr.contains("playing on"), "\(process.stderr)")
        try await Task.sleep(for: .seconds(1))
        #expect(process.isRunning, "it stopped with the bus: \(process.stderr)")
        #expect(!process.stdout.contains("played "), "it ended: \(process.stdout)")
        process.kill(SIGINT)
        #expect(try await process.wait(timeout: 10) == 0, "\(process.stderr)")
    }
}
