import AudioEngine
import Foundation
import Testing
import TestSupport

// Network streams played by the engine into the private null sink and captured from its
// monitor: what a listener hears while the data arrives, and the voice's starved/refilled
// signal (Voice+Supply.swift) when the server stalls.

@Suite("Network streams played into the null sink", .tags(.inProcessAudio))
struct NetworkPlaybackTests {
    @Test func aProgressiveMP3PlaysWhileItArrives() async throws {
        let fixtures = try await NetworkFixtures.shared()
        let server = try await HTTPTestServer(.files(directory: fixtures.directory))
        var problems: [String] = []
        // The shared 2-core machine can starve the sound server: a take with underruns is played again.
        for take in 1...3 {
            let (audio, underruns, supply) = try await play(server.url("tone.mp3"))
            problems = []
            let regions = audio.activeRegions(minGap: 0.005, window: 0.001)
            if underruns > 0 { problems.append("\(underruns) underruns") }
            if regions.count != 1 {
                problems.append("not one run of sound: \(regions)")
            } else if let region = regions.first {
                if abs(region.duration - NetworkFixtures.seconds) > 0.010 { problems.append("\(region.duration) s, not \(NetworkFixtures.seconds) s") }
                let measured = (try? region.inner(trimming: 0.5)).flatMap { audio.dominantFrequency(channel: 0, range: $0) } ?? 0
                if abs(measured - NetworkFixtures.frequency) >= 5 { problems.append("\(measured) Hz") }
            }
            // A file served at once never leaves the voice waiting once it plays.
            if supply.contains(true) && supply.last != false { problems.append("left starved: \(supply)") }
            print("network: progressive take \(take): \(problems.isEmpty ? "as the source" : problems.joined(separator: "; "))")
            if problems.isEmpty { break }
        }
        for problem in problems { Issue.record(Comment(rawValue: problem)) }
    }

    @Test func aStallStarvesTheVoiceThenItRefillsAndPlaysOn() async throws {
        let fixtures = try await NetworkFixtures.shared()
        let size = fixtures.size(fixtures.mp3)
        var problems: [String] = []
        // As above, a take the sound server underran in is played again (a new server each take).
        for take in 1...3 {
            // Half the file at once (2 s, less than the stream's buffer), then 3 s of nothing.
            let server = try await HTTPTestServer(.stall(file: fixtures.mp3, atByte: size / 2, seconds: 3))
            let (audio, underruns, supply) = try await play(server.url())
            problems = []
            if underruns > 0 { problems.append("\(underruns) underruns") }
            // Starved once the first half has played, refilled when the rest came.
            if supply.first != true || supply.last != false { problems.append("supply reports \(supply), not starved then refilled") }
            // Heard: the first part, a silence while waiting, then the rest; all of the file.
            let regions = audio.activeRegions(minGap: 0.5, window: 0.005)
            let total = regions.reduce(0) { $0 + $1.duration }
            if regions.count != 2 { problems.append("not two runs of sound: \(regions)") }
            if abs(total - NetworkFixtures.seconds) >= 0.1 { problems.append("heard \(total) s: \(regions)") }
            print("network: stall take \(take): \(problems.isEmpty ? "starved, refilled, all heard" : problems.joined(separator: "; "))")
            if problems.isEmpty { break }
        }
        for problem in problems { Issue.record(Comment(rawValue: problem)) }
    }

    /// Plays `url` into the sink; returns the capture, the underruns meanwhile and the voice's
    /// starved (true) / refilled (false) reports in order.
    private func play(_ url: String) async throws -> (CapturedAudio, Int, [Bool]) {
        try await withAudio(idleTimeout: 0) { server in
            let capture = try Capture(server: server)
            let engine = AudioEngine.shared
            let voice = try engine.makeVoice(for: await openStream(url))
            defer { voice.dispose() }
            let supply = Locked<[Bool]>([])
            voice.setSupplyHandler { starved in supply.withLock { $0.append(starved) } }
            let finished = Locked<Bool?>(nil)
            voice.setHandlers(onFinished: { ok in finished.withLock { $0 = ok } }, onError: { _ in })
            let underruns = engine.underrunCount
            let audio = try await capture.record {
                try voice.play()
                let deadline = ContinuousClock.now + .seconds(20)
                while finished.value == nil {
                    guard ContinuousClock.now < deadline else { throw TestFailure("\(url) did not finish in 20 s") }
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(finished.value == true)
                try await Task.sleep(for: .milliseconds(Int((engine.outputLatency + 0.1) * 1000)))
            }
            return (audio, engine.underrunCount - underruns, supply.value)
        }
    }
}
