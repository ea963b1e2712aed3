import Earshot
import Foundation
import Testing
import TestSupport

/// A system sound that nobody keeps plays whole: the README's one-liner. Part of the
/// `SystemSoundTests` suite, so that `scripts/test` runs it in the real-time audio pass.
extension SystemSoundTests {
    @Test("a one-liner play, the sound kept by nobody, is heard whole")
    func oneLinerPlaysWhole() async throws {
        let duration = 0.5
        let url = URL(fileURLWithPath: try TestSignals.sine(frequency: 1000, duration: duration))
        let audio = try await captured {
            try SystemSound(contentsOf: url).play()
            try await sleep(duration + 0.3)
        }
        let regions = audio.activeRegions()
        let heard = regions.reduce(0) { $0 + $1.duration }
        // Disposed by `deinit` at once, it was cut off after a few tens of milliseconds.
        #expect(heard.isClose(to: duration, within: 0.01), "heard \(heard) s of \(duration) s in \(regions)")
    }

    @Test("dispose() stops a playing sound at once")
    func disposeStops() async throws {
        let duration = 1.0
        let sound = try SystemSound(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 1000, duration: duration)))
        let audio = try await captured {
            try sound.play()
            try await sleep(0.3)
            sound.dispose()
            #expect(!sound.isPlaying)
            try await sleep(0.4)
        }
        let heard = audio.activeRegions().reduce(0) { $0 + $1.duration }
        #expect(heard > 0.1 && heard < 0.5, "heard \(heard) s of a \(duration) s sound disposed after 0.3 s")
    }
}
