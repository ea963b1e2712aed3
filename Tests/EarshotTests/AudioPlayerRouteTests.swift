@testable import Earshot
import AudioRoutes
import Foundation
import Testing
import TestSupport

/// Route changes as iOS delivers them: audio continues, and the app decides from the
/// notification (reason and previous route). On `oldDeviceUnavailable` a queue pauses,
/// as `AVPlayer` does; an `AudioPlayer` plays on, as `AVAudioPlayer` does. In process,
/// with a session on a private bus (it hosts the arbiter) and the shared test sound server;
/// part of the `AudioPlayerTests` suite, so that `scripts/test` runs it in the real-time
/// audio pass, one at a time.
extension AudioPlayerTests {
    @Test("the device in use goes away: the AudioPlayer plays on on the remaining sink, a QueuePlayer pauses",
          .disabled(if: PipeWireServer.isSharedServer, "loads and unloads sinks through PulseAudioServer's module bookkeeping: PulseAudio only"))
    func audioPlayerPlaysOnWhenDeviceGoesAway() async throws {
        try await withAudio(idleTimeout: 0) { server in
            let bus = try PrivateBus()
            let session = AudioSession(appName: "routes", bus: .address(bus.address))
            defer { session.unfollow() }
            let changes = Locked<[RouteChange]>([])
            let watcher = Task {
                for await case .routeChange(let change) in session.notifications() { changes.withLock { $0.append(change) } }
            }
            defer { watcher.cancel() }
            try await session.setCategory(.playback)
            try await session.connect()

            let module = try server.loadNullSink(name: "usb")
            try server.setDefaultSink("usb")
            try await eventually("the route to the new sink", timeout: 5) { !changes.value.isEmpty }

            let tone = URL(fileURLWithPath: try TestSignals.sine(frequency: 1000, duration: 8))
            let player = try AudioPlayer(contentsOf: tone)
            let queue = try QueuePlayer(urls: [tone])
            #expect(player.play())
            queue.play()
            try await eventually("both players to play", timeout: 5) { player.isPlaying && queue.isPlaying }
            try await sleep(0.5)

            let capture = try Capture(server: server)  // the remaining, main sink
            let audio = try await capture.record {
                try server.unloadModule(module)
                try await eventually("oldDeviceUnavailable", timeout: 5) {
                    changes.value.contains { $0.reason == .oldDeviceUnavailable }
                }
                try await sleep(0.8)
            }
            let lost = try #require(changes.value.last { $0.reason == .oldDeviceUnavailable })
            #expect(lost.previousRoute.description.contains("usb"), "the notification carries the previous route: \(lost)")
            #expect(player.isPlaying, "an AudioPlayer plays on across oldDeviceUnavailable; the app decides")
            #expect(!queue.isPlaying, "a QueuePlayer pauses on oldDeviceUnavailable, as AVPlayer does")
            #expect(audio.peakDBFS(range: max(0, audio.duration - 0.4)..<audio.duration) > -20,
                    "the AudioPlayer is heard on the remaining sink")
            player.stop()
            queue.pause()
        }
    }
}
