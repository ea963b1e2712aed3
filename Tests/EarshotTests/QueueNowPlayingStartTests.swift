import Earshot
import AudioEngine
import Foundation
import Platform
import Testing
import TestSupport

/// Now playing from a queue's play to its first frame heard. Part of the `QueuePlayerTests`
/// suite (the in-process real-time audio pass).
extension QueuePlayerTests {
    /// One update of the center, as its observer saw it, and when (monotonic seconds).
    struct Update: Sendable {
        let at: Double
        let elapsed: Double
        let rate: Double
        let discontinuity: Bool
    }

    @Test("a play's position stands still in now playing until the first frame is heard, then runs from there: never back, never a seek")
    func nowPlayingRunsFromTheFirstFrameHeard() async throws {
        try await withSharedAudio(idleTimeout: 0) { _ in
            // At 44.1 kHz: the engine resamples it (as it does most music) at 48 kHz.
            let queue = try QueuePlayer(urls: [URL(fileURLWithPath: try TestSignals.sine(frequency: 440, duration: 3, sampleRate: 44100))])
            let center = NowPlayingInfoCenter()
            let updates = Locked<[Update]>([])
            let token = center.observe { change in
                guard let info = change.info else { return }
                let update = Update(at: MonotonicClock.seconds(), elapsed: info.elapsedTime, rate: info.playbackRate,
                                    discontinuity: change.discontinuity)
                updates.withLock { $0.append(update) }
            }
            queue.connect(to: center, commands: RemoteCommandCenter())
            queue.play()
            try await eventually("the queue's first frame to be heard", timeout: 5) { (center.nowPlayingInfo?.playbackRate ?? 0) > 0 }
            try await sleep(1)
            token.cancel()
            queue.removeAllItems()

            let seen = updates.value
            // Between two updates the center extrapolates at the earlier one's rate; an update
            // below that is the position going back (MPRIS: Position jumps back, and Seeked
            // when it is more than 0.1 s).
            for (before, after) in zip(seen, seen.dropFirst()) {
                let predicted = before.elapsed + before.rate * (after.at - before.at)
                #expect(after.elapsed >= predicted - 0.010,
                        "now playing went back from \(predicted) s to \(after.elapsed) s (updates: \(seen))")
            }
            #expect(!seen.contains { $0.discontinuity }, "a plain play is not a seek: \(seen)")
        }
    }
}
