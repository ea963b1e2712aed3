import DBus
import Foundation
import Testing
import TestSupport

/// “Last sound wins”: the app's last-sound-wins name (`org.earshot.MPRISTarget.<app>`)
/// follows the process that last produced sound, the app's MPRIS entry relays to it without
/// moving, and `earshot remote` reaches the arbiter's target.
@Suite("audio sessions across processes: the remote-control target", .tags(.sessions))
struct SessionTargetTests {
    @Test("two processes of one app: the last to sound owns the MPRIS name and gets the commands; killed, the name and the sound return to the other")
    func lastSoundWins() async throws {
        let world = try await SessionWorld(keepAwake: false)
        let capture = try await world.capture()
        let mpris = "org.mpris.MediaPlayer2.same"
        let stack = "org.earshot.MPRISTarget.same"

        let a = try world.play("same", side: .left)
        try await a.waitUntilPlaying()
        let aID = try await a.uniqueName()
        try await sessionPoll("A to own \(stack)") { try await world.client.nameOwner(stack) == aID }
        try await sessionPoll("A to hold \(mpris)") { try await world.client.nameOwner(mpris) != nil }
        let entry = try #require(try await world.client.nameOwner(mpris))
        #expect(try await world.client.processID(of: entry) == Int64(a.process.pid), "A holds the MPRIS entry")

        let b = try world.play("same", side: .right)
        try await b.waitUntilPlaying()
        let bID = try await b.uniqueName()
        try await a.waitForLine("session: interrupted (sessionActivated(\(bID)))")

        // The bus's queue is the most-recently-sounded stack.
        try await sessionPoll("B to own \(stack)") { try await world.client.nameOwner(stack) == bID }
        #expect(try await world.client.nameQueue(stack) == [bID, aID])
        #expect(try await world.client.nameOwner(mpris) == entry, "the MPRIS entry did not move")
        let status = try await world.status()
        #expect(status.target == bID, "\(status)")
        #expect(status.row(bID)?.state == ["target", "active", "playing"], "\(status)")
        #expect(status.row(aID)?.state == ["interrupted"], "\(status)")
        #expect(status.arbiterProcess == a.process.pid, "the first process hosts the arbiter: \(status)")
        try await settle(0.4)
        var audio = try await capture.snapshot()
        #expect(abs(audio.level(.right, audio.tail(0.3)) + 12) < 1, "B sounds")
        #expect(audio.peak(.left, audio.tail(0.3)) < -60, "A is silent while interrupted")

        // playerctl reaches B, the target (through the entry A holds): B pauses, and A stays silent.
        let pause = try await world.playerctl("-p", "same", "play-pause")
        #expect(pause.status == 0, "\(pause.stderr)")
        try await b.waitForSession("silent") { !$0.producingSound }
        try await settle(0.4)
        audio = try await capture.snapshot()
        #expect(audio.peak(.right, audio.tail(0.25)) < -60, "B paused by playerctl")
        #expect(audio.peak(.left, audio.tail(0.25)) < -60, "A stays silent: it is interrupted, not the one paused")
        #expect(try await a.session()?.interrupted == true)

        // earshot remote reaches the arbiter's target, B: it plays again.
        #expect(try await world.target() == bID)
        let resume = try await world.earshot("remote", "play-pause")
        #expect(resume.status == 0, "\(resume.stderr)")
        #expect(resume.output == "sent PlayPause to \(bID)")
        try await b.waitUntilPlaying()
        try await settle(0.4)
        audio = try await capture.snapshot()
        #expect(abs(audio.level(.right, audio.tail(0.25)) + 12) < 1, "B plays again")
        #expect(audio.peak(.left, audio.tail(0.25)) < -60, "A still silent")

        // B dies: the bus hands the name back to A; the arbiter ends A's interruption.
        let killed = ContinuousClock.now
        b.kill()
        try await sessionPoll("the name to return to A") { try await world.client.nameOwner(stack) == aID }
        #expect(try await world.client.nameQueue(stack) == [aID])
        #expect(try await world.client.nameOwner(mpris) == entry, "the MPRIS entry did not move")
        try await a.waitForLine("session: interruption ended, resuming")
        try await a.waitUntilPlaying()
        try await a.waitForSession("the target") { $0.target }
        try await world.waitForSessions("B to be gone") { sessions in !sessions.contains { $0.id == bID } }
        try await settle(0.5)
        audio = try await capture.snapshot()
        let afterKill = try audio.at(killed)
        #expect(audio.peak(.right, (afterKill + 0.2)..<audio.duration) < -60, "nothing sounds from B after it was killed")
        #expect(abs(audio.level(.left, audio.tail(0.3)) + 12) < 1, "A sounds again")

        // Now earshot remote pauses A.
        let pauseA = try await world.earshot("remote", "play-pause")
        #expect(pauseA.status == 0, "\(pauseA.stderr)")
        #expect(pauseA.output == "sent PlayPause to \(aID)")
        try await a.waitForSession("silent") { !$0.producingSound }
        try await settle(0.4)
        audio = try await capture.stop()
        #expect(audio.peak(.left, audio.tail(0.25)) < -60, "A paused by earshot remote")
        #expect(a.process.isRunning)
    }

