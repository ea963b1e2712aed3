import Earshot
import DBus
import MPRIS
import Foundation
import Testing
import TestSupport

/// Loops are discontinuities: each wrap of a looping item restarts the now-playing elapsed
/// time, and the center reports a discontinuity (which `MPRISPlayer` sends as `Seeked`).
/// Part of the `AudioPlayerTests` suite, so that `scripts/test` runs it in the real-time
/// audio pass.
extension AudioPlayerTests {
    @Test("a queue repeating one item restarts the now-playing elapsed time at every wrap")
    func loopRestartsElapsedTime() async throws {
        let duration = 0.6
        let tone = URL(fileURLWithPath: try TestSignals.sine(frequency: 1000, duration: duration))
        let center = NowPlayingInfoCenter()
        let queue = try QueuePlayer(urls: [tone])
        queue.connect(to: center, commands: RemoteCommandCenter())
        queue.repeatMode = .one
        let restarts = Locked<[Double]>([])
        let token = center.observe { change in
            if change.discontinuity, !change.itemChanged, let elapsed = change.info?.elapsedTime {
                restarts.withLock { $0.append(elapsed) }
            }
        }
        _ = try await captured {
            queue.play()
            // Three whole plays: two wraps.
            try await sleep(duration * 2.5)
            // Without the republish the position runs on, clamped at the end of the file.
            #expect(center.currentElapsedTime < duration - 0.05, "elapsed \(center.currentElapsedTime) s of \(duration) s")
            queue.pause()
        }
        _ = token
        #expect(restarts.value.count >= 2, "discontinuities at the wraps: \(restarts.value)")
        #expect(restarts.value.allSatisfy { $0 < 0.15 }, "each restarts near 0: \(restarts.value)")
    }

    @Test("a queue repeating one item on MPRIS: every wrap emits Seeked near 0")
    func loopEmitsSeekedOnMPRIS() async throws {
        let duration = 0.6
        let tone = URL(fileURLWithPath: try TestSignals.sine(frequency: 1000, duration: duration))
        let bus = try PrivateBus()
        let service = try DBusConnection(.address(bus.address))
        let client = try DBusConnection(.address(bus.address))
        let center = NowPlayingInfoCenter(), commands = RemoteCommandCenter()
        let mpris = try MPRISPlayer(connection: service, configuration: MPRISConfiguration(appName: "loops", identity: "Loops"),
                                    commandCenter: commands, nowPlayingInfoCenter: center)
        _ = try await mpris.publish()
        let seeked = Locked<[Int64]>([])
        _ = try await client.subscribe(MatchRule(sender: service.uniqueName, path: MPRISPlayer.objectPath)) { message in
            if message.member == "Seeked", let position = try? message.arguments().first?.int64 {
                seeked.withLock { $0.append(position) }
            }
        }
        let queue = try QueuePlayer(urls: [tone])
        queue.connect(to: center, commands: commands)
        queue.repeatMode = .one
        _ = try await captured {
            queue.play()
            try await sleep(duration * 2.5)  // two wraps
            queue.pause()
        }
        try await eventually("two Seeked signals", timeout: 2) { seeked.value.count >= 2 }
        // Positions in microseconds: each wrap restarts near the file's start.
        #expect(seeked.value.prefix(2).allSatisfy { $0 < 150_000 }, "Seeked at \(seeked.value) µs")
    }
}
