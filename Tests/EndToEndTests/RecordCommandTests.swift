import Foundation
import Testing
import TestSupport

/// `earshot record` against a private sound server (the one `EARSHOT_TEST_SERVER` names:
/// ``TestSoundServerKind``) whose null-sink monitor is the default source, fed by paplay; on
/// a private bus, so it joins an audio session.
@Suite(.serialized, .tags(.sessions)) struct RecordCommandTests {
    @Test("earshot record --duration writes the tone and prints duration, format and peak")
    func recordsForDuration() async throws {
        let kind = TestSoundServerKind.selected
        let server = try kind.start(sinkName: "cli_rec")
        _ = try server.pactl("set-default-source", server.monitorName)
        let bus = try PrivateBus()
        var environment = server.environment
        environment.merge(bus.environment) { $1 }
        // Keeps the null sink running so the monitor carries paplay's tone from its start.
        let keepAlive = try Child("pacat", ["--playback", "--latency-msec=10", "--raw", "/dev/zero"], environment: environment)
        defer { keepAlive.kill(SIGKILL) }
        // Long enough to cover the recording however late `earshot record` starts (a loaded
        // session pass once took 8 s for this test, and 4 s of tone ran out first: "peak
        // silence"); paplay is killed at the end.
        let tone = try TestSignals.sine(frequency: 440, duration: 12, level: -12)
        let player = try Child("paplay", [tone], environment: environment)
        defer { player.kill(SIGKILL) }
        try await Task.sleep(for: .milliseconds(500))
        let folder = try FileManager.default.url(for: .itemReplacementDirectory, in: .userDomainMask,
                                                 appropriateFor: URL(fileURLWithPath: "/tmp"), create: true).path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/take.flac"
        let result = try await run(Paths.earshot, ["record", path, "--duration", "1.2", "--channels", "1"], environment: environment, timeout: 20)
        #expect(result.status == 0, "\(result.stderr)")
        // The mono tone plays on both channels of the sink alike; the server mixes the monitor
        // down to the one channel asked for. PulseAudio averages the two (the tone's -12 dBFS);
        // PipeWire adds them at equal power, each times 1/√2 (+3.01 dB: -9.0 dBFS).
        let peak = kind == .pipeWire ? -9.0 : -12.0
        let prefix = "recorded \(path): 1.20 s, FLAC, 48000 Hz, 1 channel, 16 bits, peak "
        let line = result.stdout.split(separator: "\n").first { $0.hasPrefix(prefix) && $0.hasSuffix(" dBFS") }
        let printed = try #require(line.flatMap { Double($0.dropFirst(prefix.count).dropLast(" dBFS".count)) },
                                   "expected \(prefix)… dBFS: \(result.stdout)")
        // The printed peak is the file's: sox measures it (to the printed tenth).
        let stats = try await run("sox", [path, "-n", "stats"])
        let measured = try #require(stats.stderr.split(separator: "\n").first { $0.hasPrefix("Pk lev dB") }
            .flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }, "sox stats: \(stats.stderr)")
        #expect(abs(printed - measured) <= 0.05 + 1e-9, "printed \(printed) dBFS, sox measured \(measured) dBFS")
        // And the file holds the tone at its level. Within 1 dB, not 0.1: on a loaded
        // machine the recorded peak can read some tenths of a dB above the tone's, likely
        // because a gap in the server's stream makes its resampler ring past the sine's
        // crest (up to about 9 %, 0.8 dB).
        #expect(abs(measured - peak) <= 1, "sox measured \(measured) dBFS in the recording of the \(peak) dBFS tone")
        #expect(!result.stderr.contains("not in an audio session"), "\(result.stderr)")
        let probe = try await run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path])
        #expect(probe.status == 0 && probe.stderr.isEmpty, "\(probe.stderr)")
        #expect(abs((Double(probe.output) ?? 0) - 1.2) < 0.001, "ffprobe: \(probe.output)")
    }

    @Test("earshot record into a missing folder fails naming the file and the reason")
    func missingFolder() async throws {
        let server = try TestSoundServerKind.selected.start(sinkName: "cli_rec")
        let result = try await run(Paths.earshot, ["record", "/nonexistent-earshot/take.wav", "--duration", "1"],
                                   environment: server.environment, timeout: 20)
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot write /nonexistent-earshot/take.wav: No such file or directory"), "\(result.stderr)")
    }

    @Test("earshot record --alsa records through ALSA capture (the pulse plugin's default)")
    func recordsThroughALSA() async throws {
        let server = try TestSoundServerKind.selected.start(sinkName: "cli_alsa")
        _ = try server.pactl("set-default-source", server.monitorName)
        let keepAlive = try Child("pacat", ["--playback", "--latency-msec=10", "--raw", "/dev/zero"], environment: server.environment)
        defer { keepAlive.kill(SIGKILL) }
        let tone = try TestSignals.sine(frequency: 880, duration: 12, level: -6)  // as above
        let player = try Child("paplay", [tone], environment: server.environment)
        defer { player.kill(SIGKILL) }
        try await Task.sleep(for: .milliseconds(500))
        let folder = try FileManager.default.url(for: .itemReplacementDirectory, in: .userDomainMask,
                                                 appropriateFor: URL(fileURLWithPath: "/tmp"), create: true).path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/alsa.wav"
        let result = try await run(Paths.earshot, ["record", path, "--alsa", "--duration", "1"], environment: server.environment, timeout: 20)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("audio input: ALSA capture device “default”"), "\(result.stderr)")
        let audio = try TestSignals.readWAV(path)
        #expect(abs(audio.duration - 1) <= 0.001, "\(audio.duration) s")
        let frequency = try #require(audio.dominantFrequency(channel: 0))
        #expect(abs(frequency - 880) < 1, "\(frequency) Hz")
        #expect(abs(audio.sineLevelDBFS(channel: 0) + 6) <= 0.5, "\(audio.sineLevelDBFS(channel: 0)) dBFS")
    }

    @Test("earshot record stops on SIGINT (Ctrl-C), finishes the file and says what it wrote")
    func stopsOnInterrupt() async throws {
        let server = try TestSoundServerKind.selected.start(sinkName: "cli_int")
        _ = try server.pactl("set-default-source", server.monitorName)
        let folder = try FileManager.default.url(for: .itemReplacementDirectory, in: .userDomainMask,
                                                 appropriateFor: URL(fileURLWithPath: "/tmp"), create: true).path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/int.ogg"
        let child = try Child(Paths.earshot, ["record", path], environment: server.environment)
        try await eventually("the recording to start", timeout: 10) {
            ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) > 0 && child.stderr.contains("audio input")
        }
        try await Task.sleep(for: .milliseconds(700))
        child.kill(SIGINT)
        let status = try await child.wait(timeout: 10)
        #expect(status == 0, "\(child.stderr)")
        #expect(child.stdout.contains("recorded \(path): "), "\(child.stdout)")
        let probe = try await run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", path])
        #expect(probe.status == 0 && probe.stderr.isEmpty && probe.output == "vorbis", "\(probe.stdout) \(probe.stderr)")
    }

    @Test("earshot record --help lists every option")
    func recordHelp() async throws {
        let result = try await run(Paths.earshot, ["record", "--help"])
        #expect(result.status == 0)
        for option in ["--device", "--alsa", "--format", "--rate", "--channels", "--bit-depth", "--quality", "--bit-rate", "--duration", "--play", "--name", "--bus"] {
            #expect(result.stdout.contains(option), "record --help does not mention \(option)")
        }
    }
}
