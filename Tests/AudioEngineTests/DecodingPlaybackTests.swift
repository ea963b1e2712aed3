import AudioEngine
import Foundation
import Testing
import TestSupport

// AAC items decoded by FFmpeg, played by the engine into the private null sink and captured
// from its monitor (TestSupport/Audio): what a listener hears, not what the decoder returns.

@Suite("Decoding: an AAC album played into the null sink")
struct DecodingPlaybackTests {
    @Test func gaplessAACAlbumPlaysAsOneSweep() async throws {
        let fixtures = try await DecodingFFmpegFixtures.shared()
        // On a loaded machine the device may underrun (the engine counts it), which cuts the
        // capture for reasons other than decoding: such a take is played again, up to 3 times.
        var take = 0
        var audio: CapturedAudio
        var stalls: (underruns: Int, dropouts: Int)
        repeat {
            take += 1
            (audio, stalls) = try await playAlbum(fixtures)
            print("decoding: album take \(take): \(stalls.underruns) underruns, \(stalls.dropouts) dropouts")
        } while stalls.underruns > 0 && take < 3
        #expect(stalls.dropouts == 0, "the decoders kept ahead of the engine")
        #expect(stalls.underruns == 0, "the device ran without underruns in one of 3 takes")
        // One run of sound, as long as the source (3 × 57330 frames = 3.9 s): no gap at the
        // joins (1 ms windows), and no priming or padding played (either would lengthen it).
        let regions = audio.activeRegions(minGap: 0.001, window: 0.001)
        #expect(regions.count == 1, "a gap between items: \(regions)")
        let region = try #require(regions.first)
        #expect(abs(region.duration - 3.9) <= 0.010, "\(regions)")
        // The sweep goes on across the joins: sox's "300-900" rises exponentially over 3.9 s.
        for at in [0.65, 1.3, 1.95, 2.6, 3.25] {
            let expected = 300 * pow(3, at / 3.9)
            let measured = try #require(audio.dominantFrequency(channel: 0, range: (region.start + at - 0.05)..<(region.start + at + 0.05)))
            #expect(abs(measured - expected) < 15, "at \(at) s: \(measured) Hz, expected \(expected)")
        }
    }

    /// Plays the album's items back to back (each queued after the one before) while capturing the sink;
    /// returns the capture and the engine's underruns and the voices' dropouts meanwhile.
    private func playAlbum(_ fixtures: DecodingFFmpegFixtures) async throws -> (CapturedAudio, (underruns: Int, dropouts: Int)) {
        try await withAudio(idleTimeout: 0) { server in
            let capture = try Capture(server: server)
            let engine = AudioEngine.shared
            let voices = try fixtures.albumItems.map { try engine.makeVoice(for: AudioFile(contentsOf: $0)) }
            defer { voices.forEach { $0.dispose() } }
            voices.forEach { $0.prepare() }
            // The decoders buffer ahead on the reader thread before the first voice starts.
            try await Task.sleep(for: .milliseconds(300))
            let finished = Locked<[Bool]>([])
            let failures = Locked<[String]>([])
            for voice in voices {
                voice.setHandlers(onFinished: { ok in finished.withLock { $0.append(ok) } },
                                  onError: { error in failures.withLock { $0.append("\(error)") } })
            }
            let underruns = engine.underrunCount
            let audio = try await capture.record {
                try voices[0].play()
                try voices[1].play(after: voices[0])
                try voices[2].play(after: voices[1])
                let deadline = ContinuousClock.now + .seconds(10)
                while finished.value.count < 3 && failures.value.isEmpty {
                    guard ContinuousClock.now < deadline else { throw TestFailure("the album did not finish in 10 s: \(finished.value)") }
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(failures.value.isEmpty)
                #expect(finished.value == [true, true, true])
                try await Task.sleep(for: .milliseconds(Int((engine.outputLatency + 0.1) * 1000)))
            }
            return (audio, (engine.underrunCount - underruns, voices.reduce(0) { $0 + $1.dropoutCount }))
        }
    }
}
