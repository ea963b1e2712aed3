import DBus
import Foundation
import Testing
import TestSupport

/// What other clients on the bus send to `earshot play` must not cost the listener what
/// they hear: an `OpenUri`, `AddTrack` or `GoTo` to an item that cannot be opened leaves
/// the player on the item it played, where it was, and the call answers with a named
/// error; `earshot play` never exits because of such an item. And MPRIS `Stop` is MPRIS's:
/// Stopped, at 0, and `Play` starts the item again from its start.
@Suite("Session: remote moves and Stop against earshot play", .serialized, .timeLimit(.minutes(2)), .tags(.sessions))
struct SessionRemoteMoveTests {
    /// A port on loopback where nothing listens: connecting is refused at once.
    static let unreachable = "http://127.0.0.1:9/x.mp3"
    static let objectPath: ObjectPath = "/org/mpris/MediaPlayer2"

    /// `earshot play` of one 20 s tone (`file`), playing, past its first second, in a world
    /// of its own.
    private func playing(_ app: String) async throws -> (world: SessionWorld, player: SessionPlayer, file: String) {
        let world = try await SessionWorld()
        let player = try world.play(app, side: .left, duration: 20)
        try await player.waitUntilPlaying()
        try await sessionPoll("\(app) past 1 s", timeout: 8) { (try? await position(world, app)) ?? 0 > 1 }
        return (world, player, try SessionWorld.tone(.left, frequency: 300, duration: 20))
    }

    private func position(_ world: SessionWorld, _ app: String) async throws -> Double {
        let reply = try await world.client.call(
            destination: "org.mpris.MediaPlayer2." + app, path: Self.objectPath, interface: StandardInterface.properties,
            method: "Get", [.string("org.mpris.MediaPlayer2.Player"), .string("Position")])
        guard case .int64(let microseconds)? = reply.first?.unwrapped else { throw TestFailure("Position was \(reply)") }
        return Double(microseconds) / 1e6
    }

    private func call(_ world: SessionWorld, _ app: String, _ interface: String, _ method: String, _ arguments: [DBusValue]) async throws {
        _ = try await world.client.call(destination: "org.mpris.MediaPlayer2." + app, path: Self.objectPath,
                                        interface: interface, method: method, arguments)
    }

    private func tracks(_ world: SessionWorld, _ app: String) async throws -> [ObjectPath] {
        let reply = try await world.client.call(
            destination: "org.mpris.MediaPlayer2." + app, path: Self.objectPath, interface: StandardInterface.properties,
            method: "Get", [.string("org.mpris.MediaPlayer2.TrackList"), .string("Tracks")])
        return (reply.first?.unwrapped.elements ?? []).compactMap { value in
            if case .objectPath(let path) = value { return path } else { return nil }
        }
    }

    /// The player is still on its own tone, Playing, from about where it was.
    private func expectStillPlaying(_ world: SessionWorld, _ app: String, _ player: SessionPlayer, from before: Double,
                                    file: String, after what: String) async throws {
        try await sessionPoll("\(app) Playing its tone again after \(what)", timeout: 6) {
            try await player.playbackStatus() == "Playing"
        }
        let url = try await world.playerctl("-p", app, "metadata", "xesam:url").output
        #expect(url == URL(fileURLWithPath: file).absoluteString, "after \(what) the current item is \(url)")
        // Back where it was: not at the start of the tone again, not skipped ahead.
        let now = try await position(world, app)
        #expect(now >= before - 0.5 && now < before + 4, "after \(what) the position is \(now) s; it was \(before) s")
        #expect(player.process.isRunning, "earshot play exited after \(what): \(player.process.stdout) \(player.process.stderr)")
    }

