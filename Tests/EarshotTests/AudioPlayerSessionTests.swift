@testable import Earshot
import AudioEngine
import SessionPolicy
import Foundation
import Testing
import TestSupport

/// The implicit session and interruptions reaching players, in process: the implicit
/// session is put on a private bus (it hosts the arbiter there), a second session of the
/// same process on that bus interrupts it. Part of the `AudioPlayerTests` suite, so that
/// `scripts/test` runs it in the real-time audio pass, one at a time.
extension AudioPlayerTests {
    /// Runs `body` with the implicit session on a private bus, restoring the shared one after.
    private func withImplicitSession(_ name: String,
                                     _ body: (AudioSession, PrivateBus) async throws -> Void) async throws {
        try await withSharedAudio(idleTimeout: 0) { _ in
            let bus = try PrivateBus()
            let session = AudioSession(appName: name, bus: .address(bus.address))
            session.makeFollowed()
            defer {
                session.unfollow()
                // The interrupter a test made on its bus, which its engine keeps.
                interrupterEngine.playersSession.withLock { $0 = nil }
            }
            try await body(session, bus)
        }
    }

    /// Waits until the arbiter the session hosts sees it active and sounding (so that an
    /// interruption ends with `shouldResume`: the session was playing).
    private func waitUntilSounding(_ session: AudioSession) async throws {
        try await eventually("the session to host the arbiter", timeout: 5) { session.isHostingArbiter }
        let arbiter = try #require(session.state.withLock { $0.hosted })
        let id = SessionID(try await session.connection().uniqueName)
        try await eventually("the arbiter to see the session active and sounding", timeout: 5) {
            arbiter.policy[id]?.isActive == true && arbiter.policy[id]?.isProducingSound == true
        }
    }

    /// Collects a player's events.
    private func record(_ player: AudioPlayer) -> (Locked<[AudioPlayer.Event]>, Task<Void, Never>) {
        let events = Locked<[AudioPlayer.Event]>([])
        let task = Task { for await event in player.events { events.withLock { $0.append(event) } } }
        return (events, task)
    }

    @Test("a player that plays with no session call joins the session by itself: soloAmbient, active, sounding")
    func implicitSessionJoinsAndActivates() async throws {
        try await withImplicitSession("implicit") { session, _ in
            #expect(!session.isActive)
            let tone = URL(fileURLWithPath: try TestSignals.sine(frequency: 1000, duration: 3))
            let player = try AudioPlayer(contentsOf: tone)
            #expect(player.play())
            #expect(player.isPlaying, "the sound starts at once, before the session is on the bus")
            try await waitUntilSounding(session)
            let arbiter = try #require(session.state.withLock { $0.hosted })
            let id = SessionID(try await session.connection().uniqueName)
            #expect(arbiter.policy[id]?.category == .soloAmbient, "the default category")
            #expect(session.isActive)
            player.stop()
        }
    }

    @Test("another session's activation interrupts an implicit-session player: began, paused, ended with shouldResume, playing again")
    func interruptionReachesThePlayer() async throws {
        try await withImplicitSession("interrupted") { session, bus in
            let tone = URL(fileURLWithPath: try TestSignals.sine(frequency: 1000, duration: 8))
            let player = try AudioPlayer(contentsOf: tone)
            let delegate = InterruptionDelegate()
            player.delegate = delegate
            let (events, listener) = record(player)
            defer { listener.cancel() }
            #expect(player.play())
            try await waitUntilSounding(session)

            let other = AudioSession(appName: "interrupter", bus: .address(bus.address), engine: interrupterEngine)
            try await other.setCategory(.playback)
            try await other.setActive(true)
            try await eventually("the began event", timeout: 5) { events.value.contains { if case .interruptionBegan = $0 { true } else { false } } }
            #expect(!player.isPlaying, "paused by the interruption")
            // The event stream is given the event just before the delegate is called, on the
            // same thread: a test that reads the delegate as soon as the event arrives may be
            // between the two, and find the delegate's calls still empty.
            try await eventually("the delegate's began", timeout: 2) { delegate.calls.value == ["began"] }

            try await other.setActive(false, options: .notifyOthersOnDeactivation)
            try await eventually("the ended event", timeout: 5) {
                events.value.contains { if case .interruptionEnded(shouldResume: true) = $0 { true } else { false } }
            }
            try await eventually("the player to play again", timeout: 5) { player.isPlaying }
            // Both shapes of the end: Earshot's, and iOS's `withOptions:` (1, shouldResume).
            try await eventually("the delegate's ended", timeout: 2) { delegate.calls.value.count >= 3 }
            #expect(delegate.calls.value == ["began", "ended true", "ended withOptions 1"])
            player.stop()
        }
    }

