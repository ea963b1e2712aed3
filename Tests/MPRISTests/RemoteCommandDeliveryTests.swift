import DBus
import Foundation
import MPRIS
import Testing
import TestSupport

/// Remote commands reach enabled handlers before any now-playing info is set, as iOS
/// delivers remote-control events to an app that set none (issue 11, item 11). Driven by
/// real MPRIS clients (playerctl, gdbus) against an in-process player on a private bus.
@Suite("Remote commands without now-playing info")
struct RemoteCommandDeliveryTests {
    @Test("playerctl's play, pause, play-pause, stop, next, previous and relative seek reach the handlers")
    func deliveredWithoutInfo() async throws {
        let f = try await PlayerFixture()
        #expect(f.nowPlaying.nowPlayingInfo == nil)
        let log = Locked<[String]>([])
        f.enableAll(log: log)
        f.commands.togglePlayPauseCommand.addTarget { event in
            log.withLock { $0.append(event.command.rawValue) }
            return .success
        }
        f.commands.seekCommand.addTarget { event in
            log.withLock { $0.append("seek \(event.offset)") }
            return .success
        }
        let all = try await f.all()
        for key in ["CanPlay", "CanPause", "CanSeek", "CanGoNext", "CanGoPrevious"] {
            #expect(all[key] == .boolean(true), "\(key) follows the enabled handler")
        }
        #expect(all["PlaybackStatus"] == .string("Stopped"), "still nothing loaded")

        let environment = ["DBUS_SESSION_BUS_ADDRESS": f.bus.address, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        for command in [["play"], ["pause"], ["play-pause"], ["stop"], ["next"], ["previous"], ["position", "5+"]] {
            let result = try await run("playerctl", ["--player=test"] + command, environment: environment)
            #expect(result.status == 0, "playerctl \(command): \(result.stderr)")
        }
        let gdbus = try await run("gdbus", ["call", "--session", "--dest", f.player.busName, "--object-path", "/org/mpris/MediaPlayer2",
                                            "--method", "org.mpris.MediaPlayer2.Player.Seek", "--", "-2000000"], environment: environment)
        #expect(gdbus.status == 0, "\(gdbus.stderr)")
        try await eventually("every command delivered") { log.value.count == 8 }
        #expect(log.value == ["play", "pause", "togglePlayPause", "stop", "nextTrack", "previousTrack", "seek 5.0", "seek -2.0"])
    }

    @Test("a disabled command stays undelivered and its Can* false, info or not")
    func disabledStaysIgnored() async throws {
        let f = try await PlayerFixture()
        let log = Locked<[String]>([])
        f.enableAll(log: log)
        f.commands.playCommand.isEnabled = false
        f.commands.nextTrackCommand.isEnabled = false
        let all = try await f.all()
        #expect(all["CanPlay"] == .boolean(false) && all["CanGoNext"] == .boolean(false))
        #expect(all["CanPause"] == .boolean(true))
        try await f.call("Play")
        try await f.call("Next")
        try await f.call("Pause")
        #expect(log.value == ["pause"])
    }
}
