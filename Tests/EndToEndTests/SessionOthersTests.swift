import DBus
import Foundation
import Testing
import TestSupport

/// Other apps under the session rules, with real processes: mpv (mpv-mpris) as the other
/// app's player, paplay streams as other apps' sound, `earshot play` as the session, and
/// `earshot daemon` hosting the arbiter.
@Suite("Other apps: mpv and paplay under the session rules", .tags(.sessions))
struct SessionOthersTests {
    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    @Test("earshot play starting pauses mpv; when it ends (notifyOthers) mpv plays again")
    func pauseAndResume() async throws {
        let world = try await SessionWorld()
        let daemon = try await world.daemon()
        let mpv = try await world.mpv()
        let music = try world.play("music", side: .left, duration: 2)
        let paused = try await mpv.waitFor("Paused")
        sessionReport("mpv Paused \(Self.milliseconds(paused)) ms after earshot play started")
        try await mpv.waitFor("Playing", timeout: 10)
        // Resumed, it sounds again after earshot play last did: it takes the keys at once.
        let mpvID = try await mpv.uniqueName()
        let resumed = ContinuousClock.now
        do {
            try await sessionPoll("mpv to be the target", timeout: 1) { try await world.target() == mpvID }
        } catch {
            Issue.record("target \(try await world.target()), sessions \(try await world.sessions()), running \(music.process.isRunning), \(music.lines)")
        }
        sessionReport("mpv the target \(ContinuousClock.now - resumed) after it said Playing")
        #expect(try await music.process.wait(timeout: 15) == 0, "\(music.process.stderr)")
        daemon.kill(SIGKILL)
    }

