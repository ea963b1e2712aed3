import DBus
import Foundation
import Testing
import TestSupport

/// GNOME's own media keys and widget: gnome-shell headless and gsd-media-keys on the
/// world's bus, real key presses (Mutter's RemoteDesktop). gsd-media-keys 43 sends the Play
/// key to a player of its own choosing, by its own rule (the current one while it is
/// Playing); the arbiter takes the keys from it and sends each to the last sounder.
@Suite("GNOME: the media keys go to the last sounder, the widget shows it", .serialized, .tags(.desktop))
struct DesktopGNOMETests {
    static let catcher = "org.mpris.MediaPlayer2.EarshotMediaKeys"

    @Test("one Earshot process: the Play key pauses it (heard within 30 ms) and resumes it; the widget shows it, not the arbiter's player")
    func oneProcess() async throws {
        let world = try await SessionWorld(keepAwake: false)
        let capture = try await world.capture()
        let desktop = try await GNOMEDesktop(world: world)
        let a = try world.play("a", side: .left)
        try await a.waitUntilPlaying()
        try await desktop.waitForKeysHeld()
        try await desktop.expectWidget(shows: "org.mpris.MediaPlayer2.a", "Playing")

        try await settle(0.3)
        let pressed = ContinuousClock.now
        try await desktop.press()
        try await a.waitForSession("paused by the key") { !$0.producingSound }
        try await settle(0.4)
        let audio = try await capture.snapshot()
        let start = try audio.at(pressed)
        let silent = audio.silenceOnset(.left, after: start)
        let delay = silent.map { $0 - start } ?? .infinity
        sessionReport("pause heard \(Int(delay * 1000)) ms after the key press")
        #expect(delay < 0.030, "the key's pause is heard \(Int(delay * 1000)) ms after the press")
        try await desktop.expectWidget(shows: "org.mpris.MediaPlayer2.a", "Paused")

        try await desktop.press()
        try await a.waitUntilPlaying()
        try await desktop.expectWidget(shows: "org.mpris.MediaPlayer2.a", "Playing")
        #expect(desktop.keyCalls.allSatisfy { $0.contains(DesktopGNOMETests.catcher) }, "\(desktop.keyCalls)")
        let status = try await world.earshot("status")
        #expect(status.output.contains("desktop keys: gnome: the keys go to the target"), "\(status.output)")
    }

    @Test("A, B and mpv started in turn, each pausing the others, then killed: after each step the key goes to the last sounder, and the widget shows it")
    func twoProcessesAndMPV() async throws {
        let world = try await SessionWorld()
        let desktop = try await GNOMEDesktop(world: world)

        // A plays: the key pauses and resumes it.
        let a = try world.play("a", side: .left, duration: 60)
        try await a.waitUntilPlaying()
        let aID = try await a.uniqueName()
        try await desktop.waitForKeysHeld()
        #expect(try await world.target() == aID)
        try await desktop.expectWidget(shows: "org.mpris.MediaPlayer2.a", "Playing")
        try await desktop.press()
        try await a.waitForSession("paused by the key") { !$0.producingSound }
        try await desktop.press()
        try await a.waitUntilPlaying()

        // B plays and interrupts A: the key goes to B; A stays silent.
        let b = try world.play("b", side: .right, duration: 60)
        try await b.waitUntilPlaying()
        let bID = try await b.uniqueName()
        try await a.waitForLine("session: interrupted (sessionActivated(\(bID)))")
        try await sessionPoll("B to be the target") { try await world.target() == bID }
        try await desktop.expectWidget(shows: "org.mpris.MediaPlayer2.b", "Playing")
        try await desktop.press()
        try await b.waitForSession("paused by the key") { !$0.producingSound }
        try await desktop.press()
        try await b.waitUntilPlaying()
        #expect(try await a.session()?.producingSound == false, "A stays silent")

        // mpv appears (paused) while B plays, then its own button plays it and it interrupts
        // B: mpv is the last sounder; the key pauses mpv, not B. (gsd-media-keys, left
        // alone, keeps B: mpv appeared while B was Playing, and its Playing came before B's
        // Paused. Issue 32.)
        let mpv = try await world.pausedMPV(side: .left)
        let mpvID = try await mpv.uniqueName()
        try await desktop.expectWidget(shows: mpv.name, "Paused")
        try await mpv.user("play")
        try await mpv.waitFor("Playing")
        try await b.waitForSession("interrupted by mpv") { !$0.producingSound }
        try await sessionPoll("mpv to be the target", timeout: 5) { try await world.target() == mpvID }
        try await desktop.expectWidget(shows: mpv.name, "Playing")
        try await desktop.press()
        try await mpv.waitFor("Paused")
        try await settle(0.3)
        #expect(try await b.session()?.producingSound == false, "B stays paused")
        try await desktop.press()
        try await mpv.waitFor("Playing")

        // mpv paused by its own button: it is still the last sounder; the key resumes mpv.
        try await mpv.user("pause")
        try await mpv.waitFor("Paused")
        try await settle(0.3)
        #expect(try await world.target() == mpvID)
        try await desktop.expectWidget(shows: mpv.name, "Paused")
        try await desktop.press()
        try await mpv.waitFor("Playing")
        try await settle(0.3)
        #expect(try await b.session()?.producingSound == false, "B stays paused")

        // mpv killed: B sounded before it, so the key goes to B.
        mpv.child.kill(SIGKILL)
        try await sessionPoll("B to be the target again") { try await world.target() == bID }
        try await desktop.expectWidget(shows: "org.mpris.MediaPlayer2.b", "Paused")
        try await desktop.press()
        try await b.waitUntilPlaying()
        try await desktop.expectWidget(shows: "org.mpris.MediaPlayer2.b", "Playing")

        // B killed: A's interruption ends and A resumes; the key goes to A.
        b.kill()
        try await sessionPoll("A to be the target again") { try await world.target() == aID }
        try await a.waitUntilPlaying()
        try await desktop.expectWidget(shows: "org.mpris.MediaPlayer2.a", "Playing")
        try await desktop.press()
        try await a.waitForSession("paused by the key") { !$0.producingSound }
        try await desktop.expectWidget(shows: "org.mpris.MediaPlayer2.a", "Paused")
        #expect(desktop.keyCalls.allSatisfy { $0.contains(DesktopGNOMETests.catcher) }, "\(desktop.keyCalls)")
    }

