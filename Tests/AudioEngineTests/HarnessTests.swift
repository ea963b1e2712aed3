import CALSA
import Foundation
import Testing
import TestSupport

/// Proves that the audio harness measures what it claims: first on synthetic arrays (no
/// audio), then with reference players (`aplay` out of process, ALSA in process) playing
/// into private PulseAudio servers while `Capture` records their monitors.
@Suite("Harness", .tags(.inProcessAudio))
struct HarnessTests {
    /// One sample at 48 kHz.
    static let sample = 1.0 / 48000

    // MARK: Analysis, without audio

    @Test func regionsLevelsAndOnsetsOfSyntheticBursts() throws {
        let samples = TestSignals.render([
            .silence(duration: 0.25), .tone(frequency: 1000, duration: 0.5), .silence(duration: 0.5),
            .tone(frequency: 1000, duration: 0.5), .silence(duration: 0.25),
        ])
        let audio = CapturedAudio(samples: samples, sampleRate: 48000, channels: 2)
        #expect(abs(audio.duration - 2.0) < Self.sample)

        let regions = audio.activeRegions()
        try #require(regions.count == 2, "\(regions)")
        // Exact to a sample (a sine starting at phase 0 is silent for its first one).
        let tolerance = 1.01 * Self.sample
        #expect(abs(regions[0].start - 0.25) <= tolerance, "\(regions)")
        #expect(abs(regions[0].end - 0.75) <= tolerance, "\(regions)")
        #expect(abs(regions[1].start - 1.25) <= tolerance, "\(regions)")
        #expect(abs(regions[1].end - 1.75) <= tolerance, "\(regions)")
        #expect(abs(regions.gaps[0] - 0.5) <= 2 * tolerance)
        #expect(abs(regions.totalDuration - 1.0) <= 2 * tolerance)
        // A minimum gap longer than the pause joins the bursts.
        #expect(audio.activeRegions(minGap: 0.6).count == 1)

        #expect(abs(audio.onset()! - 0.25) <= tolerance)
        #expect(abs(audio.onset(after: 0.8)! - 1.25) <= tolerance)
        #expect(audio.onset(after: 1.8) == nil)

        let tone = 0.3..<0.7
        #expect(abs(audio.peakDBFS(channel: 0, range: tone) - -6) < 0.01)
        #expect(abs(audio.sineLevelDBFS(channel: 1, range: tone) - -6) < 0.01)
        #expect(abs(audio.rmsDBFS(range: tone) - (-6 - 3.0103)) < 0.01)
        #expect(audio.rmsDBFS(range: 0..<0.25) == -.infinity)
        #expect(audio.isSilent(range: 0.76..<1.24))
        #expect(!audio.isSilent(range: 0.7..<0.8))
        #expect(audio.dominantFrequency(range: 0..<0.2) == nil)
    }

    @Test func frequencyAccuracyOnSyntheticSines() {
        // Deterministic noise at about −66 dBFS on top of the sine.
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func noise() -> Float {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(Int64(bitPattern: seed >> 11) - (1 << 52)) / Float(1 << 52) * 0.0005
        }
        var worstLong = 0.0
        var worstShort = 0.0
        for frequency in [50.0, 100.5, 440, 997.3, 1000, 4321.7, 15000.2] {
            let samples = TestSignals.render([.tone(frequency: frequency, duration: 1, level: -6)], channels: 1)
                .map { $0 + noise() }
            let audio = CapturedAudio(samples: samples, sampleRate: 48000, channels: 1)
            let long = audio.dominantFrequency()!
            worstLong = max(worstLong, abs(long - frequency))
            for point in audio.frequencyTrack(window: 0.1) {
                worstShort = max(worstShort, abs(point.frequency! - frequency))
            }
        }
        print("Harness: dominantFrequency error, worst of 7 sines: 1 s \(worstLong) Hz, 100 ms windows \(worstShort) Hz")
        #expect(worstLong < 0.05)
        #expect(worstShort < 0.5)
    }

    @Test func frequencyTrackFollowsASteppedTone() throws {
        let samples = TestSignals.render(
            (0..<5).map { .tone(frequency: 200 + 100 * Double($0), duration: 1) }, channels: 2)
        let audio = CapturedAudio(samples: samples, sampleRate: 48000, channels: 2)
        let track = audio.frequencyTrack(window: 0.25)
        #expect(track.count == 20)
        for point in track {
            let expected = TestSignals.steppedToneFrequency(at: point.start)
            #expect(abs(point.frequency! - expected) < 0.5, "\(point)")
            #expect(TestSignals.steppedTonePosition(frequency: point.frequency!) == point.start.rounded(.down))
        }
    }