    @Test("with automatic resume off, the player hears ended(shouldResume: true) and stays paused")
    func automaticResumeOff() async throws {
        try await withImplicitSession("manual") { session, bus in
            let tone = URL(fileURLWithPath: try TestSignals.sine(frequency: 1000, duration: 8))
            let player = try AudioPlayer(contentsOf: tone)
            player.automaticallyResumesAfterInterruption = false
            let (events, listener) = record(player)
            defer { listener.cancel() }
            #expect(player.play())
            try await waitUntilSounding(session)

            let other = AudioSession(appName: "interrupter", bus: .address(bus.address), engine: interrupterEngine)
            try await other.setCategory(.playback)
            try await other.setActive(true)
            try await eventually("the player to pause", timeout: 5) { !player.isPlaying }
            try await other.setActive(false, options: .notifyOthersOnDeactivation)
            try await eventually("the ended event", timeout: 5) {
                events.value.contains { if case .interruptionEnded(shouldResume: true) = $0 { true } else { false } }
            }
            try await sleep(0.5)
            #expect(!player.isPlaying, "the app decides; the player did not resume by itself")
            #expect(player.play(), "and the app's play() plays")
            player.stop()
        }
    }

    @Test("an AudioPlayer bound to now-playing info set by hand: an interruption shows Paused with the position still, the title kept")
    func nowPlayingFollowsInterruption() async throws {
        try await withImplicitSession("bound") { session, bus in
            let tone = URL(fileURLWithPath: try TestSignals.sine(frequency: 1000, duration: 8))
            let player = try AudioPlayer(contentsOf: tone)
            let center = NowPlayingInfoCenter()
            center.nowPlayingInfo = NowPlayingInfo(title: "Set by hand", duration: player.duration, playbackState: .paused)
            player.connect(to: center, commands: RemoteCommandCenter())
            let (events, listener) = record(player)
            defer { listener.cancel() }
            #expect(player.play())
            #expect(center.nowPlayingInfo?.playbackState == .playing)
            try await waitUntilSounding(session)
            try await sleep(0.3)

            let other = AudioSession(appName: "interrupter", bus: .address(bus.address), engine: interrupterEngine)
            try await other.setCategory(.playback)
            try await other.setActive(true)
            try await eventually("the player to pause", timeout: 5) { !player.isPlaying }
            try await eventually("now playing to say paused", timeout: 2) { center.nowPlayingInfo?.playbackState == .paused }
            // The pause publishes where it expects the sound to stop, then, once the output's
            // flush said what was heard (one round trip to the server), that: a settle time,
            // after which the position stands still.
            try await sleep(0.2)
            let held = center.currentElapsedTime
            #expect(held > 0, "the position where it was paused")
            try await sleep(0.4)
            #expect(center.currentElapsedTime == held, "the position stands still while interrupted")
            #expect(center.nowPlayingInfo?.title == "Set by hand", "the app's own info is kept")

            try await other.setActive(false, options: .notifyOthersOnDeactivation)
            try await eventually("the player to play again", timeout: 5) { player.isPlaying }
            try await eventually("now playing to say playing again", timeout: 2) { center.nowPlayingInfo?.playbackState == .playing }
            // The events reach the listener's task after the player plays again: waited for,
            // since read at once the interruption's end may still be on its way.
            try await eventually("the interruption's end reported", timeout: 2) { events.value.count >= 2 }
            #expect(events.value.count == 2, "began and ended: \(events.value)")
            player.stop()
            #expect(center.nowPlayingInfo?.playbackState == .paused)
        }
    }

