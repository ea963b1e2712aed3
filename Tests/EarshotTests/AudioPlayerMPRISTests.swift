@testable import Earshot
import SessionPolicy
import Foundation
import Testing
import TestSupport

/// An `AudioPlayer` bound with `connect(to:commands:)` and published on MPRIS, interrupted by
/// another process (`earshot play` in the playback category): `playerctl`, another process
/// too, reads Paused with the position still while it is interrupted, and Playing after.
/// Part of the `AudioPlayerTests` suite (the real-time audio pass).
extension AudioPlayerTests {
    @Test("another process interrupts a bound AudioPlayer: playerctl reads Paused and a still position, then Playing")
    func interruptedPlayerOnMPRIS() async throws {
        try await withSharedAudio(idleTimeout: 0) { _ in
            let bus = try PrivateBus()
            let session = AudioSession(appName: "boundplayer", bus: .address(bus.address))
            session.makeFollowed()
            defer { session.unfollow() }
            let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: try TestSignals.sine(frequency: 1000, duration: 10)))
            let center = NowPlayingInfoCenter(), commands = RemoteCommandCenter()
            center.nowPlayingInfo = NowPlayingInfo(title: "Bound by hand", duration: player.duration)
            player.connect(to: center, commands: commands)
            let mpris = try MPRISPlayer(connection: try await session.connection(),
                                        configuration: MPRISConfiguration(appName: "boundplayer", identity: "Bound"),
                                        commandCenter: commands, nowPlayingInfoCenter: center)
            _ = try await mpris.publish()
            @Sendable func playerctl(_ arguments: String...) async throws -> String {
                try await run("/usr/bin/playerctl", ["-p", "boundplayer"] + arguments, environment: bus.environment, timeout: 10).output
            }

            #expect(player.play())
            try await eventually("the arbiter to see the player's session sounding", timeout: 5) {
                guard let arbiter = session.state.withLock({ $0.hosted }),
                      let name = try? await session.connection().uniqueName else { return false }
                return arbiter.policy[SessionID(name)]?.isProducingSound == true
            }
            #expect(try await playerctl("status") == "Playing")

            let game = try Child(Paths.earshot, ["play", "--name", "game", "--category", "playback",
                                                 try TestSignals.sine(frequency: 500, duration: 2)], environment: bus.environment)
            try await eventually("the player to be interrupted", timeout: 6) { !player.isPlaying }
            try await eventually("playerctl to read Paused", timeout: 3) { try await playerctl("status") == "Paused" }
            // The pause first publishes its estimate, then, once the output's flush said what
            // was heard (one round trip to the server), that: a settle time, then it is still.
            try await sleep(0.2)
            let first = try await playerctl("position")
            try await sleep(0.5)
            #expect(try await playerctl("position") == first, "the position stands still while interrupted")
            #expect(try await playerctl("metadata", "title") == "Bound by hand", "the app's own info")

            #expect(try await game.wait(timeout: 8) == 0, "the interrupter plays its 2 s and exits: \(game.stderr)")
            try await eventually("the player to resume", timeout: 6) { player.isPlaying }
            try await eventually("playerctl to read Playing", timeout: 3) { try await playerctl("status") == "Playing" }
            player.stop()
            mpris.unpublish()
        }
    }
}
