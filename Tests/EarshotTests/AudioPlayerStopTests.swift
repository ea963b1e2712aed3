import Earshot
import Foundation
import Testing
import TestSupport

/// `stop()` as `AVAudioPlayer.stop()`: it releases what `prepareToPlay()` acquired but
/// keeps the position, so `play()` continues. Part of the `AudioPlayerTests` suite, so
/// that `scripts/test` runs it in the pass of real-time audio tests, one at a time.
extension AudioPlayerTests {
    @Test("stop keeps currentTime and play continues from there: the file is heard once in all")
    func stopThenPlayContinues() async throws {
        let duration = 2.0
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 1000, duration: duration)))
        var stoppedAt = 0.0
        let audio = try await captured {
            #expect(player.play())
            try await Task.sleep(for: .milliseconds(700))
            player.stop()
            stoppedAt = player.currentTime
            #expect(!player.isPlaying)
            try await Task.sleep(for: .milliseconds(400))
            #expect(player.currentTime == stoppedAt, "stopped, the position stays")
            #expect(player.play())
            try await waitUntilFinished(player)
        }
        #expect(stoppedAt > 0.3 && stoppedAt < duration - 0.3, "stopped at \(stoppedAt) s, not rewound")
        let regions = audio.activeRegions()
        // One pause: the 0.4 s while stopped (a dropout on a loaded machine can split a
        // region too, but for far less).
        let gaps = zip(regions, regions.dropFirst()).map { $1.start - $0.end }
        #expect(gaps.filter { $0 > 0.25 }.count == 1, "\(regions)")
        let heard = regions.reduce(0) { $0 + $1.duration }
        // Rewinding would play the whole file again after the stop: 0.7 s + 2 s.
        #expect(heard.isClose(to: duration, within: 0.1), "heard \(heard) s in \(regions)")
    }
}
