import DBus
import Foundation
import Testing
import TestSupport

/// The implicit session across processes: an app that never calls its audio session
/// (`earshot play --implicit-session`) has one anyway, soloAmbient, activated by its first
/// play; another process's playback session interrupts it, and its player hears the
/// interruption begin and end, falls silent and resumes.
@Suite("audio sessions across processes: the implicit session", .tags(.sessions))
struct SessionImplicitTests {
    @Test("an app that never calls its session joins it by itself, soloAmbient; earshot play interrupts it and it resumes")
    func implicitSessionIsInterruptedAndResumes() async throws {
        let world = try await SessionWorld(keepAwake: false)
        let capture = try await world.capture()
        let app = try world.play("earshot", side: .left, implicitSession: true)
        try await app.waitUntilPlaying()
        try await app.waitForSession("active in soloAmbient") { $0.active && $0.category == "soloAmbient" && !$0.eligible }
        try await settle(0.6)

        let game = try world.play("game", side: .right, duration: 3, category: "playback")
        try await app.waitForLine("player: interruption began")
        try await app.waitForSession("interrupted") { $0.interrupted && !$0.active }
        #expect(try await game.process.wait(timeout: 8) == 0, "earshot play exits 0 at the end of its queue: \(game.process.stderr)")
        try await app.waitForLine("player: interruption ended (shouldResume: true)")
        try await app.waitUntilPlaying()
        try await settle(0.8)
        let audio = try await capture.stop()

        let heard = audio.activeRegions(threshold: -40, minGap: 0.05, channel: SessionSide.right.channel)
        try #require(heard.count == 1, "the game sounded once: \(heard)")
        let g = heard[0]
        #expect(audio.peak(.left, (g.start + 0.1)..<g.end) < -60, "the implicit-session app is silent while interrupted")
        let resumed = try #require(audio.onset(after: g.end, threshold: -40, channel: SessionSide.left.channel),
                                   "the implicit-session app never sounded again")
        #expect(resumed - g.end < 1.0, "it resumed \(resumed - g.end) s after the game ended")
        #expect(app.process.isRunning)
    }
}
