import DBus
import Foundation
import Testing
import TestSupport

/// The screen lock silences `ambient` (and `soloAmbient`) sessions and lets `playback`
/// play on; the arbiter follows `ActiveChanged(b)` of the freedesktop or GNOME screen
/// saver, from the owner of its name.
@Suite("audio sessions across processes: the screen lock", .tags(.sessions))
struct SessionScreenLockTests {
    @Test("locking silences the ambient process and not the playback one; unlocking resumes it", arguments: [
        "org.freedesktop.ScreenSaver", "org.gnome.ScreenSaver",
    ])
    func screenLock(interface: String) async throws {
        let world = try await SessionWorld(keepAwake: false)
        let capture = try await world.capture()
        let ambience = try world.play("ambience", side: .left, category: "ambient")
        let music = try world.play("music", side: .right, category: "playback", mix: true)
        try await ambience.waitUntilPlaying()
        try await music.waitUntilPlaying()
        #expect(try await world.arbiterProperty("ScreenLocked") == .boolean(false))
        try await settle(0.5)

        let locked = ContinuousClock.now
        try await world.screenSaver(active: true, interface: interface)
        try await ambience.waitForLine("session: interrupted (screenLocked)")
        try await sessionPoll("ScreenLocked to be true") { try await world.arbiterProperty("ScreenLocked") == .boolean(true) }
        try await ambience.waitForSession("interrupted") { $0.interrupted && !$0.producingSound }
        let status = try await world.status()
        #expect(status.screenLocked, "\(status)")
        let musicID = try await music.uniqueName()
        #expect(status.row(musicID)?.state == ["active", "playing"], "\(status)")
        try await settle(1.0)

        let unlocked = ContinuousClock.now
        try await world.screenSaver(active: false, interface: interface)
        try await ambience.waitForLine("session: interruption ended, resuming")
        try await ambience.waitUntilPlaying()
        #expect(try await world.arbiterProperty("ScreenLocked") == .boolean(false))
        try await settle(0.8)
        let audio = try await capture.stop()

        let lockAt = try audio.at(locked), unlockAt = try audio.at(unlocked)
        #expect(abs(audio.level(.left, max(0, lockAt - 0.4)..<lockAt) + 12) < 1, "the ambient sound played before the lock")
        // The ambient channel from just before the lock on: the sound the lock stopped, then
        // the sound the unlock resumed, and nothing between. The silence between them is
        // measured in the capture alone. On PipeWire the capture puts an instant tens of ms
        // late: the resumed sound's start came 15–60 ms before the unlock's mapped instant in
        // every run, though the process resumes only once told (the capture's origin is taken
        // from when its samples arrive, and a null sink's monitor hands a graph cycle over as
        // the cycle is computed, ahead of the sink's clock). A window that ended 50 ms before
        // the unlock's mapped instant caught that start in one run in four, and looked like a
        // sound through the lock. (Gaps under 0.1 s are the graph's missed cycles, not a pause.)
        let regions = audio.activeRegions(threshold: -60, minGap: 0.1, channel: SessionSide.left.channel,
                                          range: max(0, lockAt - 0.3)..<(audio.duration - 0.05))
        sessionReport("ambient regions from the lock: \(regions.map { String(format: "%.3f–%.3f", $0.start - lockAt, $0.end - lockAt) }), unlocked at \(String(format: "%.3f", unlockAt - lockAt))")
        try #require(regions.count == 2, "the ambient channel should stop at the lock and sound again after the unlock: \(regions)")
        let stopped = regions[0].end, resumed = regions[1].start
        #expect(stopped - lockAt < 0.3, "the ambient sound went on \(stopped - lockAt) s after the lock")
        // It stopped within 0.3 s of the lock and resumed no sooner than the unlock: silent for
        // the locked time less those 0.3 s at least, wherever the capture puts the instants.
        let lockedFor = (unlocked - locked) / .seconds(1)
        #expect(resumed - stopped > lockedFor - 0.3, "silent \(resumed - stopped) s of the \(lockedFor) s locked")
        #expect(resumed - unlockAt < 1.0, "it resumed \(resumed - unlockAt) s after the unlock")
        #expect(abs(audio.level(.left, (resumed + 0.1)..<(audio.duration - 0.05)) + 12) < 1)
        // The playback process never stopped.
        let musicOnset = try #require(audio.onset(threshold: -40, channel: SessionSide.right.channel))
        #expect(audio.longestSilence(.right, in: max(musicOnset + 0.01, lockAt - 0.4)..<(audio.duration - 0.05)) < 0.05,
                "the playback process kept sounding through the lock")
        #expect(abs(audio.level(.right, lockAt..<unlockAt) + 12) < 1)
        #expect(music.sessionLines.filter { $0.hasPrefix("session: interrupt") }.isEmpty, "\(music.lines)")
        #expect(ambience.sessionLines.filter { $0.hasPrefix("session: interrupt") }
                == ["session: interrupted (screenLocked)", "session: interruption ended, resuming"], "\(ambience.lines)")
    }

    /// The activation of a silenced category is answered with an interruption
    /// (SessionPolicy.activate): the process must not sound until the unlock.
    @Test("an ambient process started while the screen is locked stays silent, and says it is interrupted")
    func startWhileLocked() async throws {
        let world = try await SessionWorld()
        let music = try world.play("music", side: .right, category: "playback")
        try await music.waitUntilPlaying()
        try await world.screenSaver(active: true)
        try await sessionPoll("ScreenLocked to be true") { try await world.arbiterProperty("ScreenLocked") == .boolean(true) }
        let capture = try await world.capture()

        let ambience = try world.play("ambience", side: .left, category: "ambient")
        try await ambience.waitForSession("interrupted") { $0.interrupted }
        try await settle(1.0)
        var audio = try await capture.snapshot()
        #expect(audio.peak(.left, 0..<audio.duration) < -60,
                "the ambient process sounded while the screen was locked: \(audio.level(.left, audio.tail(0.5))) dBFS")
        #expect(abs(audio.level(.right, audio.tail(0.5)) + 12) < 1, "the playback process plays on")
        #expect(ambience.printed("session: interrupted (screenLocked)"), "\(ambience.lines)")

        // After the unlock, whatever the process does, the arbiter's view must match the sink.
        try await world.screenSaver(active: false)
        try await ambience.waitForSession("no longer interrupted") { !$0.interrupted }
        try await settle(0.8)
        audio = try await capture.stop()
        let sounding = audio.level(.left, audio.tail(0.3)) > -20
        let session = try await ambience.session()
        #expect(session?.producingSound == sounding,
                "the sink \(sounding ? "hears" : "does not hear") the ambient process, the arbiter says \(session.map(String.init(describing:)) ?? "nothing")")
        #expect(ambience.lines.contains { $0.hasPrefix("session: interruption ended") }, "\(ambience.lines)")
    }

    /// Without asking the saver, a new host would think the screen unlocked until the next
    /// `ActiveChanged`, and the ambient process, registering again, would play while locked.
    @Test("a process that takes over the arbiter while the screen is locked keeps the ambient process silent")
    func takeoverWhileLocked() async throws {
        let world = try await SessionWorld()
        let saver = try await world.runScreenSaver()
        let music = try world.play("music", side: .right, category: "playback")
        try await music.waitUntilPlaying()
        #expect(try await world.arbiterHost() == music.process.pid, "the first process hosts the arbiter")
        try saver.set(locked: true)
        try await sessionPoll("ScreenLocked to be true") { try await world.arbiterProperty("ScreenLocked") == .boolean(true) }
        let ambience = try world.play("ambience", side: .left, category: "ambient")
        try await ambience.waitForSession("interrupted") { $0.interrupted }
        let capture = try await world.capture()

        let asked = saver.questions.value
        let killed = ContinuousClock.now
        music.kill()
        try await sessionPoll("the ambient process to host the arbiter") { try await world.arbiterHost() == ambience.process.pid }
        try await ambience.waitForLine("session: media services were reset (the arbiter changed hosts, or the sound server restarted); registered again")
        try await sessionPoll("the new host to know the screen is locked") {
            try await world.arbiterProperty("ScreenLocked") == .boolean(true)
        }
        #expect(saver.questions.value > asked, "the new host asked the saver")
        try await ambience.waitForSession("interrupted under the new host") { $0.interrupted && !$0.producingSound }
        try await settle(1.0)
        var audio = try await capture.snapshot()
        let at = try audio.at(killed)
        #expect(audio.peak(.left, at..<audio.duration) < -60,
                "the ambient process sounded under the new host while the screen was locked")

        try saver.set(locked: false)
        try await ambience.waitForLine("session: interruption ended, resuming")
        try await ambience.waitUntilPlaying()
        try await settle(0.5)
        audio = try await capture.stop()
        #expect(abs(audio.level(.left, audio.tail(0.3)) + 12) < 1, "the ambient process plays after the unlock")
    }
}