    @Test("a player the user played and paused by hand in between is left alone at the end")
    func userTouchedIsLeftAlone() async throws {
        let world = try await SessionWorld()
        let daemon = try await world.daemon()
        let mpv = try await world.mpv()
        let music = try world.play("music", side: .left, duration: 20)
        try await mpv.waitFor("Paused")
        try await music.waitUntilPlaying()
        try await mpv.user("play")
        try await music.waitForLine("an interruption") { $0.hasPrefix("session: interrupted") }
        try await mpv.user("pause")
        try await mpv.waitFor("Paused")
        try await music.waitForLine("the interruption's end") { $0.hasPrefix("session: interruption ended") }
        #expect(!music.lines.contains { $0.hasPrefix("session: interruption ended, resuming") },
                "another app cannot say notifyOthers: \(music.lines)")
        // Quit (MPRIS): earshot play deactivates with notifyOthersOnDeactivation.
        _ = try await world.client.call(destination: "org.mpris.MediaPlayer2.music", path: "/org/mpris/MediaPlayer2",
                                        interface: "org.mpris.MediaPlayer2", method: "Quit")
        _ = try await music.process.wait(timeout: 10)
        try await Task.sleep(for: .seconds(1))
        #expect(try await mpv.status() == "Paused", "the user paused it last; the arbiter must not play it")
        daemon.kill(SIGKILL)
    }

    /// ``userTouchedIsLeftAlone`` can fail this way: when the user's play comes within
    /// mpv-mpris's 100 ms batch of the arbiter's pause, mpv says only Playing, and earshot
    /// play would never be interrupted. Here a fake player folds every time;
    /// its sound (a paplay filed under the test's process) says what happened.
    @Test("a player that never reports the arbiter's pause, played again by the user, still interrupts: its sound fell silent and came back")
    func foldedPauseAndPlay() async throws {
        let scene = try await FoldingFakeScene(.foldsPause)
        defer { scene.finish() }
        let (world, fake, music) = (scene.world, scene.fake, scene.music)
        // It pauses (its stream goes), and says nothing; then the user plays it.
        try await scene.fallSilent()
        try scene.soundAgain()
        do {
            try await music.waitForLine("an interruption") { $0.hasPrefix("session: interrupted") }
        } catch {
            throw TestFailure("\(error)\n" + (await world.arbiterReport()))
        }
        #expect(try await world.others().first { $0["player"]?.string == fake.connection.uniqueName }?["pausedBy"]?.string == "",
                "the user played it: no session holds it paused")
    }

    /// The arbiter reads a player's status again each time its process falls silent and
    /// sounds again while a pause is owed (``foldedPauseAndPlay``). A hung player answers
    /// none of those reads: one at a time must be on its way, not one per flap of its sound,
    /// each held for the arbiter's 2 s wait.
    @Test("a player that does not answer, its sound flapping while it owes a pause, is read one read at a time")
    func flappingSoundOneReadAtATime() async throws {
        let scene = try await FoldingFakeScene(.foldsPauseHoldsReads)
        defer { scene.finish() }
        let (world, fake) = (scene.world, scene.fake)
        defer { fake.answer() }
        let fakeID = fake.connection.uniqueName
        // Silent, then sounding again, eight times: each return asks for a read.
        let flaps = 8
        let clock = ContinuousClock()
        let started = clock.now
        for _ in 0..<flaps {
            try await scene.fallSilent()
            try scene.soundAgain()
            try await scene.waitUntil(sounding: true)
        }
        let flapping = (clock.now - started) / .seconds(1)
        // The reads it held wait in its socket: let them through, then a call of the test's
        // own comes after all of them.
        fake.answer()
        _ = try await world.client.call(destination: fakeID, path: "/org/mpris/MediaPlayer2", interface: "org.freedesktop.DBus.Properties",
                                        method: "Get", [.string(FakePlayer.playerInterface), .string("CanPlay")], timeout: .seconds(10))
        // The arbiter's own read after its Pause, then one read per 2 s wait at most.
        let bound = 1 + Int((flapping / 2).rounded(.up)) + 1
        print("flapping: \(flaps) flaps in \(String(format: "%.2f", flapping)) s, \(fake.heldReads.value) reads held (at most \(bound))")
        #expect(fake.heldReads.value >= 2, "the arbiter read the player after its sound came back")
        #expect(fake.heldReads.value <= bound, "one read per flap, not one at a time")
        #expect(try await world.others().contains { $0["player"]?.string == fakeID }, "the arbiter still answers, and still knows the player")
    }

    @Test("SIGKILL of the earshot play that paused mpv: mpv plays again")
    func sigkillResumes() async throws {
        let world = try await SessionWorld()
        let daemon = try await world.daemon()
        let mpv = try await world.mpv()
        let music = try world.play("music", side: .left, duration: 20)
        try await mpv.waitFor("Paused")
        try await music.waitUntilPlaying()
        // earshot status lists mpv, paused by earshot play's session.
        let musicID = try await music.uniqueName()
        let mpvID = try await mpv.uniqueName()
        // The arbiter hears mpv's Paused after mpv says it to the test (a status change can
        // wait out the 50 ms throttle window): read until it shows, at most 2 s. A fresh-clone
        // CI run read "Playing, paused by" the session right after mpv said Paused.
        let latest = Locked("")
        try? await sessionPoll("earshot status to show mpv Paused", timeout: 2) {
            let output = try await world.earshot("status").output
            latest.withLock { $0 = output }
            return output.split(separator: "\n").first { $0.hasPrefix(mpvID + " ") }?.contains("Paused") == true
        }
        let status = latest.value
        let row = try #require(status.split(separator: "\n").first { $0.hasPrefix(mpvID + " ") }, "\(status)")
        #expect(row.contains(" mpv ") && row.contains(" \(mpv.child.pid) ") && row.contains("Paused") && row.contains("paused by \(musicID)"),
                "\(status)")
        #expect(!row.contains("sounding"), "a paused mpv corks its stream: \(status)")
        music.kill()
        let resumed = try await mpv.waitFor("Playing")
        sessionReport("mpv Playing \(Self.milliseconds(resumed)) ms after SIGKILL")
        daemon.kill(SIGKILL)
    }

    @Test("mpv starting while earshot play plays interrupts it, takes the keys, and its pause ends the interruption without resume")
    func mpvInterruptsAndBecomesTarget() async throws {
        let world = try await SessionWorld()
        let daemon = try await world.daemon()
        let music = try world.play("music", side: .left, duration: 20)
        try await music.waitUntilPlaying()
        let musicID = try await music.uniqueName()
        try await sessionPoll("earshot play to be the target") { try await world.target() == musicID }
        let mpv = try await world.mpv()
        try await music.waitForLine("an interruption") { $0.hasPrefix("session: interrupted") }
        let mpvID = try await mpv.uniqueName()
        try await sessionPoll("mpv to be the target") { try await world.target() == mpvID }
        let remote = try await world.earshot("remote", "play-pause")
        #expect(remote.status == 0, "\(remote.stderr)")
        try await mpv.waitFor("Paused")
        try await music.waitForLine("the interruption's end") { $0.hasPrefix("session: interruption ended") }
        #expect(!music.lines.contains { $0.hasPrefix("session: interruption ended, resuming") }, "\(music.lines)")
        daemon.kill(SIGKILL)
    }

    @Test("a mixable earshot play (--mix) neither pauses mpv nor is interrupted by it")
    func mixableLeavesMpvAlone() async throws {
        let world = try await SessionWorld()
        let daemon = try await world.daemon()
        let mpv = try await world.mpv()
        let music = try world.play("music", side: .left, duration: 20, mix: true)
        try await music.waitUntilPlaying()
        try await Task.sleep(for: .seconds(1))
        #expect(try await mpv.status() == "Playing")
        try await mpv.user("pause")
        try await mpv.user("play")
        try await mpv.waitFor("Playing")
        try await Task.sleep(for: .milliseconds(500))
        #expect(!music.lines.contains { $0.hasPrefix("session: interrupted") }, "\(music.lines)")
        daemon.kill(SIGKILL)
    }

    @Test("earshot daemon --others observe: mpv is neither paused nor resumed, and earshot status still lists it")
    func observeOnly() async throws {
        let world = try await SessionWorld()
        let daemon = try await world.daemon("--others", "observe")
        let mpv = try await world.mpv()
        let music = try world.play("music", side: .left, duration: 20)
        try await music.waitUntilPlaying()
        try await Task.sleep(for: .seconds(1))
        #expect(try await mpv.status() == "Playing")
        let status = try await world.earshot("status")
        let mpvID = try await mpv.uniqueName()
        let row = try #require(status.output.split(separator: "\n").first { $0.hasPrefix(mpvID + " ") }, "\(status.output)")
        #expect(row.contains("Playing") && row.contains("sounding") && !row.contains("paused by"), "\(status.output)")
        daemon.kill(SIGKILL)
    }

    @Test("earshot daemon --trace prints each event the arbiter applies with what it decided: a session's activation pausing mpv")
    func traceSaysEventsAndDecisions() async throws {
        let world = try await SessionWorld()
        let daemon = try await world.daemon()  // with --trace
        let mpv = try await world.mpv()
        let mpvID = try await mpv.uniqueName()
        try await sessionPoll("mpv in the trace") { daemon.stderr.contains("foreignPlayer(player: \"\(mpvID)\"") }
        try await world.registerClient(category: "playback", active: true)
        let id = world.client.uniqueName
        try await mpv.waitFor("Paused")
        // The trace is written on a queue of its own after the decisions went out (the bus
        // thread does not wait on the pipe): mpv can pause, and be seen paused, before the
        // activation's line reaches standard error (a PipeWire session pass met it).
        let registered = { @Sendable (text: String) in
            text.split(separator: "\n").contains { $0.hasPrefix("+") && $0.contains("  register(\(id), appName: \"observer\"") }
        }
        let pausing = { @Sendable (text: String) in
            text.split(separator: "\n").contains {
                $0.contains("  activate(\(id))  ->  ") && $0.contains("pauseForeign(player: \"\(mpvID)\", stop: false)")
            }
        }
        try? await sessionPoll("the registration and the activation in the trace", timeout: 3) { pausing(daemon.stderr) }
        #expect(registered(daemon.stderr), "\(daemon.stderr)")
        #expect(pausing(daemon.stderr), "\(daemon.stderr)")
        daemon.kill(SIGKILL)
    }

    @Test("EARSHOT_ARBITER_TRACE=1: an earshot play that hosts the arbiter prints its trace on stderr")
    func embeddedArbiterTrace() async throws {
        let world = try await SessionWorld()  // its players get EARSHOT_ARBITER_TRACE=1
        let music = try world.play("music", side: .left, duration: 5)
        try await music.waitUntilPlaying()
        #expect(try await world.arbiterHost() == music.process.pid, "earshot play hosts the arbiter")
        let id = try await music.uniqueName()
        try await sessionPoll("music's registration and sound in the trace") {
            music.arbiterTrace.contains("  register(\(id), appName: \"music\"") && music.arbiterTrace.contains("  soundStarted(\(id)")
        }
        #expect(!music.lines.contains { $0.hasPrefix("+") }, "the trace goes to stderr, not stdout: \(music.lines)")
    }

    @Test("the embedded arbiter reads others = observe from $XDG_CONFIG_HOME/earshot/arbiter.conf")
    func configurationFile() async throws {
        let world = try await SessionWorld()
        let home = NSTemporaryDirectory() + "earshot-config-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.createDirectory(atPath: home + "/earshot", withIntermediateDirectories: true)
        try "# what the arbiter does to other apps\nothers = observe\n".write(toFile: home + "/earshot/arbiter.conf", atomically: true, encoding: .utf8)
        let mpv = try await world.mpv()
        let music = try world.play("music", side: .left, duration: 20, configHome: home)
        try await music.waitUntilPlaying()
        #expect(try await world.arbiterHost() == music.process.pid, "earshot play hosts the arbiter")
        try await Task.sleep(for: .seconds(1))
        #expect(try await mpv.status() == "Playing")
    }

    @Test("isOtherAudioPlaying: true while paplay plays, false after; a media.role=event stream never counts")
    func otherAudioPlayingFollowsStreams() async throws {
        let world = try await SessionWorld(keepAwake: false)
        let daemon = try await world.daemon()
        let changes = Locked<[Bool]>([])
        _ = try await world.client.subscribe(MatchRule(interface: SessionArbiter.interface, member: "OtherAudioPlayingChanged"),
                                             addMatch: false) { message in
            if let playing = (try? message.arguments())?.first?.bool { changes.withLock { $0.append(playing) } }
        }
        try await world.registerClient(category: "ambient", active: true)
        let tone = try SessionWorld.tone(.left, frequency: 440, duration: 1.5)

        let event = try Child("paplay", ["--property=media.role=event", tone], environment: world.environment)
        #expect(try await event.wait(timeout: 10) == 0, "\(event.stderr)")
        try await Task.sleep(for: .milliseconds(300))
        #expect(changes.value.isEmpty, "an event sound counted: \(changes.value)")

        let music = try Child("paplay", [tone], environment: world.environment)
        try await sessionPoll("OtherAudioPlayingChanged(true)") { changes.value == [true] }
        #expect(try await music.wait(timeout: 10) == 0, "\(music.stderr)")
        try await sessionPoll("OtherAudioPlayingChanged(false)") { changes.value == [true, false] }
        daemon.kill(SIGKILL)
    }
}
