import Foundation
import Testing
import TestSupport

/// iOS audio code ported by its import block alone (`Ports/main.swift`, the seeds' listings
/// over EarshotCompat), run as an app runs it: its own process, on a private bus and sound
/// server, beside other processes. What iOS would do is what is asserted (issue 34, item 3).
@Suite("audio sessions across processes: iOS code ported by its import block", .tags(.sessions))
struct SessionIOSPortTests {
    /// The MPRIS name a port's process gets: its process name, as the bus allows it.
    static let mprisName = "earshot_ios_ports"

    func port(_ mode: String, in world: SessionWorld, side: SessionSide, duration: Double) throws -> SessionPlayer {
        let file = try SessionWorld.tone(side, frequency: side == .left ? 300 : 500, duration: duration)
        return SessionPlayer(app: "earshot-ios-ports", side: side,
                             process: try Child(Paths.iosPorts, [mode, file], environment: world.environment), world: world)
    }

    @Test("an iOS app's remote commands and now-playing info reach MPRIS with no publishing call; its delegate hears the end once it is heard")
    func nowPlayingWithoutPublishing() async throws {
        let world = try await SessionWorld()
        let capture = try await world.capture()
        let app = try port("nowplaying", in: world, side: .left, duration: 3)
        try await app.waitForLine("playing")
        // On iOS the info shows and the commands arrive with no call of the app's: here the
        // process's player appears on the bus, named after it, with the title it set.
        try await sessionPoll("the app on MPRIS with its title", timeout: 5) {
            let title = try? await world.playerctl("-p", SessionIOSPortTests.mprisName, "metadata", "xesam:title")
            return title?.status == 0 && title?.output.trimmingCharacters(in: .whitespacesAndNewlines) == "TidBITS News"
        }
        #expect(try await world.playerctl("-p", SessionIOSPortTests.mprisName, "metadata", "xesam:artist")
                    .output.trimmingCharacters(in: .whitespacesAndNewlines) == "Matt Neuburg")
        // Its handlers answer the remote commands. The pause comes once the sound is heard:
        // at PulseAudio's defaults the harness's idle null sink may take the stream's first
        // block a second or more after the player says it plays (a pause before that leaves
        // currentTime at 0 and no gap to hear).
        try await sessionPoll("the sound to be heard for 0.3 s", timeout: 5) {
            let audio = try await capture.snapshot(drain: 0.1)
            let heard = audio.activeRegions(threshold: -40, minGap: 0.05, channel: SessionSide.left.channel)
            return (heard.last?.duration ?? 0) >= 0.3
        }
        #expect(try await world.playerctl("-p", SessionIOSPortTests.mprisName, "pause").status == 0)
        try await app.waitForLine("command: pause")
        try await settle(0.3)
        #expect(try await world.playerctl("-p", SessionIOSPortTests.mprisName, "play").status == 0)
        try await app.waitForLine("command: play")
        let finished = try await app.waitForLine("finished: true", timeout: 10)
        try await settle(0.2)
        let audio = try await capture.stop()
        let heard = audio.activeRegions(threshold: -40, minGap: 0.05, channel: SessionSide.left.channel)
        try #require(heard.count == 2, "the sound, paused once: \(heard)")
        #expect(abs(heard[0].duration + heard[1].duration - 3) < 0.1, "the whole file was heard: \(heard)")
        // `audioPlayerDidFinishPlaying` comes once the last of the sound has been heard (the
        // line is read within 10 ms of its print).
        let end = heard[1].end
        let at = try audio.at(finished)
        #expect(at >= end - 0.01 && at < end + 0.5, "the delegate heard the end at \(at) s; the sound ended at \(end) s")
    }

    @Test("another app's playback interrupts the port: the notification says began (1), then ended (0) with shouldResume, and it plays again")
    func interruptionNotifications() async throws {
        let world = try await SessionWorld()
        let capture = try await world.capture()
        let app = try port("nowplaying", in: world, side: .left, duration: 12)
        try await app.waitForLine("playing")
        try await app.waitUntilPlaying()
        try await settle(0.5)
        let interrupter = try port("interrupter", in: world, side: .right, duration: 1.5)
        try await app.waitForLine("interruption: type 1")
        try await interrupter.waitForLine("finished: true", timeout: 8)
        #expect(try await interrupter.process.wait(timeout: 5) == 0, "the interrupter exits 0: \(interrupter.process.stderr)")
        // AVAudioSession.InterruptionOptions.shouldResume is 1.
        try await app.waitForLine("interruption: type 0, options 1")
        try await settle(0.8)
        let audio = try await capture.stop()
        let interrupting = audio.activeRegions(threshold: -40, minGap: 0.05, channel: SessionSide.right.channel)
        try #require(interrupting.count == 1, "the interrupter sounded once: \(interrupting)")
        let i = interrupting[0]
        #expect(audio.peak(.left, (i.start + 0.1)..<i.end) < -60, "the port is silent while interrupted")
        let resumed = try #require(audio.onset(after: i.end, threshold: -40, channel: SessionSide.left.channel),
                                   "the port never sounded again")
        #expect(resumed - i.end < 1.0, "it resumed \(resumed - i.end) s after the interrupter ended")
        app.kill()
    }
}