    @Test func analysisOfThirtySecondsIsFast() throws {
        let samples = TestSignals.render([.stereoTone(left: 440, right: 660, duration: 30)])
        let audio = CapturedAudio(samples: samples, sampleRate: 48000, channels: 2)
        let clock = ContinuousClock()
        var regions: [AudioRegion] = []
        var left: Double?
        var right: Double?
        var level = 0.0
        let elapsed = clock.measure {
            regions = audio.activeRegions()
            left = audio.dominantFrequency(channel: 0)
            right = audio.dominantFrequency(channel: 1)
            level = audio.rmsDBFS()
        }
        print("Harness: regions, 2 frequencies and RMS of 30 s 48 kHz stereo took \(elapsed)")
        try #require(regions.count == 1)
        #expect(abs(regions[0].start) <= 1.01 * Self.sample && abs(regions[0].end - 30) <= 1.01 * Self.sample)
        #expect(abs(left! - 440) < 0.05)
        #expect(abs(right! - 660) < 0.05)
        #expect(abs(level - (-6 - 3.0103)) < 0.01)
        #expect(elapsed < .seconds(10))
    }

    @Test(arguments: [TestSignals.SampleFormat.int16, .float32])
    func wavFilesRoundTrip(format: TestSignals.SampleFormat) async throws {
        let segments: [TestSignals.Segment] = [.stereoTone(left: 300, right: 500, duration: 0.25), .silence(duration: 0.05)]
        let path = try TestSignals.write(segments, sampleRate: 44100, channels: 2, format: format)
        let expected = TestSignals.render(segments, sampleRate: 44100, channels: 2)
        let read = try TestSignals.readWAV(path)
        #expect(read.sampleRate == 44100 && read.channels == 2)
        #expect(read.samples.count == expected.count)
        let worst = zip(read.samples, expected).map { abs($0 - $1) }.max()!
        #expect(worst <= (format == .int16 ? 1.0 / 32767 : 0))

        // sox reads the header the same way.
        let info = try await run("soxi", [path])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("Sample Rate    : 44100"))
        #expect(info.stdout.contains("Channels       : 2"))
        #expect(info.stdout.contains(format == .int16 ? "16-bit Signed Integer PCM" : "32-bit Floating Point PCM"))
    }

    // MARK: Reference players into a private server

    @Test func aplayedSineMeasuresRight() async throws {
        let server = try PulseAudioServer()
        let path = try TestSignals.sine(frequency: 1000, duration: 1.0, level: -6)
        let audio = try await capture(server) { try await aplay(path, server) }
        let regions = audio.activeRegions()
        try #require(regions.count == 1, "\(regions)")
        let region = regions[0]
        let inner = try region.inner(trimming: 0.05)
        let frequencies = (0..<2).map { audio.dominantFrequency(channel: $0, range: inner)! }
        let levels = (0..<2).map { audio.sineLevelDBFS(channel: $0, range: inner) }
        let peaks = (0..<2).map { audio.peakDBFS(channel: $0, range: inner) }
        print(
            "Harness: aplay 1 s 1 kHz −6 dBFS → \(region) (\(region.duration) s), \(frequencies) Hz, level \(levels) dBFS, "
                + "peak \(peaks) dBFS; parec startup lag \(audio.startupLag!) s")
        #expect(abs(region.duration - 1.0) <= 0.03)
        for channel in 0..<2 {
            #expect(abs(frequencies[channel] - 1000) <= 2)
            #expect(abs(levels[channel] - -6) <= 0.5)
            #expect(abs(peaks[channel] - -6) <= 0.5)
        }
        #expect(audio.isSilent(range: 0..<(region.start - 0.001)))
        #expect(audio.isSilent(range: (region.end + 0.001)..<audio.duration))

        // The monitor holds exactly what was played, sample for sample (the file's first
        // sample is 0, so its region starts at its second).
        let reference = try TestSignals.readWAV(path)
        let first = Int((region.start * 48000).rounded()) - 1
        try #require(first >= 0 && first + reference.frameCount <= audio.frameCount)
        let played = audio.channel(0)[first..<(first + reference.frameCount)]
        let worst = zip(played, reference.channel(0)).map { abs($0 - $1) }.max()!
        #expect(worst < 1e-4, "largest difference from the file: \(worst)")
    }

    @Test func steppedToneGivesItsFrequencyEachSecond() async throws {
        let server = try PulseAudioServer()
        let path = try TestSignals.steppedTone(steps: 3)
        let audio = try await capture(server) { try await aplay(path, server) }
        let regions = audio.activeRegions()
        try #require(regions.count == 1, "\(regions)")
        let start = regions[0].start
        #expect(abs(regions[0].duration - 3.0) <= 0.03)
        var measured: [Double] = []
        for second in 0..<3 {
            let range = (start + Double(second) + 0.1)..<(start + Double(second) + 0.9)
            let frequency = audio.dominantFrequency(channel: 0, range: range)!
            measured.append(frequency)
            #expect(abs(frequency - (200 + 100 * Double(second))) <= 1)
            #expect(TestSignals.steppedTonePosition(frequency: frequency) == Double(second))
        }
        let track = audio.frequencyTrack(window: 0.5, range: start..<(start + 3))
        #expect(track.compactMap(\.frequency).map { ($0 / 100).rounded() * 100 } == [200, 200, 300, 300, 400, 400])
        print("Harness: stepped tone via aplay → \(measured) Hz, track \(track)")
    }

    @Test func twoBurstsGiveTwoRegionsAndTheirGap() async throws {
        let server = try PulseAudioServer()
        let path = try TestSignals.write([
            .tone(frequency: 1000, duration: 0.5), .silence(duration: 0.5), .tone(frequency: 1000, duration: 0.5),
        ])
        let audio = try await capture(server) { try await aplay(path, server) }
        let regions = audio.activeRegions()
        try #require(regions.count == 2, "\(regions)")
        print("Harness: two bursts via aplay → \(regions), gap \(regions.gaps[0]) s; parec startup lag \(audio.startupLag!) s")
        #expect(abs(regions.gaps[0] - 0.5) <= 0.03)
        #expect(abs(regions[0].duration - 0.5) <= 0.03)
        #expect(abs(regions[1].duration - 0.5) <= 0.03)
    }

    @Test func floatStereoFileAt44100IsResampledChannelByChannel() async throws {
        let server = try PulseAudioServer()
        let path = try TestSignals.stereoSine(left: 440, right: 880, duration: 0.5, level: -12, sampleRate: 44100, format: .float32)
        let audio = try await capture(server) { try await aplay(path, server) }
        let regions = audio.activeRegions()
        try #require(regions.count == 1, "\(regions)")
        let inner = try regions[0].inner(trimming: 0.05)
        #expect(abs(regions[0].duration - 0.5) <= 0.03)
        #expect(abs(audio.dominantFrequency(channel: 0, range: inner)! - 440) <= 2)
        #expect(abs(audio.dominantFrequency(channel: 1, range: inner)! - 880) <= 2)
        #expect(abs(audio.sineLevelDBFS(channel: 0, range: inner) - -12) <= 0.5)
    }

    @Test func extraNullSinkCanBePluggedMadeDefaultAndUnplugged() async throws {
        let server = try PulseAudioServer()
        #expect(try server.defaultSink() == "earshot_test")
        let module = try server.loadNullSink(name: "earshot_usb")
        #expect(try server.pactl("list", "short", "sinks").contains("earshot_usb"))
        try server.setDefaultSink("earshot_usb")
        #expect(try server.defaultSink() == "earshot_usb")

        // Playback to "default" now lands on the new sink only.
        let main = try Capture(server: server)
        let usb = try Capture(server: server, sink: "earshot_usb")
        try await main.start()
        try await usb.start()
        try await aplay(try TestSignals.sine(frequency: 1000, duration: 0.3), server)
        let onUSB = try await usb.stop()
        let onMain = try await main.stop()
        #expect(abs((onUSB.activeRegions().first?.duration ?? 0) - 0.3) <= 0.03)
        #expect(onMain.isSilent())

        try server.unloadModule(module)
        #expect(try !server.pactl("list", "short", "sinks").contains("earshot_usb"))
        #expect(try server.defaultSink() == "earshot_test")
    }

    @Test func serversRunSideBySideAndLeaveNothingBehind() async throws {
        var pids: [Int32] = []
        do {
            let first = try PulseAudioServer(sinkName: "first")
            let second = try PulseAudioServer(sinkName: "second", sampleRate: 44100)
            #expect(first.socketPath != second.socketPath)
            #expect(try first.listSinks().map(\.name) == ["first"])
            #expect(try second.listSinks().map(\.sampleSpec) == ["s16le 2ch 44100Hz"])
            pids = [first.pid, second.pid]
            #expect(pids.allSatisfy { kill($0, 0) == 0 })
        }
        // Both deinits ran: their daemons are gone (killed and reaped).
        #expect(pids.count == 2 && pids.allSatisfy { kill($0, 0) != 0 })
    }

    // MARK: The shared server, for audio inside the test process

    @Test func withAudioExportsTheSharedServerAndRunsOneAtATime() async throws {
        let events = Locked<[String]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<3 {
                group.addTask {
                    try await withAudio { server in
                        events.withLock { $0.append("enter \(n)") }
                        #expect(String(cString: getenv("PULSE_SERVER")) == server.address)
                        let shared = try PulseAudioServer.shared()
                        #expect(server === shared)
                        try await Task.sleep(for: .milliseconds(30))
                        events.withLock { $0.append("exit \(n)") }
                    }
                }
            }
            try await group.waitForAll()
        }
        let log = events.value
        #expect(log.count == 6)
        for pair in stride(from: 0, to: log.count, by: 2) {
            #expect(log[pair].hasPrefix("enter") && log[pair + 1] == "exit" + log[pair].dropFirst(5), "\(log)")
        }
    }

    @Test func alsaInsideTheTestProcessPlaysToTheSharedServer() async throws {
        try await withAudio { server in
            let capture = try Capture(server: server)
            try await capture.start()
            let sine = TestSignals.render([.tone(frequency: 1000, duration: 0.5)])
            let called = ContinuousClock.now
            try await playThroughALSA(sine, device: "default")
            let audio = try await capture.stop()
            let regions = audio.activeRegions()
            try #require(regions.count == 1, "\(regions)")
            // From the call to the first sound: thread start, snd_pcm_open, prebuffering.
            let latency = regions[0].start - audio.time(of: called)!
            print("Harness: in-process ALSA “default” 0.5 s → \(regions[0]); \(latency) s after the call")
            #expect(latency > -0.05 && latency < 2)
            #expect(abs(regions[0].duration - 0.5) <= 0.03)
            #expect(abs(audio.dominantFrequency(range: regions[0].start..<regions[0].end)! - 1000) <= 2)
        }
    }

    // MARK: Helpers

    /// Records the server's main sink while `body` runs.
    func capture(_ server: PulseAudioServer, _ body: () async throws -> Void) async throws -> CapturedAudio {
        try await Capture(server: server).record(body)
    }

    /// Plays a file with `aplay` through ALSA's `default` device (the pulse plugin).
    func aplay(_ path: String, _ server: PulseAudioServer) async throws {
        let result = try await run("aplay", ["-q", "-D", "default", path], environment: server.environment)
        #expect(result.status == 0, "aplay: \(result.stderr)")
    }

    /// Plays interleaved float stereo at 48 kHz through ALSA in this process, on a thread
    /// of its own (the writes block in real time).
    func playThroughALSA(_ samples: [Float], device: String) async throws {
        let error: String? = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var pcm: OpaquePointer?
                var status = snd_pcm_open(&pcm, device, SND_PCM_STREAM_PLAYBACK, 0)
                guard status >= 0, let pcm else {
                    continuation.resume(returning: "snd_pcm_open: \(String(cString: snd_strerror(status)))")
                    return
                }
                defer { snd_pcm_close(pcm) }
                status = snd_pcm_set_params(pcm, SND_PCM_FORMAT_FLOAT_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 2, 48000, 1, 100_000)
                guard status >= 0 else {
                    continuation.resume(returning: "snd_pcm_set_params: \(String(cString: snd_strerror(status)))")
                    return
                }
                var frame = 0
                let frames = samples.count / 2
                while frame < frames {
                    let written = samples.withUnsafeBufferPointer { p in
                        snd_pcm_writei(pcm, p.baseAddress! + frame * 2, snd_pcm_uframes_t(frames - frame))
                    }
                    if written < 0 {
                        if snd_pcm_recover(pcm, Int32(written), 1) < 0 {
                            continuation.resume(returning: "snd_pcm_writei: \(String(cString: snd_strerror(Int32(written))))")
                            return
                        }
                    } else {
                        frame += written
                    }
                }
                snd_pcm_drain(pcm)
                continuation.resume(returning: nil)
            }
        }
        if let error { throw TestFailure(error) }
    }
}
