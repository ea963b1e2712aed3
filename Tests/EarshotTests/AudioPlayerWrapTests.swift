import Earshot
import Foundation
import Testing
import TestSupport

/// The engine's wrap event: a looping `AudioPlayer` bound to a now-playing center restarts
/// the elapsed time at each wrap as it is heard (a discontinuity: MPRIS `Seeked`), with no
/// timer of its own. Part of the `AudioPlayerTests` suite (the real-time audio pass).
extension AudioPlayerTests {
    @Test("numberOfLoops 2 on a bound AudioPlayer: two wraps, each restarting the elapsed time near 0, heard as they happen")
    func wrapsRestartElapsedTime() async throws {
        let duration = 0.5
        let tone = URL(fileURLWithPath: try TestSignals.sine(frequency: 1000, duration: duration))
        let player = try AudioPlayer(contentsOf: tone)
        player.numberOfLoops = 2
        let center = NowPlayingInfoCenter()
        player.connect(to: center, commands: RemoteCommandCenter())
        let wraps = Locked<[(elapsed: Double, at: Double)]>([])
        let begin = Date()
        let token = center.observe { change in
            // While playing: the rewind after the end (paused at 0) is not a wrap.
            if change.discontinuity, change.info?.playbackState == .playing, let elapsed = change.info?.elapsedTime {
                wraps.withLock { $0.append((elapsed, Date().timeIntervalSince(begin))) }
            }
        }
        _ = try await captured {
            #expect(player.play())
            try await waitUntilFinished(player)
        }
        _ = token
        let seen = wraps.value
        #expect(seen.count == 2, "one discontinuity per wrap: \(seen)")
        #expect(seen.allSatisfy { $0.elapsed < 0.15 }, "each restarts near 0: \(seen)")
        if seen.count == 2 {
            // Heard a file's length apart (not when the reader decoded ahead).
            #expect(abs(seen[1].at - seen[0].at - duration) < 0.15, "wraps \(seen[1].at - seen[0].at) s apart, not \(duration) s")
        }
    }
}