    /// `earshot play` reads the interruption count before its activation and plays with it
    /// (`QueuePlayer.play(askedAfter:)`): a user's play on another app that interrupts it
    /// between its activation and its play must stand. Without the count, the queue's
    /// start activated the session again and interrupted the other app a second time
    /// (`SessionInterruptionTests.quickResumeByUser` in a fresh-clone CI run on PipeWire).
    @Test("a queue's play decided before an interruption waits for its end; a play decided during it takes over")
    func queuePlayDecidedBeforeAnInterruption() async throws {
        try await withImplicitSession("launch") { _, bus in
            let other = AudioSession(appName: "interrupter", bus: .address(bus.address), engine: interrupterEngine)
            try await other.setCategory(.playback)
            _ = try await other.connection()
            let session = AudioSession(appName: "queue", bus: .address(bus.address))
            defer { session.unfollow() }
            try await session.setCategory(.playback)
            _ = try await session.connection()
            let queue = try QueuePlayer(urls: [URL(fileURLWithPath: try TestSignals.sine(frequency: 500, duration: 8))])
            defer { queue.pause() }

            let decided = session.interruptionsBegun
            try await session.setActive(true)
            try await other.setActive(true)
            try await eventually("the queue's session to be interrupted", timeout: 5) { session.isInterrupted }
            queue.play(askedAfter: decided)
            try await sleep(0.5)
            #expect(!queue.isPlaying, "the queue waits for the interruption's end")
            #expect(session.isInterrupted && !session.isActive, "its session did not take the sound back")
            #expect(!other.isInterrupted && other.isActive, "the interrupter plays on")

            queue.play()
            try await eventually("a play decided during the interruption to interrupt the other", timeout: 5) { other.isInterrupted }
            try await eventually("the queue to play", timeout: 5) { queue.isPlaying }
            #expect(session.isActive)
        }
    }
}

extension AudioSession {
    /// Makes this the session its engine's players join (the implicit one, until it
    /// connects), as a session does when it connects.
    func makeFollowed() { engine.playersSession.withLock { $0 = self } }

    /// Its engine's players no longer follow this session: a test's session on the shared
    /// engine, which the engine would keep after the test.
    func unfollow() { engine.playersSession.withLock { if $0 === self { $0 = nil } } }
}

/// The engine of the interrupting session made in the same process: an engine of its own,
/// silent, so that the player's sound (on the shared engine) is not the interrupter's too.
let interrupterEngine = AudioEngine()

/// Records the interruption callbacks of an ``AudioPlayerDelegate``.
final class InterruptionDelegate: AudioPlayerDelegate {
    let calls = Locked<[String]>([])
    func audioPlayerBeginInterruption(_ player: AudioPlayer) { calls.withLock { $0.append("began") } }
    func audioPlayerEndInterruption(_ player: AudioPlayer, shouldResume: Bool) { calls.withLock { $0.append("ended \(shouldResume)") } }
    /// As an iOS app writes it (`AVAudioPlayerDelegate`): called too.
    func audioPlayerEndInterruption(_ player: AudioPlayer, withOptions flags: Int) { calls.withLock { $0.append("ended withOptions \(flags)") } }
}

extension AudioPlayerTests {
    @Test("where no session bus answers, a player plays anyway, whole, without a session")
    func noBusStillPlays() async throws {
        let session = AudioSession(appName: "nobus", bus: .address("unix:path=/nonexistent/earshot-test-bus"))
        session.makeFollowed()
        defer { session.unfollow() }
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: try TestSignals.sine(frequency: 1000, duration: 0.5)))
        let audio = try await captured {
            #expect(player.play())
            try await waitUntilFinished(player)
        }
        let regions = audio.activeRegions()
        #expect(regions.count == 1 && regions.first?.duration.isClose(to: 0.5, within: 0.02) == true, "heard whole: \(regions)")
        #expect(!session.isConnected && !session.isActive, "no session without a bus")
    }
}