    @Test("earshot remote without an arbiter on the bus fails with status 1 and a message")
    func remoteWithoutArbiter() async throws {
        let world = try await SessionWorld(keepAwake: false)
        let status = try await world.earshot("status")
        #expect(status.status == 0)
        #expect(status.output.hasPrefix("no arbiter"), "\(status.stdout)")
        let result = try await world.earshot("remote", "play-pause")
        #expect(result.status == 1, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.isEmpty, "\(result.stdout)")
        #expect(result.stderr.hasPrefix("earshot remote: "), "\(result.stderr)")
    }

    @Test("earshot remote with an arbiter but no session, or no eligible one, fails with status 1: no target")
    func remoteWithoutTarget() async throws {
        let world = try await SessionWorld()
        let daemon = try Child(Paths.earshot, ["daemon"], environment: world.environment)
        try await daemon.waitForOutput("serving org.earshot.AudioSession as ")
        let empty = try await world.earshot("remote", "play")
        #expect(empty.status == 1, "\(empty.stdout) \(empty.stderr)")
        #expect(empty.stderr.contains("no target"), "\(empty.stderr)")

        // Sound from a mixable session never makes a target.
        let ambience = try world.play("ambience", side: .left, category: "playback", mix: true)
        try await ambience.waitUntilPlaying()
        #expect(try await world.target() == "")
        let mixed = try await world.earshot("remote", "pause")
        #expect(mixed.status == 1, "\(mixed.stdout) \(mixed.stderr)")
        #expect(mixed.stderr.contains("no target"), "\(mixed.stderr)")
        #expect(try await ambience.session()?.producingSound == true, "the mixable player was not paused")
        #expect(daemon.isRunning, "\(daemon.stderr)")
    }

    @Test("earshot remote with an unknown command or bad arguments exits 64", arguments: [
        ["frobnicate"], ["seek"], ["seek", "soon"], ["play", "5"], ["PlayPause"],
    ])
    func remoteUsage(arguments: [String]) async throws {
        let bus = try PrivateBus()
        let result = try await run(Paths.earshot, ["remote"] + arguments, environment: bus.environment, timeout: 10)
        #expect(result.status == 64, "\(arguments): \(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("Usage: earshot remote"), "\(result.stderr)")
        #expect(!result.stdout.contains("sent"), "\(result.stdout)")
    }

    /// A paused player of a 20 s tone (keep it: it is killed when released), its unique
    /// name, and its MPRIS Position reader.
    private func pausedPlayer(_ world: SessionWorld) async throws -> (SessionPlayer, String, @Sendable () async throws -> Double) {
        let music = try world.play("music", side: .left)
        try await music.waitUntilPlaying()
        let id = try await music.uniqueName()
        let client = world.client
        let position: @Sendable () async throws -> Double = {
            let reply = try await client.call(
                destination: "org.mpris.MediaPlayer2.music", path: "/org/mpris/MediaPlayer2",
                interface: StandardInterface.properties, method: "Get",
                [.string("org.mpris.MediaPlayer2.Player"), .string("Position")])
            return Double(try #require(reply.first?.int64)) / 1e6
        }
        // Paused, so that the position stands still while earshot remote starts.
        let pause = try await world.earshot("remote", "pause")
        #expect(pause.output == "sent Pause to \(id)", "\(pause.stdout) \(pause.stderr)")
        try await music.waitForSession("silent") { !$0.producingSound }
        return (music, id, position)
    }

    @Test("earshot remote seek +10 moves the target's position forward by 10 s")
    func remoteSeekForward() async throws {
        let world = try await SessionWorld()
        let (music, id, position) = try await pausedPlayer(world)
        let before = try await position()
        let result = try await world.earshot("remote", "seek", "+10")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.output == "sent Seek to \(id)")
        let after = try await position()
        #expect(abs(after - before - 10) < 0.1, "position \(before) s, after seek +10: \(after) s")
        #expect(music.process.isRunning)
    }

    /// `earshot remote --help` and its own error message give `seek -5` as the example.
    @Test("earshot remote seek -5, as its help writes it, moves the target's position back by 5 s")
    func remoteSeekBack() async throws {
        let world = try await SessionWorld()
        let (music, id, position) = try await pausedPlayer(world)
        let forward = try await world.earshot("remote", "seek", "+10")
        #expect(forward.status == 0, "\(forward.stderr)")
        let before = try await position()
        let result = try await world.earshot("remote", "seek", "-5")
        #expect(result.status == 0, "earshot remote seek -5: status \(result.status): \(result.stderr)")
        #expect(result.output == "sent Seek to \(id)")
        let after = try await position()
        #expect(abs(after - before + 5) < 0.1, "position \(before) s, after seek -5: \(after) s")
        #expect(music.process.isRunning)
    }
}
