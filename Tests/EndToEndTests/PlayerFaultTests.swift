import DBus
import Foundation
import Testing
import TestSupport

/// Hostile and edge-case calls to real players over the bus: track-list edits that once
/// trapped `earshot play`, property values of the wrong shape, and strings that would
/// drive the terminal the player prints to.
@Suite("faults: players over the bus")
struct PlayerFaultTests {
    static let trackList = "org.mpris.MediaPlayer2.TrackList"

    /// Starts `earshot play --name APP FILES…` in `world` and waits until it is on MPRIS.
    func play(_ app: String, _ files: [String], in world: SessionWorld) async throws -> Child {
        let process = try Child(Paths.earshot, ["play", "--name", app] + files, environment: world.environment)
        try await sessionPoll("\(app) to own its MPRIS name", timeout: 8) {
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
        let file = try SessionWorld.tone(.left, frequency: 310, duration: 20)
        let process = try await play(app, [file], in: world)
        let owner = try #require(try await world.client.nameOwner("org.mpris.MediaPlayer2." + app))
        try await sessionPoll("\(app) to play") { try await self.player(world, app, "PlaybackStatus") == .string("Playing") }
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
        let files = try [320.0, 330, 340].map { try SessionWorld.tone(.left, frequency: $0, duration: 20) }
        let titles = files.map { URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent }
        let process = try await play(app, files, in: world)
        func track(_ n: Int) -> String { "/org/earshot/\(app)/Track/\(n)" }
        try await sessionPoll("\(app) to play") { try await self.player(world, app, "PlaybackStatus") == .string("Playing") }
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

    // MARK: Property types

    @Test("Set Rate to a variant inside a variant ('<<1.5>>') over gdbus is InvalidArgs and leaves Rate alone")
    func nestedVariantRate() async throws {
        let publisher = try await Publisher()
        let result = try await publisher.gdbus("Set", interface: StandardInterface.properties, [MPRIS.player, "Rate", "<<1.5>>"])
        #expect(result.status != 0, "the nested variant was accepted: \(result.stdout)")
        #expect(result.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs"), "\(result.stderr)")
        #expect(try await publisher.get("Rate") == .double(1))
        #expect(publisher.commands.isEmpty, "the player received \(publisher.commands)")
        // The same value in one variant is accepted.
        #expect(try await publisher.gdbus("Set", interface: StandardInterface.properties, [MPRIS.player, "Rate", "<1.5>"]).status == 0)
        #expect(try await publisher.get("Rate") == .double(1.5))
    }

    @Test("every settable property refuses nested variants and out-of-range numbers, changing nothing", arguments: PlayerFaultTests.badSets)
    func badSet(_ bad: BadCall) async throws {
        let publisher = try await Publisher(["--paused", "--length", "60"])
        let before = try await publisher.getAll()
        let error = await dbusErrorName {
            try await publisher.call(bad.method, bad.arguments(publisher), interface: bad.interface, path: bad.path)
        }
        #expect(error == bad.error)
        #expect(try await publisher.getAll() == before)
        #expect(publisher.commands.isEmpty, "a refused Set reached the player: \(publisher.commands)")
        try await publisher.expectResponsive()
    }

    static let badSets: [BadCall] = {
        let invalid = DBusError.Name.invalidArgs
        var all: [BadCall] = []
        for (property, value) in [("Rate", DBusValue.double(1.5)), ("Volume", .double(0.5)), ("LoopStatus", .string("Track")),
                                  ("Shuffle", .boolean(true))] {
            all.append(.set(property, .variant(value), invalid))
            all.append(.set(property, .variant(.variant(value)), invalid))
        }
        all += [
            .set("Rate", .double(-.infinity), invalid),
            .set("Rate", .double(-0.5), invalid),
            .set("Rate", .double(1e308), invalid),
            .set("Rate", .double(.leastNonzeroMagnitude), invalid),
            .set("Rate", .double(-.nan), invalid),
            .set("Volume", .double(-.infinity), invalid),
            .set("Volume", .double(-.nan), invalid),
            .set("Rate", .int64(1), invalid),
            .set("Volume", .int64(1), invalid),
            .set("Shuffle", .byte(1), invalid),
            .set("LoopStatus", .objectPath("/None"), invalid),
        ]
        return all
    }()

    // MARK: Terminal escapes

    @Test("an OpenUri string with terminal escapes is printed escaped by earshot publish")
    func openURIEscaped() async throws {
        let publisher = try await Publisher()
        try await publisher.call("OpenUri", [.string("file:///x\u{1B}[2J\u{1B}]0;owned\u{07}\u{9B}31m\u{202E}gpj.ogg\u{7F}")])
        try await publisher.waitForLine(#"open-uri file:///x\x1B[2J\x1B]0;owned\x07\u{9B}31m\u{202E}gpj.ogg\x7F"#)
        #expect(!publisher.process.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F...0x9F).contains($0.value) },
                "a control character reached the output: \(publisher.process.stdout.debugDescription)")
    }

    @Test("titles with terminal escapes are printed escaped by earshot publish")
    func titleEscaped() async throws {
        let publisher = try await Publisher(titles: ["One", "Two\u{1B}[31m\r\nThree"])
        try await publisher.call("Next")
        try await publisher.waitForLine(#"next -> 2/2 Two\x1B[31m\r\nThree"#)
        #expect(!publisher.process.stdout.contains("\u{1B}"))
    }
}
