import DBus
import Foundation
import Testing
import TestSupport

/// Route changes seen by `earshot play`, with PulseAudio null sinks as the outputs. The
/// reasons follow `RouteMonitor`/`RouteTracker`: a sink made the default within 1 s of
/// appearing is `newDeviceAvailable`, a switch to a sink that was already there is
/// `override`, and the sink in use going away is `oldDeviceUnavailable`. `earshot play` is a
/// `QueuePlayer`, which pauses on `oldDeviceUnavailable` only, as `AVPlayer` does (an
/// `AudioPlayer` plays on: `AudioPlayerRouteTests`).
@Suite("audio sessions across processes: routes", .tags(.sessions))
struct SessionRouteTests {
    @Test("a new sink made the default: newDeviceAvailable, playing on; that sink removed: oldDeviceUnavailable, paused")
    func newDeviceThenRemoved() async throws {
        let world = try await SessionWorld(keepAwake: false)
        let main = try await world.capture()
        let music = try world.play("music", side: .left)
        try await music.waitUntilPlaying()
        try await settle(0.5)

        let module = try world.server.loadNullSink(name: "headphones")
        try world.server.setDefaultSink("headphones")
        try await music.waitForLine("session: route changed (newDeviceAvailable)")
        let headphones = try await world.capture(sink: "headphones")
        try await settle(0.8)
        var audio = try await headphones.stop()
        #expect(abs(audio.level(.left, audio.tail(0.4)) + 12) < 1, "the music plays on the new sink")
        #expect(try await music.session()?.producingSound == true)
        #expect(!music.printed("session: route changed (oldDeviceUnavailable)"))

        let removed = ContinuousClock.now
        try world.server.unloadModule(module)
        try await music.waitForLine("session: route changed (oldDeviceUnavailable)")
        try await music.waitForSession("silent") { !$0.producingSound }
        let status = try await world.status()
        let id = try await music.uniqueName()
        #expect(status.row(id)?.state.contains("playing") == false, "\(status)")
        try await settle(0.8)
        audio = try await main.stop()
        let at = try audio.at(removed)
        #expect(audio.peak(.left, (at + 0.3)..<audio.duration) < -60,
                "the music must not go on on the remaining sink after its device went away")
        #expect(music.process.isRunning, "a paused player keeps running: \(music.process.stderr)")
        // Its own setCategory's categoryChange line comes or not, by a start-up race (see
        // linesFromOthers); the device lines are what this test is about.
        #expect(music.linesFromOthers.filter { $0.hasPrefix("session: route changed") }
                == ["session: route changed (newDeviceAvailable)", "session: route changed (oldDeviceUnavailable)"], "\(music.lines)")
    }

    @Test("switching the default to a sink that was already there is an override: no pause, in either direction")
    func overrideKeepsPlaying() async throws {
        let world = try await SessionWorld(keepAwake: false)
        let module = try world.server.loadNullSink(name: "speakers")
        let loaded = ContinuousClock.now
        let main = try await world.capture()
        let speakers = try await world.capture(sink: "speakers")
        let music = try world.play("music", side: .left)
        try await music.waitUntilPlaying()
        // Older than RouteMonitor's 1 s new-device window.
        let age = ContinuousClock.now - loaded
        if age < .milliseconds(1300) { try await Task.sleep(for: .milliseconds(1300) - age) }

        try world.server.setDefaultSink("speakers")
        try await music.waitForLine("session: route changed (override)")
        try await settle(0.8)
        var audio = try await speakers.snapshot()
        #expect(abs(audio.level(.left, audio.tail(0.4)) + 12) < 1, "the music plays on the chosen sink")
        #expect(try await music.session()?.producingSound == true)

        try world.server.setDefaultSink(world.server.sinkName)
        try await sessionPoll("a second override") {
            music.sessionLines.filter { $0 == "session: route changed (override)" }.count == 2
        }
        try await settle(0.8)
        audio = try await main.stop()
        #expect(abs(audio.level(.left, audio.tail(0.4)) + 12) < 1, "the music plays on the main sink again")
        _ = try await speakers.stop()

        // Removing a sink that is not in use changes nothing for the app.
        try world.server.unloadModule(module)
        try await settle(0.6)
        #expect(try await music.session()?.producingSound == true)
        // As above: its own categoryChange line comes or not, by a start-up race.
        #expect(music.linesFromOthers.filter { $0.hasPrefix("session: route changed") }
                == ["session: route changed (override)", "session: route changed (override)"], "\(music.lines)")
    }

    /// A paused player is not Playing (DESIGN: desktops follow PlaybackStatus).
    @Test("after its device went away the player is Paused on MPRIS, and play resumes it on the remaining sink")
    func removedDevicePausesOnMPRIS() async throws {
        let world = try await SessionWorld()
        let module = try world.server.loadNullSink(name: "usb")
        try world.server.setDefaultSink("usb")
        let music = try world.play("music", side: .left)
        try await music.waitUntilPlaying()
        #expect(try await music.playbackStatus() == "Playing")
        try world.server.unloadModule(module)
        try await music.waitForLine("session: route changed (oldDeviceUnavailable)")
        try await music.waitForSession("silent") { !$0.producingSound }
        // The stream falls silent as its sink goes; the queue's pause for the route change
        // comes after, and its PlaybackStatus after that. Polled, not a fixed wait: on a
        // loaded machine they can come well after the silence.
        try await sessionPoll("MPRIS PlaybackStatus Paused after the device in use went away", timeout: 5) {
            try await music.playbackStatus() == "Paused"
        }

        let main = try await world.capture()
        let play = try await world.playerctl("-p", "music", "play")
        #expect(play.status == 0, "\(play.stderr)")
        try await music.waitUntilPlaying()
        try await settle(0.5)
        let audio = try await main.stop()
        #expect(abs(audio.level(.left, audio.tail(0.3)) + 12) < 1, "play resumes on the remaining sink")
        #expect(try await music.playbackStatus() == "Playing")
    }
}
