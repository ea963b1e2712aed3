import AudioEngine
@testable import Earshot
import AudioRoutes
import Foundation
import Testing
import TestSupport

/// The recording categories: recording needs an active `record` or `playAndRecord` session;
/// `record` silences the process's playback; voiceChat tags streams `media.role=phone`; an
/// interruption pauses the recorder and its end with shouldResume continues the same file.
/// Sessions on a private bus hosting the arbiter, an engine of the test's own (so the
/// process gain of the shared one is untouched). Serial audio pass.
@Suite(.serialized, .tags(.inProcessAudio)) struct AudioRecorderSessionTests {
    @Test("recording needs an active record or playAndRecord session; record silences playback; voiceChat is role phone")
    func categories() async throws {
        let rig = try RecordingRig()
        let bus = try PrivateBus()
        var configuration = AudioEngine.Configuration()
        configuration.soundServer = rig.address
        configuration.logsOutputChoice = false
        let engine = AudioEngine(configuration: configuration)
        let session = AudioSession(appName: "memo", bus: .address(bus.address), engine: engine)
        let recorder = try AudioRecorder(url: URL(fileURLWithPath: rig.path("memo.wav")), input: rig.input, session: session, engine: engine)

        try await session.setCategory(.playback)
        try await session.setActive(true)
        #expect(!recorder.record())
        #expect(recorder.lastError as? AudioRecorderError == .sessionDoesNotRecord(category: "playback", active: true))

        try await session.setCategory(.record)
        try await session.setActive(false)
        #expect(!recorder.record())
        #expect(recorder.lastError as? AudioRecorderError == .sessionDoesNotRecord(category: "record", active: false))

        try await session.setActive(true)
        #expect(engine.processGain == 0, "the record category leaves playback audible")
        #expect(recorder.record(), "\(String(describing: recorder.lastError))")
        #expect(recorder.isRecording)
        recorder.stop()

        try await session.setCategory(.playAndRecord, mode: .voiceChat)
        #expect(engine.processGain == 1, "playAndRecord silences playback")
        #expect(engine.streamIdentity.role == .phone)
        #expect(recorder.record())
        try await Task.sleep(for: .milliseconds(300))
        let roles = try rig.pulse!.pactl("list", "source-outputs")
        #expect(roles.contains("media.role = \"phone\""), "\(roles)")
        recorder.stop()
        try await session.setCategory(.playAndRecord)
        #expect(engine.streamIdentity.role == .music)
    }

    @Test("an interruption pauses the recorder; its end with shouldResume continues the same file")
    func interruption() async throws {
        let rig = try RecordingRig()
        let bus = try PrivateBus()
        var configuration = AudioEngine.Configuration()
        configuration.soundServer = rig.address
        configuration.logsOutputChoice = false
        let engine = AudioEngine(configuration: configuration)
        let session = AudioSession(appName: "memo", bus: .address(bus.address), engine: engine)
        let other = AudioSession(appName: "call", bus: .address(bus.address), engine: engine)
        let path = rig.path("interrupted.wav")
        let recorder = try AudioRecorder(url: URL(fileURLWithPath: path), input: rig.input, session: session, engine: engine)
        let tone = try TestSignals.sine(frequency: 1000, duration: 6, level: -6)
        let player = try rig.play(tone)
        defer { player.kill(SIGKILL) }

        try await session.setCategory(.record)
        try await session.setActive(true)
        #expect(recorder.record())
        try await Task.sleep(for: .milliseconds(500))
        try await other.setCategory(.playAndRecord)
        try await other.setActive(true)
        try await eventually("the recorder to pause for the interruption", timeout: 3) { !recorder.isRecording }
        // What was captured before the pause may still be arriving; then the file stands still.
        try await Task.sleep(for: .milliseconds(150))
        let atInterruption = recorder.currentTime
        try await Task.sleep(for: .milliseconds(400))
        #expect(abs(recorder.currentTime - atInterruption) < 0.001, "recorded while interrupted")
        try await other.setActive(false, options: .notifyOthersOnDeactivation)
        try await eventually("the recorder to continue after the interruption", timeout: 3) { recorder.isRecording }
        try await Task.sleep(for: .milliseconds(500))
        recorder.stop()
        let audio = try RecordingRig.read(path)
        #expect(audio.duration > atInterruption + 0.3, "nothing recorded after the interruption: \(audio.duration) s")
        #expect(audio.activeRegions(threshold: -40, minGap: 0.001).count == 1, "a gap in the file")
    }

    @Test("inputs: the default source, its channels, a source plugged and unplugged, the preferred input records")
    func inputs() async throws {
        let rig = try RecordingRig()
        let server = try #require(rig.pulse)
        let bus = try PrivateBus()
        var configuration = AudioEngine.Configuration()
        configuration.soundServer = rig.address
        configuration.logsOutputChoice = false
        let engine = AudioEngine(configuration: configuration)
        let session = AudioSession(appName: "inputs", bus: .address(bus.address), engine: engine)
        #expect(session.isInputAvailable)
        #expect(session.currentInputs.first?.name == server.monitorName, "\(session.currentInputs)")
        #expect(session.inputNumberOfChannels == server.channels)

        let seen = Locked<[[String]]>([])
        let observation = session.observe { notification in
            if case .inputsChange(let inputs) = notification { seen.withLock { $0.append(inputs.map(\.name)) } }
        }
        defer { observation.cancel() }
        let module = try server.pactl("load-module", "module-null-source", "source_name=headset_mic", "channels=1")
        try await eventually("the plugged source among the inputs", timeout: 3) { seen.value.last?.contains("headset_mic") == true }
        let mic = try #require(session.currentInputs.first { $0.name == "headset_mic" })
        #expect(mic.channels == 1 && !mic.isMonitor)
        session.setPreferredInput(mic)
        #expect(session.inputNumberOfChannels == 1)

        // A recorder of the session records the preferred input (the null source: silence).
        try await session.setCategory(.record)
        try await session.setActive(true)
        let recorder = try AudioRecorder(url: URL(fileURLWithPath: rig.path("mic.wav")), input: .init(soundServer: rig.address),
                                         session: session, engine: engine)
        #expect(recorder.record())
        guard case .soundServer(_, let source)? = recorder.inputKind else {
            Issue.record("not recording from the sound server: \(String(describing: recorder.inputKind))")
            return
        }
        #expect(source == "headset_mic")
        recorder.stop()

        _ = try server.pactl("unload-module", module.trimmingCharacters(in: .whitespacesAndNewlines))
        try await eventually("the unplugged source gone from the inputs", timeout: 3) { seen.value.last?.contains("headset_mic") == false }
    }

    @Test("input route changes: a headset microphone plugged is newDeviceAvailable, the one in use unplugged is oldDeviceUnavailable, with the previous route's inputs; isInputAvailable changes are posted")
    func inputRouteChanges() async throws {
        let rig = try RecordingRig()
        let server = try #require(rig.pulse)
        let bus = try PrivateBus()
        var configuration = AudioEngine.Configuration()
        configuration.soundServer = rig.address
        configuration.logsOutputChoice = false
        let engine = AudioEngine(configuration: configuration)
        let session = AudioSession(appName: "inputroutes", bus: .address(bus.address), engine: engine)
        try await session.setCategory(.record)
        try await session.setActive(true)
        #expect(session.currentRoute.inputs.first?.name == server.monitorName, "\(session.currentRoute)")
        #expect(session.currentRoute.inputs.first?.channels == server.channels)

        let changes = Locked<[RouteChange]>([])
        let availability = Locked<[Bool]>([])
        let token = session.observe { notification in
            switch notification {
            case .routeChange(let change) where change.previousRoute.inputs != change.currentRoute.inputs:
                changes.withLock { $0.append(change) }
            case .inputAvailabilityChange(let available):
                availability.withLock { $0.append(available) }
            default: break
            }
        }

        // Plugged, and made the default as a desktop's policy would.
        let module = try server.pactl("load-module", "module-null-source", "source_name=headset_mic", "channels=1")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try server.pactl("set-default-source", "headset_mic")
        try await eventually("the headset microphone in use", timeout: 3) { session.currentRoute.inputs.first?.name == "headset_mic" }
        let plugged = try #require(changes.value.first)
        #expect(plugged.reason == .newDeviceAvailable, "\(changes.value)")
        #expect(!plugged.previousRoute.inputs.contains { $0.name == "headset_mic" })
        #expect(plugged.currentRoute.inputs.contains { $0.name == "headset_mic" && $0.channels == 1 })
        #expect(session.inputNumberOfChannels == 1)

        // Unplugged while in use: the server falls back to another source.
        let before = changes.value.count
        _ = try server.pactl("unload-module", module)
        try await eventually("the unplug reported", timeout: 3) {
            changes.value.dropFirst(before).contains { $0.reason == .oldDeviceUnavailable }
        }
        let unplugged = try #require(changes.value.dropFirst(before).first { $0.reason == .oldDeviceUnavailable })
        #expect(unplugged.previousRoute.inputs.first?.name == "headset_mic", "\(unplugged)")
        #expect(!unplugged.currentRoute.inputs.contains { $0.name == "headset_mic" })
        #expect(availability.value.isEmpty, "an input stayed available throughout: \(availability.value)")
        withExtendedLifetime(token) {}
    }

    /// Over the unix socket the monitor waits for the socket file to come back; over TCP
    /// there is no file, and it tries again on a backoff while the server is away.
    @Test("the sound server restarted: no input is available, then the inputs come back by themselves (the monitor reconnects); both posted",
          arguments: [ServerTransport.unixSocket, .tcp])
    func inputsAfterServerRestart(_ transport: ServerTransport) async throws {
        let rig = try RecordingRig(tcp: transport == .tcp)
        #expect(rig.address.hasPrefix(transport == .tcp ? "tcp:" : "unix:"))
        let server = try #require(rig.pulse)
        let bus = try PrivateBus()
        var configuration = AudioEngine.Configuration()
        configuration.soundServer = rig.address
        configuration.logsOutputChoice = false
        let engine = AudioEngine(configuration: configuration)
        let session = AudioSession(appName: "inputrestart", bus: .address(bus.address), engine: engine)
        try await session.setCategory(.record)
        try await session.setActive(true)
        #expect(session.isInputAvailable)

        let reasons = Locked<[RouteChangeReason]>([])
        let availability = Locked<[Bool]>([])
        let token = session.observe { notification in
            switch notification {
            case .routeChange(let change) where change.previousRoute.inputs != change.currentRoute.inputs:
                reasons.withLock { $0.append(change.reason) }
            case .inputAvailabilityChange(let available):
                availability.withLock { $0.append(available) }
            default: break
            }
        }
        try server.restart()
        try await eventually("the inputs back after the restart", timeout: 5) { availability.value == [false, true] }
        // Only a monitor went and came back: the output side reports that route change.
        #expect(reasons.value.isEmpty, "\(reasons.value)")
        #expect(session.isInputAvailable)
        #expect(session.currentRoute.inputs.first?.name == server.monitorName, "\(session.currentRoute)")
        #expect(session.existingInputMonitor()?.reconnections == 1)
        withExtendedLifetime(token) {}
    }

    @Test("record silences the process's playback at the sink (captured from its monitor); playAndRecord lets the same player be heard")
    func recordSilencesPlaybackAtTheSink() async throws {
        let rig = try RecordingRig()
        let server = try #require(rig.pulse)
        let bus = try PrivateBus()
        var configuration = AudioEngine.Configuration()
        configuration.soundServer = rig.address
        configuration.logsOutputChoice = false
        let engine = AudioEngine(configuration: configuration)
        let session = AudioSession(appName: "silenced", bus: .address(bus.address), engine: engine)
        try await session.setCategory(.record)
        try await session.setActive(true)
        let tone = URL(fileURLWithPath: try TestSignals.sine(frequency: 1000, duration: 8, level: -6))
        let player = try AudioPlayer(contentsOf: tone, engine: engine)
        defer { player.stop() }
        let silenced = try await Capture(server: server).record {
            #expect(player.play())
            try await Task.sleep(for: .milliseconds(1500))
        }
        #expect(player.isPlaying)
        #expect(silenced.isSilent(range: 0.3..<1.3), "the record category let playback through: \(silenced.rmsDBFS(range: 0.3..<1.3)) dBFS")

        try await session.setCategory(.playAndRecord)
        let heard = try await Capture(server: server).record {
            try await Task.sleep(for: .milliseconds(1500))
        }
        let frequency = try #require(heard.dominantFrequency(channel: 0, range: 0.3..<1.3))
        #expect(abs(frequency - 1000) < 1, "playAndRecord: \(frequency) Hz")
        #expect(abs(heard.rmsDBFS(channel: 0, range: 0.3..<1.3) - (-9)) < 1.5, "\(heard.rmsDBFS(channel: 0, range: 0.3..<1.3)) dBFS")
    }

    /// Without a sound server the inputs are ALSA's capture devices. No sound card here: an
    /// ALSA configuration of its own (`ALSA_CONFIG_PATH`, nothing else loaded) defines two
    /// capture PCMs with hints (null devices of fixed channel counts, through `multi`) and
    /// an output-only one. ALSA reads its configuration once per process, and the test
    /// process's ALSA belongs to the shared PulseAudio (its `default` hook): so the session
    /// and the recording run in an exit test, a child process of their own.
    @Test("no sound server: the inputs are the ALSA capture devices the configuration hints (names, descriptions, channels; outputs left out), and one records")
    func alsaInputsWithoutServer() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-alsa-inputs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let config = folder + "/asound.conf"
        try """
            pcm.headset_mic {
                type multi
                slaves.a { pcm { type null } channels 1 }
                bindings.0 { slave a channel 0 }
                hint { show on description "Headset Microphone|IOIDInput" }
            }
            pcm.line_in {
                type multi
                slaves.a { pcm { type null } channels 2 }
                bindings.0 { slave a channel 0 }
                bindings.1 { slave a channel 1 }
                hint { show on description "Line In" }
            }
            pcm.speakers {
                type null
                hint { show on description "Speakers|IOIDOutput" }
            }
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let recording = folder + "/line-in.wav"
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent, \.standardErrorContent]) { [config = config as String, recording = recording as String] in
            setenv("ALSA_CONFIG_PATH", config, 1)
            var configuration = AudioEngine.Configuration()
            configuration.soundServer = "unix:/nonexistent/earshot/pulse/native"
            configuration.logsOutputChoice = false
            let engine = AudioEngine(configuration: configuration)
            let session = AudioSession(appName: "alsa-inputs", bus: .session, engine: engine)
            for input in session.currentInputs { print("input \(input.name)|\(input.portName)|\(input.channels)|\(input.isMonitor)") }
            print("available \(session.isInputAvailable) channels \(session.inputNumberOfChannels)")
            print("route \(session.currentRoute.inputs.map(\.name))")
            let recorder = try AudioRecorder(url: URL(fileURLWithPath: recording),
                                             input: .init(device: "line_in", soundServer: configuration.soundServer), session: nil, engine: engine)
            try recorder.prepare()
            guard recorder.record(forDuration: 0.3) else { exit(2) }
            print("kind \(recorder.inputKind.map { "\($0)" } ?? "none")")
            _ = try await RecordingRig.ending(of: recorder)
        }
        let output = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("input ") } == ["input headset_mic|Headset Microphone|1|false", "input line_in|Line In|2|false"],
                "\(output)\n\(errors)")
        #expect(lines.contains("available true channels 1"), "\(output)")
        #expect(lines.contains("route [\"headset_mic\", \"line_in\"]"), "\(output)")
        #expect(lines.contains("kind ALSA capture device “line_in”"), "\(output)\n\(errors)")
        let audio = try RecordingRig.read(recording)
        #expect(audio.channels == 2)
        #expect(abs(audio.duration - 0.3) < 0.01, "\(audio.duration) s")
        #expect(audio.isSilent(), "a null device records silence")
    }
}
