import DBus
import Foundation
import Testing
import TestSupport

/// Interruptions and ducking between two `earshot play` processes, heard in the sink:
/// the process on the left channel is measured independently of the one on the right.
@Suite("audio sessions across processes: interruptions and ducking", .tags(.sessions))
struct SessionInterruptionTests {
    @Test("a second playback process interrupts the first, which falls silent and resumes when the second's queue ends")
    func interruptAndResume() async throws {
        let world = try await SessionWorld(keepAwake: false)
        let capture = try await world.capture()
        let podcasts = try world.play("podcasts", side: .left)
        try await podcasts.waitUntilPlaying()
        let podcastsID = try await podcasts.uniqueName()
        try await settle(0.6)

        let game = try world.play("game", side: .right, duration: 3, category: "playback")
        let gameID = try await game.uniqueName()
        try await podcasts.waitForLine("session: interrupted (sessionActivated(\(gameID)))")
        try await game.waitUntilPlaying()
        try await podcasts.waitForSession("interrupted") { $0.interrupted && !$0.producingSound && !$0.active }
        #expect(try await world.target() == gameID, "the last to sound is the target")

        // The game's queue ends: it deactivates with notifyOthersOnDeactivation.
        #expect(try await game.process.wait(timeout: 8) == 0, "earshot play exits 0 at the end of its queue: \(game.process.stderr)")
        #expect(game.lines.contains { $0.hasPrefix("finished: ") }, "\(game.lines)")
        #expect(game.lines.last?.hasPrefix("played 1 item in ") == true, "\(game.lines)")
        try await podcasts.waitForLine("session: interruption ended, resuming")
        try await podcasts.waitUntilPlaying()
        try await podcasts.waitForSession("the target again") { $0.target && $0.active && !$0.interrupted }
        try await settle(1.0)
        let audio = try await capture.stop()

        // What the sink heard: the game's 3 s tone on the right, the podcast on the left
        // before and after it, and nothing from the podcast while the game played.
        let game3s = audio.activeRegions(threshold: -40, minGap: 0.05, channel: SessionSide.right.channel)
        try #require(game3s.count == 1, "the game sounded once, for 3 s: \(game3s)")
        let g = game3s[0]
        #expect(abs(g.duration - 3) < 0.1, "the game's tone lasted \(g.duration) s")
        #expect(abs(audio.level(.right, try g.inner(trimming: 0.2)) + 12) < 1, "the game's level")
        #expect(abs(audio.level(.left, max(0, g.start - 0.6)..<(g.start - 0.1)) + 12) < 1, "the podcast played before the game")
        let overlapEnd = audio.activeRegions(threshold: -60, minGap: 0, channel: SessionSide.left.channel,
                                             range: g.start..<g.end).last?.end ?? g.start
        #expect(overlapEnd - g.start < 0.1, "the podcast still sounded \(overlapEnd - g.start) s into the game's sound")
        #expect(audio.peak(.left, (g.start + 0.1)..<g.end) < -60, "the podcast must be silent while interrupted")
        let resumed = try #require(audio.onset(after: g.end, threshold: -40, channel: SessionSide.left.channel),
                                   "the podcast never sounded again after the game")
        sessionReport(String(format: "game %.3f–%.3f s; podcast overlap %.3f s; resumed %.3f s after", g.start, g.end,
                             overlapEnd - g.start, resumed - g.end))
        #expect(resumed - g.end < 1.0, "the podcast resumed \(resumed - g.end) s after the game ended")
        #expect(resumed - g.end > -0.01, "the podcast sounded before the game ended")
        #expect(abs(audio.level(.left, (resumed + 0.1)..<(audio.duration - 0.05)) + 12) < 1, "the podcast's level after resuming")
        #expect(audio.longestSilence(.left, in: (resumed + 0.01)..<(audio.duration - 0.05)) < 0.05,
                "the podcast plays on without gaps after resuming")
        if let f = audio.dominantFrequency(channel: SessionSide.left.channel, range: (resumed + 0.1)..<(audio.duration - 0.05)) {
            #expect(abs(f - 300) < 2, "the left channel after resuming is the podcast's 300 Hz tone, not \(f) Hz")
        }

        // What the podcast printed, in order.
        let events = podcasts.sessionLines.filter { $0.hasPrefix("session: interrupt") }
        #expect(events == ["session: interrupted (sessionActivated(\(gameID)))", "session: interruption ended, resuming"],
                "\(podcasts.lines)")
        #expect(!game.sessionLines.contains { $0.hasPrefix("session: interrupted") }, "\(game.lines)")
        #expect(podcasts.process.isRunning)
        #expect(podcastsID != gameID)
    }

    @Test("a process with --duck lowers the other by 10.46 dB while it plays, without interrupting it")
    func duckOthers() async throws {
        let world = try await SessionWorld(keepAwake: false)
        let capture = try await world.capture()
        let podcasts = try world.play("podcasts", side: .left)
        try await podcasts.waitUntilPlaying()
        try await settle(0.8)

        let navigation = try world.play("navigation", side: .right, duration: 3, category: "playback", duck: true)
        try await navigation.waitUntilPlaying()
        try await podcasts.waitForSession("ducked") { $0.ducked && $0.producingSound && !$0.interrupted }
        let status = try await world.status()
        let podcastsID = try await podcasts.uniqueName()
        #expect(status.row(podcastsID)?.state.contains("ducked") == true, "\(status)")
        #expect(try await world.target() == podcastsID, "a ducking session is mixable and never the target")

        #expect(try await navigation.process.wait(timeout: 8) == 0, "\(navigation.process.stderr)")
        try await podcasts.waitForSession("no longer ducked") { !$0.ducked && $0.producingSound }
        try await settle(1.0)
        let audio = try await capture.stop()

        let prompts = audio.activeRegions(threshold: -40, minGap: 0.05, channel: SessionSide.right.channel)
        try #require(prompts.count == 1, "the ducking process sounded once: \(prompts)")
        let p = prompts[0]
        let before = audio.level(.left, max(0, p.start - 0.7)..<(p.start - 0.1))
        // The duck gain ramps over 0.2 s; measure after it.
        let during = audio.level(.left, try p.inner(head: 0.4, tail: 0.1))
        let after = audio.level(.left, (p.end + 0.6)..<(audio.duration - 0.05))
        sessionReport(String(format: "before %.2f, during %.2f (%.2f dB), after %.2f dBFS", before, during, during - before, after))
        #expect(abs(before + 12) < 1, "the podcast before ducking: \(before) dBFS")
        #expect(abs((during - before) - sessionDuckDecibels) < 1,
                "ducked by \(during - before) dB, not \(sessionDuckDecibels) dB (before \(before), during \(during))")
        #expect(abs(after - before) < 0.5, "restored after the ducking process ended: \(after) vs \(before) dBFS")
        let onset = try #require(audio.onset(threshold: -40, channel: SessionSide.left.channel))
        #expect(audio.longestSilence(.left, in: max(onset + 0.01, p.start - 0.7)..<(audio.duration - 0.05)) < 0.05,
                "the ducked podcast never stopped")
        #expect(abs(audio.level(.right, try p.inner(trimming: 0.2)) + 12) < 1, "the ducking process is not ducked itself")
        #expect(!podcasts.sessionLines.contains { $0.hasPrefix("session: interrupted") }, "\(podcasts.lines)")
    }

    /// The user presses play on an interrupted player right after the interruption: it
    /// activates (interrupting the other) and sounds, so the arbiter must see it producing
    /// sound and make it the target — however short its silence was.
    @Test("a player resumed by the user right after its interruption is playing and the target, for the arbiter too")
    func quickResumeByUser() async throws {
        let world = try await SessionWorld(keepAwake: false)
        let capture = try await world.capture()
        let podcasts = try world.play("podcasts", side: .left)
        try await podcasts.waitUntilPlaying()
        let podcastsID = try await podcasts.uniqueName()
        let game = try world.play("game", side: .right)
        try await podcasts.waitForLine(timeout: 8, "an interruption") { $0.hasPrefix("session: interrupted (") }
        // At once, as a user pressing the media key would (well within the engine's
        // 0.25 s silence detection).
        _ = try await world.client.call(destination: "org.mpris.MediaPlayer2.podcasts", path: "/org/mpris/MediaPlayer2",
                                        interface: "org.mpris.MediaPlayer2.Player", method: "Play")
        let gameID = try await game.uniqueName()
        try await game.waitForLine("session: interrupted (sessionActivated(\(podcastsID)))")
        try await settle(0.5)
        var audio = try await capture.snapshot()
        let status = try? await podcasts.playbackStatus()
        let heard = audio.activeRegions(threshold: -40, minGap: 0.05, channel: SessionSide.left.channel, range: 0..<audio.duration)
        try #require(abs(audio.level(.left, audio.tail(0.3)) + 12) < 1, """
            the podcast plays again; heard at \(heard.map { String(format: "%.3f-%.3f", $0.start, $0.end) }) of \(audio.duration) s; \
            its status \(status ?? "unknown"); it printed \(podcasts.lines)
            """)
        #expect(audio.peak(.right, audio.tail(0.3)) < -60, "the game is silent, interrupted")

        let sessions = await world.sessionsIfAny()
        let mine = sessions.first { $0.id == podcastsID }
        #expect(mine?.active == true && mine?.producingSound == true,
                "the arbiter must know the podcast produces sound: \(sessions)")
        #expect(try await world.target() == podcastsID, "the podcast sounded last: it is the target; \(sessions)")
        #expect(sessions.first { $0.id == gameID }?.interrupted == true)
        let remote = try await world.earshot("remote", "pause")
        #expect(remote.output == "sent Pause to \(podcastsID)", "earshot remote must reach the player that sounds: \(remote.stdout) \(remote.stderr)")
        try await settle(0.5)
        audio = try await capture.stop()
        #expect(audio.peak(.left, audio.tail(0.2)) < -60, "earshot remote pause paused the podcast")
    }

    /// DESIGN (“The remote-control target”): “when a new non-mixable session interrupts
    /// the old one, the old one stops being Playing, which is what GNOME and KDE follow.”
    @Test("an interrupted player stops being Playing on MPRIS, and is Playing again when it resumes")
    func playbackStatusFollowsInterruption() async throws {
        let world = try await SessionWorld()
        let podcasts = try world.play("podcasts", side: .left)
        try await podcasts.waitUntilPlaying()
        #expect(try await podcasts.playbackStatus() == "Playing")

        let game = try world.play("game", side: .right, duration: 3)
        try await podcasts.waitForLine(timeout: 8, "an interruption") { $0.hasPrefix("session: interrupted (") }
        try await settle(0.3)
        let whileInterrupted = try await podcasts.playbackStatus()
        let playerctl = try await world.playerctl("-p", "podcasts", "status")
        #expect(whileInterrupted == "Paused", "PlaybackStatus while interrupted and silent: \(whileInterrupted ?? "nil")")
        #expect(playerctl.output == "Paused", "playerctl status while interrupted: \(playerctl.output)")

        _ = try await game.process.wait(timeout: 8)
        try await podcasts.waitForLine("session: interruption ended, resuming")
        try await podcasts.waitUntilPlaying()
        #expect(try await podcasts.playbackStatus() == "Playing")
    }
}