    @Test("mpv plays before any Earshot process (gsd-media-keys keeps it), then A plays and pauses it: the key goes to A")
    func mpvFirst() async throws {
        let world = try await SessionWorld()
        let desktop = try await GNOMEDesktop(world: world)
        let mpv = try await world.pausedMPV(side: .right)
        try await mpv.user("play")
        try await mpv.waitFor("Playing")
        try await desktop.expectWidget(shows: mpv.name, "Playing")

        let a = try world.play("a", side: .left, duration: 60)
        try await a.waitUntilPlaying()
        try await mpv.waitFor("Paused")
        // The arbiter's player appeared while mpv was Playing: gsd kept mpv until it paused.
        try await desktop.waitForKeysHeld()
        try await sessionPoll("A to be the target") { try await world.target() == (try await a.uniqueName()) }
        try await desktop.press()
        try await a.waitForSession("paused by the key") { !$0.producingSound }
        try await settle(0.3)
        #expect(try await mpv.status() == "Paused", "mpv stays paused")
        try await desktop.press()
        try await a.waitUntilPlaying()
        #expect(try await mpv.status() == "Paused", "mpv stays paused")
        try await desktop.expectWidget(shows: "org.mpris.MediaPlayer2.a", "Playing")
    }
}

extension SessionWorld {
    /// Starts mpv (with mpv-mpris) paused on a looped tone, and waits until its player says
    /// Paused and the shell's widget (which meets players as gsd-media-keys does) has had
    /// time to see it.
    func pausedMPV(side: SessionSide, frequency: Double = 700) async throws -> ForeignPlayerProcess {
        let file = try SessionWorld.tone(side, frequency: frequency, duration: 30)
        let child = try Child("mpv", ["--no-video", "--no-terminal", "--ao=pulse", "--loop-file=inf", "--pause", file],
                              environment: environment)
        let player = ForeignPlayerProcess(child: child, name: "org.mpris.MediaPlayer2.mpv", world: self)
        try await sessionPoll("mpv to say Paused", timeout: 10) { try await player.status() == "Paused" }
        try await settle(0.5)
        return player
    }
}

extension GNOMEDesktop {
    /// Waits until `earshot status` says the arbiter has the keys.
    func waitForKeysHeld() async throws {
        let last = Locked("")
        do {
            try await sessionPoll("the arbiter to hold gsd-media-keys' keys", timeout: 10, interval: 0.1) {
                let status = try await self.world.earshot("status").output
                last.withLock { $0 = status }
                return status.contains("desktop keys: gnome: the keys go to the target")
            }
        } catch {
            throw TestFailure("\(error): earshot status says\n\(last.value)\n\(report)")
        }
    }

    /// Waits until the shell's widget shows `name` as `status`, and never the arbiter's player.
    func expectWidget(shows name: String, _ status: String) async throws {
        let last = Locked<[(name: String, status: String)]>([])
        do {
            try await sessionPoll("the widget to show \(name) \(status)", timeout: 5, interval: 0.1) {
                let shown = try await self.widget()
                last.withLock { $0 = shown }
                return shown.contains { $0.name == name && $0.status == status }
            }
        } catch {
            throw TestFailure("\(error): it shows \(last.value)")
        }
        #expect(!last.value.contains { $0.name == DesktopGNOMETests.catcher }, "the widget shows the arbiter's player: \(last.value)")
    }
}

extension CapturedAudio {
    /// The first moment after `start` (seconds) from which the channel stays below -40 dBFS
    /// (peak over 2 ms windows) for at least 50 ms; nil if it never does.
    func silenceOnset(_ side: SessionSide, after start: Double) -> Double? {
        let step = 0.002
        var t = start
        var onset: Double?
        while t + step <= duration {
            if peak(side, t..<(t + step)) < -40 {
                if onset == nil { onset = t }
                if t + step - onset! >= 0.05 { return onset }
            } else {
                onset = nil
            }
            t += step
        }
        return nil
    }
}
