import AudioEngine
import Foundation
import Testing
import TestSupport

/// The engine's period and sample rate as an app prefers them (`AudioSession`'s
/// `preferredIOBufferDuration` and `preferredSampleRate`): asked of the sound server,
/// read back as granted, seen by the server (`pactl list sink-inputs`), and the sound still
/// whole on the shared PulseAudio server (48 kHz, no rewinds: a pause cannot be undone in
/// the sink).
@Suite("AudioEngine buffering as preferred", .serialized, .tags(.inProcessAudio))
struct SoundServerBufferTests {
    /// One `pactl list sink-inputs` block: its header fields (`Sample Specification`,
    /// `Buffer Latency`, …) and its properties.
    struct SinkInput {
        var fields: [String: String] = [:]
        var properties: [String: String] = [:]

        /// `Buffer Latency` or `Sink Latency` in seconds.
        func latency(_ field: String) -> Double? {
            fields[field].flatMap { Double($0.split(separator: " ").first ?? "") }.map { $0 / 1e6 }
        }
    }

    static func sinkInputs(_ server: PulseAudioServer) throws -> [SinkInput] {
        var result: [SinkInput] = []
        for line in try server.pactl("list", "sink-inputs").split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("Sink Input #") {
                result.append(SinkInput())
            } else if let equals = text.range(of: " = "), !result.isEmpty {
                let value = String(text[equals.upperBound...]).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                result[result.count - 1].properties[String(text[..<equals.lowerBound])] = value
            } else if let colon = text.range(of: ": "), !result.isEmpty {
                result[result.count - 1].fields[String(text[..<colon.lowerBound])] = String(text[colon.upperBound...])
            }
        }
        return result
    }

    /// This process's stream named `name`.
    static func ownStream(_ server: PulseAudioServer, named name: String) throws -> SinkInput? {
        try sinkInputs(server).last { $0.properties["application.process.id"] == String(getpid()) && $0.properties["application.name"] == name }
    }

    static func engine(_ name: String) -> AudioEngine {
        var configuration = AudioEngine.Configuration()
        configuration.identity = .init(applicationName: name)
        configuration.idleRelease = 0.5
        configuration.logsOutputChoice = false
        return AudioEngine(configuration: configuration)
    }

    /// An engine named `name` asking for 100 ms periods, and a voice of a 4 s 600 Hz tone in it.
    static func hundredMillisecondPeriods(_ name: String) throws -> (engine: AudioEngine, voice: Voice) {
        let engine = Self.engine(name)
        engine.setPreferredIOBufferDuration(0.1)
        return (engine, try engine.makeVoice(for: AudioFile(contentsOf: TestSignals.sine(frequency: 600, duration: 4))))
    }

    @Test("a preferred IO buffer duration is asked of the server, granted, reported, and the tone plays whole",
          arguments: [0.005, 0.1])
    func preferredDurationIsGranted(seconds: Double) async throws {
        try await withAudio(idleTimeout: 0) { server in
            let name = "Buffer Test \(Int(seconds * 1000)) ms"
            let engine = Self.engine(name)
            #expect(engine.setPreferredIOBufferDuration(seconds) == seconds)
            let voice = try engine.makeVoice(for: AudioFile(contentsOf: TestSignals.sine(frequency: 700, duration: 1.5, level: -6)))
            defer { voice.dispose() }
            let capture = try Capture(server: server)
            var stream: SinkInput?
            let audio = try await capture.record {
                try voice.play()
                try await Task.sleep(for: .milliseconds(600))
                stream = try Self.ownStream(server, named: name)
                try await eventually("the tone to end", timeout: 5) { !voice.isPlaying }
                // A voice stops playing when its last frame is mixed; that frame is heard an
                // output latency later (about 200 ms with 100 ms periods): the capture runs on
                // until then. (150 ms flat cut the long-buffer tone 12–15 ms short.)
                try await Task.sleep(for: .milliseconds(Int((engine.outputLatency + 0.15) * 1000)))
            }
            let granted = engine.ioBufferDuration
            let seen = try #require(stream, "no sink input named \(name)")
            let buffer = try #require(seen.latency("Buffer Latency"), "\(seen.fields)")
            let sink = try #require(seen.latency("Sink Latency"), "\(seen.fields)")
            let regions = audio.activeRegions()
            print(String(format: "Buffer %.1f ms: granted period %.2f ms; pactl: buffer latency %.1f ms, sink latency %.1f ms; output latency %.1f ms; %@; %d underruns",
                         seconds * 1000, granted * 1000, buffer * 1000, sink * 1000, engine.outputLatency * 1000, "\(regions)", engine.underrunCount))
            // The server grants the request size asked (PulseAudio keeps it; it may round to
            // a frame or raise a tiny one to its minimum).
            #expect(granted >= seconds * 0.9 && granted <= max(seconds * 1.1, 0.003), "granted \(granted) s for \(seconds) s")
            // The server's queue holds about two periods, the sink at most 8 ms (plus its block).
            #expect(engine.outputLatency >= 2 * seconds && engine.outputLatency <= 2 * seconds + 0.02, "buffer \(engine.outputLatency) s")
            #expect(buffer <= 2 * seconds + 0.02, "the server buffered \(buffer) s")
            if seconds >= 0.1 { #expect(buffer >= 0.05, "a long period buffers more: \(buffer) s") }
            #expect(sink <= 0.015, "sink latency \(sink) s")
            try #require(regions.count == 1, "\(regions)")
            #expect(abs(regions[0].duration - 1.5) <= 0.02, "\(regions[0].duration) s")
        }
    }

    @Test("with a long buffer, a pause is still heard within 30 ms and currentTime is what the sink played")
    func longBufferPausesAtOnce() async throws {
        try await withAudio(idleTimeout: 0) { server in
            let (engine, voice) = try Self.hundredMillisecondPeriods("Buffer Pause Test")
            defer { voice.dispose() }
            let pause = try await PauseMeasurement(voice, playing: .milliseconds(1300), record: Capture(server: server).record)
            try #require(!pause.audio.activeRegions().isEmpty)
            let (heard, atPause, settled) = (pause.heard, pause.atPause, pause.settled)
            print(String(format: "Buffer pause: period %.1f ms, heard %.4f s; currentTime %.4f s at the pause call, %.4f s after",
                         engine.ioBufferDuration * 1000, heard, atPause, settled))
            #expect(engine.ioBufferDuration >= 0.09)
            #expect(abs(settled - heard) <= 0.010, "currentTime \(settled) s, the sink played \(heard) s")
            #expect(heard - atPause <= 0.030, "the sound went on \(heard - atPause) s after pause()")
            #expect(heard - atPause >= -0.002, "currentTime was ahead of the sound at the pause: \(atPause) s, heard \(heard) s")
        }
    }

    @Test("with 100 ms periods, a stop is heard within 30 ms, as a pause is")
    func longPeriodStopsAtOnce() async throws {
        try await withAudio(idleTimeout: 0) { server in
            let (engine, voice) = try Self.hundredMillisecondPeriods("Buffer Stop Test")
            defer { voice.dispose() }
            // The issue's bound for a stop, as for a pause. (While the output pulls, the render
            // thread sleeps until the server asks for more; a stop that did not wake it was
            // heard 6–15 ms after the call here, 2.4–3 ms with the wake: within the bound
            // either way on this sink. What the wake fixed shows on a sink that renders far
            // ahead: see `noBusStillPlays` at PulseAudio's defaults.)
            let stop = try await PauseMeasurement(voice, playing: .milliseconds(1300), stopping: true, record: Capture(server: server).record)
            try #require(!stop.audio.activeRegions().isEmpty)
            print(String(format: "Buffer stop: period %.1f ms, heard %.4f s; currentTime %.4f s at the stop call",
                         engine.ioBufferDuration * 1000, stop.heard, stop.atPause))
            #expect(stop.heard - stop.atPause <= 0.030, "the sound went on \(stop.heard - stop.atPause) s after stop()")
            #expect(stop.settled == 0, "a stop goes back to the start")
        }
    }

    @Test("with a long buffer, voices queued one after another stay gapless, and finish when heard")
    func longBufferStaysGapless() async throws {
        try await withAudio(idleTimeout: 0) { server in
            let engine = Self.engine("Buffer Gapless Test")
            engine.setPreferredIOBufferDuration(0.1)
            // Three tones of one frequency, 0.7 s each (one at 44.1 kHz, resampled): heard as
            // one 2.1 s tone when nothing is lost or added between them.
            let paths = [try TestSignals.sine(frequency: 800, duration: 0.7, level: -6),
                         try TestSignals.sine(frequency: 800, duration: 0.7, level: -6, sampleRate: 44100),
                         try TestSignals.sine(frequency: 800, duration: 0.7, level: -6)]
            let voices = try paths.map { try engine.makeVoice(for: AudioFile(contentsOf: $0)) }
            defer { voices.forEach { $0.dispose() } }
            let finished = Locked<[Double]>([])
            for voice in voices {
                voice.setHandlers(onFinished: { _ in finished.withLock { $0.append(engine.deviceCurrentTime) } }, onError: nil)
            }
            let capture = try Capture(server: server)
            var started = 0.0
            let audio = try await capture.record {
                try voices[0].play()
                started = engine.deviceCurrentTime
                try voices[1].play(after: voices[0])
                try voices[2].play(after: voices[1])
                try await eventually("the three to finish", timeout: 8) { finished.value.count == 3 }
                try await Task.sleep(for: .milliseconds(150))
            }
            let regions = audio.activeRegions()
            print(String(format: "Buffer gapless: %@; finished at %@ s after the start; %d underruns, %d dropouts", "\(regions)",
                         finished.value.map { String(format: "%.3f", $0 - started) }.joined(separator: ", "), engine.underrunCount,
                         voices.reduce(0) { $0 + $1.dropoutCount }))
            try #require(regions.count == 1, "\(regions)")
            #expect(abs(regions[0].duration - 2.1) <= 0.02, "\(regions[0].duration) s")
            // The last one finishes when its end is heard, not when it was mixed (about 200 ms earlier).
            let last = try #require(finished.value.last)
            #expect(last - started >= 2.1 - 0.02, "finished \(last - started) s after the start")
        }
    }

    @Test("a new period applies when the stream next starts after silence: the open output is reopened with it")
    func newPeriodAppliesAtNextStart() async throws {
        try await withAudio(idleTimeout: 0) { server in
            let engine = Self.engine("Buffer Reopen Test")
            let first = try engine.makeVoice(for: AudioFile(contentsOf: TestSignals.sine(frequency: 500, duration: 0.4)))
            defer { first.dispose() }
            let second = try engine.makeVoice(for: AudioFile(contentsOf: TestSignals.sine(frequency: 900, duration: 1)))
            defer { second.dispose() }
            second.prepare()
            let capture = try Capture(server: server)
            var before = 0.0, openAtSecond = false
            let audio = try await capture.record {
                try first.play()
                try await eventually("the first tone to end", timeout: 5) { !first.isPlaying }
                try await Task.sleep(for: .milliseconds(150))
                before = engine.ioBufferDuration
                engine.setPreferredIOBufferDuration(0.05)
                #expect(engine.ioBufferDuration == before, "granted only when the output reopens")
                openAtSecond = engine.isDeviceOpen
                try second.play()
                try await eventually("the second tone to end", timeout: 5) { !second.isPlaying }
                try await Task.sleep(for: .milliseconds(150))
            }
            print(String(format: "Buffer reopen: period %.2f ms, then %.2f ms; output open at the second play: %@; %@",
                         before * 1000, engine.ioBufferDuration * 1000, "\(openAtSecond)", "\(audio.activeRegions())"))
            #expect(abs(before - 0.016) <= 0.001, "the default period: \(before) s")
            #expect(openAtSecond, "the idle output was still open (released after 0.5 s)")
            #expect(abs(engine.ioBufferDuration - 0.05) <= 0.005, "\(engine.ioBufferDuration) s")
            let regions = audio.activeRegions()
            try #require(regions.count == 2, "\(regions)")
            #expect(abs(regions[0].duration - 0.4) <= 0.02, "\(regions[0].duration) s")
            #expect(abs(regions[1].duration - 1) <= 0.02, "\(regions[1].duration) s")
        }
    }

    @Test("a preferred sample rate is the stream's sample spec, and the tone keeps its pitch")
    func preferredSampleRateIsTheStreamsRate() async throws {
        try await withAudio(idleTimeout: 0) { server in
            let engine = Self.engine("Buffer Rate Test")
            #expect(engine.setPreferredSampleRate(44100) == 44100)
            #expect(engine.sampleRate == 44100, "no voice yet: the rate applies at once")
            let voice = try engine.makeVoice(for: AudioFile(contentsOf: TestSignals.sine(frequency: 1000, duration: 1.2, level: -6)))
            defer { voice.dispose() }
            // With a voice in the engine, another rate waits until no voice is left.
            engine.setPreferredSampleRate(32000)
            #expect(engine.sampleRate == 44100)
            let capture = try Capture(server: server)
            var stream: SinkInput?
            let audio = try await capture.record {
                try voice.play()
                try await Task.sleep(for: .milliseconds(500))
                stream = try Self.ownStream(server, named: "Buffer Rate Test")
                try await eventually("the tone to end", timeout: 5) { !voice.isPlaying }
                try await Task.sleep(for: .milliseconds(150))
            }
            let spec = try #require(stream?.fields["Sample Specification"], "no sink input")
            print("Buffer rate: pactl says \(spec)")
            #expect(spec.hasSuffix(" 44100Hz"), "\(spec)")
            let regions = audio.activeRegions()
            try #require(regions.count == 1, "\(regions)")
            #expect(abs(regions[0].duration - 1.2) <= 0.02, "\(regions[0].duration) s")
            let middle = try regions[0].inner(trimming: 0.1)
            let frequency = try #require(audio.dominantFrequency(channel: 0, range: middle))
            #expect(abs(frequency - 1000) <= 3, "\(frequency) Hz")
            // The last voice gone, a new one takes the waiting rate.
            voice.dispose()
            let next = try engine.makeVoice(for: AudioFile(contentsOf: TestSignals.sine(duration: 0.3)))
            defer { next.dispose() }
            #expect(engine.sampleRate == 32000)
        }
    }

    @Test("preferences are clamped to the documented ranges")
    func preferencesAreClamped() {
        let engine = Self.engine("Buffer Clamp Test")
        #expect(engine.setPreferredIOBufferDuration(0.0001) == 0.0025)
        #expect(engine.setPreferredIOBufferDuration(3) == 0.1)
        #expect(engine.setPreferredIOBufferDuration(.nan) == 0.0025)
        #expect(engine.setPreferredSampleRate(1000) == 8000)
        #expect(engine.setPreferredSampleRate(400_000) == 192_000)
        #expect(engine.sampleRate == 192_000)
    }
}
