@testable import Earshot
import AudioEngine
import Foundation
import Testing
import TestSupport

/// `AudioSession`'s preferred IO buffer duration and sample rate: applied to the session's
/// engine, and the values granted read back, as on iOS. Part of the `AudioPlayerTests`
/// suite, so that `scripts/test` runs it in the real-time audio pass.
extension AudioPlayerTests {
    @Test("preferredIOBufferDuration and preferredSampleRate reach the engine; ioBufferDuration and sampleRate say what was granted")
    func sessionPreferencesAreApplied() async throws {
        try await withSharedAudio(idleTimeout: 0) { server in
            var configuration = AudioEngine.Configuration()
            configuration.identity = .init(applicationName: "Session Buffer Test")
            configuration.idleRelease = 0.5
            configuration.logsOutputChoice = false
            let engine = AudioEngine(configuration: configuration)
            let bus = try PrivateBus()
            let session = AudioSession(appName: "session-buffer-test", bus: .address(bus.address), engine: engine)
            #expect(session.sampleRate == 48000)
            #expect(abs(session.ioBufferDuration - 0.016) < 0.0005, "the engine's default period: \(session.ioBufferDuration) s")

            try session.setPreferredSampleRate(44100)
            try session.setPreferredIOBufferDuration(0.04)
            #expect(session.preferredSampleRate == 44100)
            #expect(session.preferredIOBufferDuration == 0.04)
            // No player yet: the rate is adopted at once.
            #expect(session.sampleRate == 44100)
            #expect(throws: AudioSessionError.self) { try session.setPreferredIOBufferDuration(0) }
            #expect(throws: AudioSessionError.self) { try session.setPreferredSampleRate(.infinity) }

            let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 800, duration: 1, level: -6)),
                                         engine: engine)
            let capture = try Capture(server: server)
            let audio = try await capture.record {
                #expect(player.play())
                try await eventually("the player to finish", timeout: 5) { !player.isPlaying }
                try await Task.sleep(for: .milliseconds(150))
            }
            print(String(format: "Session buffer: granted %.2f ms at %.0f Hz; %@", session.ioBufferDuration * 1000, session.sampleRate,
                         "\(audio.activeRegions())"))
            #expect(abs(session.ioBufferDuration - 0.04) <= 0.002, "granted \(session.ioBufferDuration) s")
            #expect(session.sampleRate == 44100)
            // A duration beyond the engine's range is clamped (100 ms), and read back as granted
            // once the output reopens.
            try session.setPreferredIOBufferDuration(0.5)
            #expect(session.preferredIOBufferDuration == 0.5)
            #expect(engine.setPreferredIOBufferDuration(0.5) == 0.1)
            let regions = audio.activeRegions()
            try #require(regions.count == 1, "\(regions)")
            #expect(abs(regions[0].duration - 1) <= 0.02, "\(regions[0].duration) s")
        }
    }
}