    @Test("OpenUri of an unreachable URL answers a named error and the tone plays on from where it was")
    func openUnreachable() async throws {
        let app = "remote-open"
        let (world, player, file) = try await playing(app)
        defer { player.kill() }
        let before = try await position(world, app)
        let error = await dbusErrorName { try await call(world, app, "org.mpris.MediaPlayer2.Player", "OpenUri", [.string(Self.unreachable)]) }
        #expect(error == "org.earshot.RemoteCommand.NoSuchContent")
        try await expectStillPlaying(world, app, player, from: before, file: file, after: "OpenUri \(Self.unreachable)")
        #expect(try await tracks(world, app).count == 1, "the failed URL stayed in the queue")
        #expect(player.process.stderr.contains("127.0.0.1:9"), "the failure was not reported: \(player.process.stderr)")
    }

    @Test("AddTrack made current, and GoTo, to an unreachable URL: the tone plays on; the queue keeps only what GoTo named")
    func addTrackAndGoToUnreachable() async throws {
        let app = "remote-add"
        let (world, player, file) = try await playing(app)
        defer { player.kill() }
        let list = "org.mpris.MediaPlayer2.TrackList"
        let own = try #require(try await tracks(world, app).first)

        var before = try await position(world, app)
        let added = await dbusErrorName {
            try await call(world, app, list, "AddTrack", [.string(Self.unreachable), .objectPath(own), .boolean(true)])
        }
        #expect(added == "org.earshot.RemoteCommand.NoSuchContent")
        try await expectStillPlaying(world, app, player, from: before, file: file, after: "AddTrack(set as current)")
        #expect(try await tracks(world, app) == [own])

        // Added without being made current, it is accepted (nothing is opened yet); going
        // to it fails, and the queue goes back, keeping the item (the client put it there).
        try await call(world, app, list, "AddTrack", [.string(Self.unreachable), .objectPath(own), .boolean(false)])
        let queued = try await tracks(world, app)
        #expect(queued.count == 2)
        let stream = try #require(queued.last)
        before = try await position(world, app)
        let went = await dbusErrorName { try await call(world, app, list, "GoTo", [.objectPath(stream)]) }
        #expect(went == "org.earshot.RemoteCommand.NoSuchContent")
        try await expectStillPlaying(world, app, player, from: before, file: file, after: "GoTo")
        #expect(try await tracks(world, app) == queued)
    }

    @Test("an unreachable URL added at the end fails when reached, and earshot play still exits 0")
    func failedAddedItemAtTheEnd() async throws {
        let world = try await SessionWorld()
        let app = "remote-end"
        let player = try world.play(app, side: .left, duration: 1.5)
        defer { player.kill() }
        try await player.waitUntilPlaying()
        let own = try #require(try await tracks(world, app).first)
        try await call(world, app, "org.mpris.MediaPlayer2.TrackList", "AddTrack",
                       [.string(Self.unreachable), .objectPath(own), .boolean(false)])
        let status = try await player.process.wait(timeout: 15)
        #expect(status == 0, "exit status \(status); stderr: \(player.process.stderr)")
        #expect(player.process.stderr.contains("127.0.0.1:9"), "the failure was not reported: \(player.process.stderr)")
        #expect(player.lines.contains { $0.hasPrefix("played 1 item in ") }, "\(player.lines)")
    }

    @Test("MPRIS Stop: Stopped at 0; Play starts the item from its start")
    func stopIsStop() async throws {
        let app = "remote-stop"
        let (world, player, _) = try await playing(app)
        defer { player.kill() }
        #expect(try await world.playerctl("-p", app, "stop").status == 0)
        try await sessionPoll("Stopped", timeout: 5) { try await player.playbackStatus() == "Stopped" }
        #expect(try await position(world, app) == 0)
        // Still Stopped and at 0 a moment later (not a pause that reads back its place).
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await player.playbackStatus() == "Stopped")
        #expect(try await position(world, app) == 0)
        #expect(try await world.playerctl("-p", app, "play").status == 0)
        try await sessionPoll("Playing after Play", timeout: 5) { try await player.playbackStatus() == "Playing" }
        let restarted = try await position(world, app)
        #expect(restarted < 1, "Play after Stop went on from \(restarted) s, not from the start")
        // And it plays on from there.
        try await sessionPoll("the position moving after Play", timeout: 5) { (try? await position(world, app)) ?? 0 > 0.3 }
    }
}
