import DBus
import Foundation
import Testing
import TestSupport

/// Other apps' players are untrusted: one holds `Pause` forever, one answers it with an
/// error, one leaves the bus when told to pause, one floods `PropertiesChanged` at 1,000 a
/// second. The arbiter waits on none of them: mpv beside them is paused and resumed as
/// usual, sessions are interrupted as usual, and the arbiter answers at once throughout.
@Suite("Other apps: hostile MPRIS players", .tags(.sessions))
struct SessionHostilePlayerTests {
    /// The arbiter's `Target` round trip, in seconds: how long it takes to answer.
    static func arbiterRoundTrip(_ world: SessionWorld) async throws -> Double {
        let start = ContinuousClock.now
        _ = try await world.target()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds)
    }

    @Test("with players that hold, refuse or flee Pause, and one that floods, mpv is paused and resumed and nothing waits")
    func hostilePlayersDelayNothing() async throws {
        let world = try await SessionWorld()
        let daemon = try await world.daemon()
        let fakes = [
            try await FakePlayer(world, .holdsPause), try await FakePlayer(world, .failsPause),
            try await FakePlayer(world, .vanishesOnPause), try await FakePlayer(world, .floods),
        ]
        let mpv = try await world.mpv()
        // Long enough to still play when "other" starts below, after the pauses and the 20
        // round trips: with 3 s, a loaded machine (a busy loop beside the suites) let it end
        // first, and no interruption came.
        let music = try world.play("music", side: .left, duration: 8)
        let paused = try await mpv.waitFor("Paused", timeout: 5)
        // Every fake was told to pause: the held and fled calls did not stop the others.
        for fake in fakes {
            try await sessionPoll("\(fake.behaviour) to be told to pause") { fake.pauses.value >= 1 }
        }
        // The arbiter answers while the held call is open and the flood runs.
        var slowest = 0.0
        for _ in 0..<20 { slowest = max(slowest, try await Self.arbiterRoundTrip(world)) }
        sessionReport("mpv Paused after \(paused); slowest arbiter round trip in the flood \(slowest * 1000) ms")
        // The arbiter waits at most 2 s for another app's player: an answer slower than
        // half of that would mean it waited on one.
        #expect(slowest < 1.0, "the arbiter took \(slowest) s to answer")
        // A second session interrupts the first as usual.
        let other = try world.play("other", side: .right, duration: 20)
        try await music.waitForLine("an interruption") { $0.hasPrefix("session: interrupted") }
        other.kill()
        _ = try await music.process.wait(timeout: 20)
        try await mpv.waitFor("Playing", timeout: 5)
        #expect(daemon.isRunning, "the daemon died: \(daemon.stderr)")
        daemon.kill(SIGKILL)
    }

    /// `player` is told to pause once `music` (an `earshot play`) is active, and to play again
    /// when it has ended; `music` is never interrupted by it.
    static func expectPausedForTheSession(_ player: FakePlayer, _ music: SessionPlayer) async throws {
        try await sessionPoll("the player to be told to pause") { player.pauses.value == 1 }
        #expect(try await music.process.wait(timeout: 20) == 0, "\(music.process.stderr)")
        try await sessionPoll("the player to be told to play again") { player.plays.value == 1 }
        #expect(!music.sessionLines.contains { $0.hasPrefix("session: interrupted") }, "\(music.lines)")
    }

    /// The arbiter learns a new player's status by asking it; a session that activates
    /// before the answer comes found the player already playing, and pauses it as if the
    /// answer had come first. Before the arbiter ordered the late answer against the
    /// activation, the player counted as starting to play after it, and interrupted the
    /// session (CI saw this with mpv on a loaded machine: an `--others observe` session
    /// interrupted, a session that did not pause mpv).
    @Test("a player that answers the arbiter late, after earshot play activated, is paused by it and played again at its end; earshot play is never interrupted")
    ///
    /// The case needs `earshot play` to activate within ``FakePlayer/lateAnswerLimit`` of the
    /// arbiter's question. On a loaded machine its start can take longer: the player then
    /// answers at its limit, before the activation, and the run does not test the late
    /// answer. Such a run is made again, three runs in all.
    func lateAnswerCountsFromTheQuestion() async throws {
        for run in 1...3 {
            let world = try await SessionWorld()
            let daemon = try await world.daemon()
            let slow = try await FakePlayer(world, .answersLate)
            let music = try world.play("music", side: .left, duration: 3)
            try await music.waitForSession("active") { $0.active }
            slow.answer()
            try await Self.expectPausedForTheSession(slow, music)
            daemon.kill(SIGKILL)
            if slow.answeredWhenTold.value { return }
            sessionReport("run \(run): earshot play took longer than \(FakePlayer.lateAnswerLimit) s to activate; the late answer was not tested")
        }
        Issue.record("in 3 runs, earshot play took longer than \(FakePlayer.lateAnswerLimit) s to activate: the late answer was not tested")
    }

    /// A player that never answers the arbiter's `GetAll` (its first read of the status held
    /// past the arbiter's 2 s wait): the arbiter answers others meanwhile, leaves the player
    /// out (its status unknown), and takes it in when it says Playing by signal: a session
    /// that activates then pauses it, and plays it again at its end.
    @Test("a player that never answers GetAll delays nothing, is left out until it signals Playing, and is paused and played again by a session after that")
    func unansweredPlayerWaitsForItsSignal() async throws {
        let world = try await SessionWorld()
        let daemon = try await world.daemon()
        // Before the player exists: the arbiter may ask it before its init returns here.
        let started = ContinuousClock.now
        let mute = try await FakePlayer(world, .answersNever)
        let owner = try #require(try await world.client.nameOwner(mute.busName))
        @Sendable func listedPlaying() async throws -> Bool {
            try await world.others().contains { $0["player"]?.string == owner && $0["status"]?.string == "Playing" }
        }
        // While the arbiter waits for the player's answer.
        var slowest = 0.0
        for _ in 0..<20 {
            slowest = max(slowest, try await Self.arbiterRoundTrip(world))
            try await Task.sleep(for: .milliseconds(50))
        }
        // Waiting on the player would hold an answer up to the arbiter's 2 s wait; half of
        // that is the bound, as above (half a second is too tight on a machine loaded by the
        // parallel session suites).
        #expect(slowest < 1.0, "the arbiter took \(slowest) s to answer while a player's GetAll was unanswered")
        // Around when the arbiter gives up on the answer (2 s after it asked), before the
        // player's hold ends (3 s after the arbiter asked, which was after `started`): the
        // player is not counted as playing. (A check that ends past the hold says nothing,
        // and is not made.) CI once took `started` after the player's init, when the arbiter
        // had asked already, and saw the player's signal before its hold was due to end.
        try await Task.sleep(until: started + .milliseconds(2400))
        let listed = try await listedPlaying()
        if ContinuousClock.now < started + .seconds(FakePlayer.unansweredHold) {
            let report = await world.arbiterReport()
            #expect(!listed, "the player was counted as Playing before it said so: \(report)")
        }
        // Past its hold, the player says Playing by signal; the arbiter takes that.
        try await sessionPoll("the arbiter to list the player as Playing after its signal", timeout: FakePlayer.unansweredHold + 3) {
            try await listedPlaying()
        }
        let music = try world.play("music", side: .left, duration: 2)
        try await Self.expectPausedForTheSession(mute, music)
        daemon.kill(SIGKILL)
    }

    /// The policy's rules keep the session paused after the first flip ends its interruption
    /// (without shouldResume); the throttle bounds what the arbiter does for the rest.
    @Test("a player flipping its status 1,000 times a second interrupts earshot play once, the interruption ends, and the arbiter answers within 1 s throughout")
    func statusFlipsAreThrottled() async throws {
        let world = try await SessionWorld()
        let daemon = try await world.daemon()
        let music = try world.play("music", side: .left, duration: 20)
        try await music.waitUntilPlaying()
        let flipping = try await FakePlayer(world, .flipsStatus)
        let start = ContinuousClock.now
        var slowest = 0.0
        while ContinuousClock.now - start < .seconds(1) {
            slowest = max(slowest, try await Self.arbiterRoundTrip(world))
            try await Task.sleep(for: .milliseconds(20))
        }
        await flipping.stopFlooding()
        let flooded = ContinuousClock.now - start
        try await music.waitForLine("the last interruption's end") { _ in
            music.sessionLines.filter { $0.hasPrefix("session: interrupted") }.count
                == music.sessionLines.filter { $0.hasPrefix("session: interruption ended") }.count
        }
        let interruptions = music.sessionLines.filter { $0.hasPrefix("session: interrupted") }.count
        let windows = Int((Double(flooded.components.seconds) + Double(flooded.components.attoseconds) / 1e18) / 0.05) + 2
        sessionReport("\(interruptions) interruptions in \(flooded) of flipping; slowest arbiter round trip \(slowest * 1000) ms")
        #expect(interruptions == 1, "\(interruptions) interruptions in \(flooded) (at most \(windows) windows): \(music.lines)")
        #expect(slowest < 1.0, "the arbiter took \(slowest) s to answer")
        #expect(daemon.isRunning, "the daemon died: \(daemon.stderr)")
        daemon.kill(SIGKILL)
    }
}
