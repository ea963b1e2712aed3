import AudioEngine
@testable import Earshot
import Foundation
import Testing
import TestSupport

/// CLOCK_MONOTONIC in seconds, the clock the engine's device clock is interpolated on.
private func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Where ``AudioRecorderFaultTests/recordAtTimeAgainstPlayer(_:)`` records: PulseAudio's
/// null-sink monitor, or pipewire-pulse's.
enum RecordAtTimeServer: String, Sendable, CustomStringConvertible {
    case pulseAudio = "PulseAudio"
    case pipeWireMonitor = "PipeWire (monitor)"
    var description: String { rawValue }

    /// Where the tone may be, in seconds from T − start in the file.
    ///
    /// PulseAudio: the millisecond either way, which a take on a machine loaded by other
    /// builds (an underrun) can leave.
    ///
    /// pipewire-pulse 0.3.65: the millisecond either way too, though its timing moves in
    /// graph cycles (the rig's quantum is 256 frames, 5.3 ms: both streams' read and write
    /// indices step by 256, a snapshot falls anywhere in a cycle, and it reports source and
    /// sink latency 0), libpulse's interpolation from the last snapshot drifts (the device
    /// clock wanders against the monotonic clock, jumping back at timing updates), and
    /// libpulse's automatic updates thin out to one in 1.5 s. Both streams ask for a
    /// snapshot once a period or fragment and place themselves by the freshest of the last
    /// second's (`GraphCycleClock`), the output one quantum later (the block the sink takes
    /// in a cycle plays in the next, else the tone is a quantum late). A start placed by a
    /// stalled clock or a clock that wanders by a quantum is caught.
    var bounds: ClosedRange<Double> {
        switch self {
        case .pulseAudio: -0.001...0.001
        case .pipeWireMonitor: -0.001...0.001
        }
    }
}

/// A recorder that cannot go on stops with an error naming the file (or input) and the
/// reason, and leaves a valid file with what it recorded. Real-time (serial audio pass).
@Suite(.serialized, .tags(.inProcessAudio)) struct AudioRecorderFaultTests {
    /// Records `path` from the rig's tone until the recorder ends by itself (or 10 s).
    private func recordUntilEnd(_ rig: RecordingRig, path: String, input: AudioEngine.InputChoice? = nil, during fault: () async throws -> Void) async throws
        -> (successfully: Bool, error: RecordingError?, recorder: AudioRecorder) {
        let tone = try TestSignals.sine(frequency: 1000, duration: 8, level: -6)
        let recorder = try AudioRecorder(url: URL(fileURLWithPath: path), input: input ?? rig.input, session: nil)
        try recorder.prepare()
        let player = try rig.play(tone)
        defer { player.kill(SIGKILL) }
        try await Task.sleep(for: .milliseconds(500))
        #expect(recorder.record())
        try await Task.sleep(for: .milliseconds(600))
        try await fault()
        let ending = try await RecordingRig.ending(of: recorder)
        return (ending.successfully, ending.error, recorder)
    }

    private func mount(_ options: String, at folder: String) async throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let result = try await run("mount", ["-t", "tmpfs", "-o", options, "tmpfs", folder])
        try #require(result.status == 0, "cannot mount a tmpfs here (\(result.stderr)): the test needs root")
    }

    private func unmount(_ folder: String) async {
        _ = try? await run("umount", ["-l", folder])
    }

    @Test("the target folder removed while recording: an error naming the file and the reason")
    func folderRemoved() async throws {
        let rig = try RecordingRig()
        let folder = rig.path("gone")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/take.wav"
        let result = try await recordUntilEnd(rig, path: path) {
            try FileManager.default.removeItem(atPath: folder)
        }
        #expect(!result.successfully)
        guard case .cannotWrite(let named, let reason)? = result.error else {
            Issue.record("expected cannotWrite, got \(String(describing: result.error))")
            return
        }
        #expect(named == path)
        #expect(reason.contains("removed"), "\(reason)")
        #expect(!result.recorder.isRecording)
    }

    @Test("a read-only target: prepare and record fail naming the file and the reason")
    func readOnlyTarget() async throws {
        let rig = try RecordingRig()
        let folder = rig.path("ro")
        try await mount("ro,size=64k", at: folder)
        defer { Task { await unmount(folder) } }
        let path = folder + "/take.flac"
        let recorder = try AudioRecorder(url: URL(fileURLWithPath: path), input: rig.input, session: nil)
        #expect(throws: RecordingError.cannotWrite(path: path, reason: "Read-only file system")) { try recorder.prepare() }
        #expect(!recorder.record())
        #expect("\(recorder.lastError.map { "\($0)" } ?? "")" == "cannot write \(path): Read-only file system")
        await unmount(folder)
    }

    @Test("a full disk: the recorder stops with “No space left on device” and the file holds what fit")
    func fullDisk() async throws {
        let rig = try RecordingRig()
        let folder = rig.path("full")
        // 256 KiB: 16-bit stereo at 48 kHz fills it in about 1.3 s.
        try await mount("size=256k", at: folder)
        defer { Task { await unmount(folder) } }
        let path = folder + "/take.wav"
        let result = try await recordUntilEnd(rig, path: path) {}
        #expect(!result.successfully)
        #expect(result.error == .cannotWrite(path: path, reason: "No space left on device"), "\(String(describing: result.error))")
        let audio = try RecordingRig.read(path)
        #expect(audio.duration > 0.5, "the file holds \(audio.duration) s")
        let frequency = try #require(audio.dominantFrequency(channel: 0))
        #expect(abs(frequency - 1000) < 1)
        let probe = try await run("ffprobe", ["-v", "error", path])
        #expect(probe.status == 0, "ffprobe: \(probe.stderr)")
        await unmount(folder)
    }

    /// Over the unix socket the input waits for the socket file to come back; over TCP there
    /// is no file, and it tries again on a backoff while the server is away.
    @Test("the sound server restarted while recording: the recording goes on into the same file, the gap said in an event",
          arguments: [ServerTransport.unixSocket, .tcp])
    func serverRestartedRecordingGoesOn(_ transport: ServerTransport) async throws {
        let rig = try RecordingRig(tcp: transport == .tcp)
        #expect(rig.address.hasPrefix(transport == .tcp ? "tcp:" : "unix:"))
        let server = try #require(rig.pulse)
        let path = rig.path("goes-on.flac")
        let tone = try TestSignals.sine(frequency: 1000, duration: 8, level: -6)
        let recorder = try AudioRecorder(url: URL(fileURLWithPath: path), input: rig.input, session: nil)
        try recorder.prepare()
        let gaps = Locked<[Double]>([])
        let errors = Locked<[RecordingError]>([])
        let events = Task {
            for await event in recorder.events {
                switch event {
                case .inputResumed(let gap): gaps.withLock { $0.append(gap) }
                case .encodeError(let error): errors.withLock { $0.append(error) }
                case .finished: return
                }
            }
        }
        let before = try rig.play(tone)
        defer { before.kill(SIGKILL) }
        try await Task.sleep(for: .milliseconds(500))
        let started = ContinuousClock.now
        #expect(recorder.record())
        try await Task.sleep(for: .milliseconds(800))
        try server.restart()
        try await eventually("the input resumed", timeout: 6) { !gaps.value.isEmpty || !errors.value.isEmpty }
        // The player lost the server too: play again on the new one.
        let after = try rig.play(tone)
        defer { after.kill(SIGKILL) }
        try await Task.sleep(for: .milliseconds(1500))
        #expect(recorder.isRecording, "the recording stopped: \(errors.value)")
        recorder.stop()
        let elapsed = ContinuousClock.now - started
        _ = await events.value
        #expect(errors.value.isEmpty, "\(errors.value)")
        let gap = try #require(gaps.value.first)
        #expect(gaps.value.count == 1)
        #expect(gap > 0 && gap < 5, "gap \(gap) s")
        let audio = try RecordingRig.read(path)
        #expect(abs(audio.duration - recorder.currentTime) < 0.001)
        // The file holds the time recorded, not the time the server was away.
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        #expect(abs(audio.duration - (wall - gap)) < 0.25, "file \(audio.duration) s, recorded \(wall) s, gap \(gap) s")
        let frequency = try #require(audio.dominantFrequency(channel: 0, range: (audio.duration - 0.8)..<(audio.duration - 0.1)))
        #expect(abs(frequency - 1000) < 1, "after the restart: \(frequency) Hz")
        let early = try #require(audio.dominantFrequency(channel: 0, range: 0.1..<0.6))
        #expect(abs(early - 1000) < 1, "before the restart: \(early) Hz")
        let probe = try await run("ffprobe", ["-v", "error", path])
        #expect(probe.status == 0 && probe.stderr.isEmpty, "ffprobe: \(probe.stderr)")
    }

    @Test("the sound server restarted while recording, with no time to come back: an input error, a valid file",
          arguments: [ServerTransport.unixSocket, .tcp])
    func serverRestarted(_ transport: ServerTransport) async throws {
        let rig = try RecordingRig(tcp: transport == .tcp)
        let path = rig.path("restart.flac")
        var input = rig.input
        input.reconnectTimeout = 0
        let result = try await recordUntilEnd(rig, path: path, input: input) {
            try rig.pulse?.restart()
        }
        #expect(!result.successfully)
        guard case .inputFailed(_, let reason)? = result.error else {
            Issue.record("expected inputFailed, got \(String(describing: result.error))")
            return
        }
        #expect(reason.contains("sound server"), "\(reason)")
        let audio = try RecordingRig.read(path)
        #expect(audio.duration > 0.4, "the file holds \(audio.duration) s")
        #expect(abs(audio.duration - result.recorder.currentTime) < 0.001)
        let probe = try await run("ffprobe", ["-v", "error", path])
        #expect(probe.status == 0 && probe.stderr.isEmpty, "ffprobe: \(probe.stderr)")
    }

    /// The server killed and not started again: over the unix socket the input waits for the
    /// socket file, over TCP it tries again on its backoff; either way it gives up when the
    /// input's reconnect time is over, not before, and not long after.
    @Test("the sound server gone for good while recording: the recorder gives up after its reconnect time, a valid file",
          arguments: [ServerTransport.unixSocket, .tcp])
    func serverGone(_ transport: ServerTransport) async throws {
        let rig = try RecordingRig(tcp: transport == .tcp)
        let server = try #require(rig.pulse)
        let path = rig.path("gone.flac")
        var input = rig.input
        input.reconnectTimeout = 1
        let killed = Locked<ContinuousClock.Instant?>(nil)
        let result = try await recordUntilEnd(rig, path: path, input: input) {
            killed.withLock { $0 = .now }
            kill(server.pid, SIGKILL)
        }
        let waited = try #require(killed.value).duration(to: .now)
        #expect(!result.successfully)
        guard case .inputFailed(_, let reason)? = result.error else {
            Issue.record("expected inputFailed, got \(String(describing: result.error))")
            return
        }
        #expect(reason.contains("did not come back within 1 s"), "\(reason)")
        #expect(waited >= .seconds(1) && waited < .seconds(2.5), "gave up after \(waited)")
        let audio = try RecordingRig.read(path)
        #expect(abs(audio.duration - result.recorder.currentTime) < 0.001)
        let probe = try await run("ffprobe", ["-v", "error", path])
        #expect(probe.status == 0 && probe.stderr.isEmpty, "ffprobe: \(probe.stderr)")
    }

    /// Each recorder maps its own stream's frames to the device clock from that stream's
    /// latency reports, which jitter: a quiet full run once found the two 1.08 ms apart. A take
    /// that misses the millisecond is printed and taken again, three takes at most; missing
    /// in every take fails.
    @Test("record(atTime:) starts with the frame captured at that device time, to the millisecond between two recorders")
    func recordAtTime() async throws {
        let problems = try await bestOfTakes("recorder: record(atTime:)", held: "within the millisecond") {
            try await recordTwiceAtTimes().map { [$0] } ?? []
        }
        for problem in problems { Issue.record(Comment(rawValue: problem)) }
    }

    /// Two recorders of the same source, asked to start 0.3 s apart on the device clock: the
    /// tone's onset must be 0.3 s later in the first file than in the second. Returns what
    /// did not hold.
    private func recordTwiceAtTimes() async throws -> String? {
        let rig = try RecordingRig()
        let early = rig.path("early.wav")
        let late = rig.path("late.wav")
        let earlyRecorder = try AudioRecorder(url: URL(fileURLWithPath: early), input: rig.input, session: nil)
        let lateRecorder = try AudioRecorder(url: URL(fileURLWithPath: late), input: rig.input, session: nil)
        try earlyRecorder.prepare()
        try lateRecorder.prepare()
        let tone = try TestSignals.write([.silence(duration: 1.0), .tone(frequency: 1000, duration: 1.5)], name: "late-tone")
        let start = earlyRecorder.deviceCurrentTime + 0.2
        let spacing = 0.3
        guard earlyRecorder.record(atTime: start), lateRecorder.record(atTime: start + spacing) else { return "record(atTime:) refused" }
        let player = try rig.play(tone)
        defer { player.kill(SIGKILL) }
        try await Task.sleep(for: .milliseconds(2400))
        earlyRecorder.stop()
        lateRecorder.stop()
        guard let onsetEarly = try RecordingRig.read(early).onset(threshold: -40),
              let onsetLate = try RecordingRig.read(late).onset(threshold: -40) else { return "no tone in a recording" }
        let offset = onsetEarly - onsetLate
        return abs(offset - spacing) < 0.001 ? nil : "the second recorder started \(offset) s after the first, asked \(spacing)"
    }

    /// The absolute check: a tone started with `play(atTime: T)` on the same engine (its
    /// device clock) plays into the null sink whose monitor is the recorded source; a recorder
    /// asked to start at `T - lead` must hold the tone's first sample `lead` seconds into its
    /// file, to the millisecond.
    ///
    /// Where the error came from (PulseAudio 16.1, 2.5 ms sink blocks): the recorder placed its
    /// start by the first fragments' latency, which libpulse interpolated from a snapshot taken
    /// while the stream was still corked (0.15–1.5 ms off, four runs of four), and mapped the
    /// device time to the monotonic clock at the call, so that an output underrun between the
    /// call and the start (the device clock waits, the monotonic clock does not) moved the
    /// start by its length (+32 and +73 ms in two runs of six). Now the start is placed when
    /// its frame is captured, by timing taken after the uncork and by the device clock then:
    /// see ``RecordAtTimeServer/bounds`` for the figures. The sink's render block is no floor:
    /// the monitor's timing (the sink's latency, subtracted) places each frame of a block.
    ///
    /// What it cannot know: an output underrun between the start and the tone delays the tone
    /// (the device clock waits) after the recording began. A take in which the engine counted
    /// an underrun is printed and taken again, five takes at most; the first take without one
    /// decides. On pipewire-pulse see ``RecordAtTimeServer/bounds``.
    @Test("record(atTime:) starts with the frame captured at that device time: a tone played at T is in the file at T minus the start, to the millisecond (PulseAudio and pipewire-pulse)",
          arguments: [RecordAtTimeServer.pulseAudio, .pipeWireMonitor])
    func recordAtTimeAgainstPlayer(_ server: RecordAtTimeServer) async throws {
        // Takes whose output underran say nothing about the recorder: taken again, five at most.
        for take in 1...5 {
            let (error, underruns, _) = try await Self.toneAgainstRecorder(server)
            let bounds = server.bounds
            let held = bounds.contains(error)
            print("recorder: record(atTime:) against play(atTime:) on \(server), take \(take): \(error * 1000) ms, \(underruns) output underruns, \(held ? "within" : "outside") \(bounds.lowerBound * 1000) … \(bounds.upperBound * 1000) ms")
            guard underruns > 0 else {
                #expect(held, "the tone played at T is \(error * 1000) ms from T − start in the file, beyond \(bounds.lowerBound * 1000) … \(bounds.upperBound * 1000) ms")
                return
            }
        }
        Issue.record("the output underran in each of 5 takes: nothing measured (a loaded machine)")
    }

    /// Plays a tone at device time T (silence playing before it on the same engine, so that the
    /// output is open and its clock follows the sink) and records from T − 0.25 s: how far
    /// the tone's onset is from 0.25 s into the file, and how many underruns the output had
    /// from the call until the tone was in.
    private static func toneAgainstRecorder(_ server: RecordAtTimeServer) async throws -> (error: Double, underruns: Int, moved: Double) {
        let rig = try RecordingRig(pipewire: server != .pulseAudio, monitor: true)
        var configuration = AudioEngine.Configuration()
        configuration.soundServer = rig.address
        configuration.logsOutputChoice = false
        let engine = AudioEngine(configuration: configuration)
        let hush = try AudioPlayer(contentsOf: URL(fileURLWithPath: try TestSignals.silence(duration: 6)), engine: engine)
        let toneFile = try TestSignals.write([.tone(frequency: 1000, duration: 0.6)], name: "onset-tone")
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: toneFile), engine: engine)
        defer {
            player.stop()
            hush.stop()
        }
        #expect(hush.play())
        #expect(player.prepareToPlay())
        let path = rig.path("against-player.wav")
        let recorder = try AudioRecorder(url: URL(fileURLWithPath: path), input: rig.input, session: nil, engine: engine)
        try recorder.prepare()
        try await Task.sleep(for: .milliseconds(600))
        let lead = 0.25
        let underruns = engine.underrunCount
        let offsetBefore = engine.deviceCurrentTime - monotonicSeconds()
        let tone = engine.deviceCurrentTime + 0.5
        #expect(recorder.record(atTime: tone - lead), "\(String(describing: recorder.lastError))")
        #expect(player.play(atTime: tone))
        try await Task.sleep(for: .milliseconds(1500))
        let starved = engine.underrunCount - underruns
        // How far the device clock moved against the monotonic clock during the take: an
        // underrun moves it by its length; a printed figure for a take that misses.
        let moved = engine.deviceCurrentTime - monotonicSeconds() - offsetBefore
        recorder.stop()
        let onset = try #require(try RecordingRig.read(path).onset(threshold: -40), "no tone in the recording")
        print("record(atTime:) against play(atTime:) on \(server): the tone at \(onset) s, asked \(lead) s: \((onset - lead) * 1000) ms, \(starved) underruns, the device clock moved \(moved * 1000) ms")
        return (onset - lead, starved, moved)
    }

    @Test("the source removed while recording: the server moves the stream to the default source, the file goes on and stays valid")
    func sourceRemoved() async throws {
        let rig = try RecordingRig()
        let server = try #require(rig.pulse)
        let module = try server.pactl("load-module", "module-null-source", "source_name=usb_mic", "channels=2")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let tone = try TestSignals.sine(frequency: 1000, duration: 6, level: -6)
        let path = rig.path("moved.wav")
        let recorder = try AudioRecorder(url: URL(fileURLWithPath: path), input: .init(device: "usb_mic", soundServer: rig.address), session: nil)
        try recorder.prepare()
        let player = try rig.play(tone)
        defer { player.kill(SIGKILL) }
        #expect(recorder.record())
        try await Task.sleep(for: .milliseconds(800))
        _ = try server.pactl("unload-module", module)
        try await Task.sleep(for: .milliseconds(1200))
        #expect(recorder.isRecording, "the recording stopped with the source")
        recorder.stop()
        let audio = try RecordingRig.read(path)
        #expect(abs(audio.duration - recorder.currentTime) < 0.001)
        // Silence from the null source first, then the default source (the monitor): the tone.
        #expect(audio.isSilent(range: 0.1..<0.7), "the removed source was not silent")
        let frequency = try #require(audio.dominantFrequency(channel: 0, range: (audio.duration - 0.8)..<(audio.duration - 0.1)))
        #expect(abs(frequency - 1000) < 1, "after the move: \(frequency) Hz")
        let probe = try await run("ffprobe", ["-v", "error", path])
        #expect(probe.status == 0 && probe.stderr.isEmpty, "ffprobe: \(probe.stderr)")
    }

    @Test("the source removed while recording on PipeWire (pipewire-pulse): the recording goes on into a valid file")
    func sourceRemovedOnPipeWire() async throws {
        let rig = try RecordingRig(pipewire: true, monitor: true)
        let server = try #require(rig.pipewire)
        // pipewire-pulse 0.3.65 has no module-null-source: a second null sink's monitor is
        // the source (silent: nothing plays into it), removed with its sink.
        let module = try server.pactl("load-module", "module-null-sink", "sink_name=usb_mic", "channels=2")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try server.pactl("set-default-sink", server.sinkName)
        let tone = try TestSignals.sine(frequency: 1000, duration: 6, level: -6)
        let path = rig.path("moved-pw.wav")
        try await eventually("the second sink's monitor", timeout: 3) {
            ((try? server.pactl("list", "short", "sources")) ?? "").contains("usb_mic.monitor")
        }
        let recorder = try AudioRecorder(url: URL(fileURLWithPath: path), input: .init(device: "usb_mic.monitor", soundServer: rig.address), session: nil)
        try recorder.prepare()
        let player = try rig.play(tone)
        defer { player.kill(SIGKILL) }
        #expect(recorder.record())
        try await Task.sleep(for: .milliseconds(800))
        _ = try server.pactl("unload-module", module)
        try await Task.sleep(for: .milliseconds(1200))
        #expect(recorder.isRecording, "the recording stopped with the source: \(String(describing: recorder.lastError))")
        recorder.stop()
        let audio = try RecordingRig.read(path)
        #expect(abs(audio.duration - recorder.currentTime) < 0.001)
        #expect(audio.duration > 1.5, "the file holds \(audio.duration) s")
        #expect(audio.isSilent(range: 0.1..<0.7), "the removed source was not silent")
        let frequency = audio.dominantFrequency(channel: 0, range: (audio.duration - 0.8)..<(audio.duration - 0.1))
        #expect(frequency.map { abs($0 - 1000) < 1 } == true, "after the move: \(frequency.map { "\($0) Hz" } ?? "silence")")
        let probe = try await run("ffprobe", ["-v", "error", path])
        #expect(probe.status == 0 && probe.stderr.isEmpty, "ffprobe: \(probe.stderr)")
    }

    @Test("pipewire-pulse restarted while recording on PipeWire: the recording goes on into the same file, the gap said in an event")
    func serverRestartedOnPipeWire() async throws {
        let rig = try RecordingRig(pipewire: true)
        let server = try #require(rig.pipewire)
        let path = rig.path("goes-on-pw.flac")
        let tone = try TestSignals.sine(frequency: 1000, duration: 8, level: -6)
        let recorder = try AudioRecorder(url: URL(fileURLWithPath: path), input: rig.input, session: nil)
        try recorder.prepare()
        let gaps = Locked<[Double]>([])
        let errors = Locked<[RecordingError]>([])
        let events = Task {
            for await event in recorder.events {
                switch event {
                case .inputResumed(let gap): gaps.withLock { $0.append(gap) }
                case .encodeError(let error): errors.withLock { $0.append(error) }
                case .finished: return
                }
            }
        }
        let before = try rig.play(tone)
        defer { before.kill(SIGKILL) }
        try await Task.sleep(for: .milliseconds(500))
        #expect(recorder.record())
        try await Task.sleep(for: .milliseconds(800))
        try server.restartPulseServer()
        _ = try? server.pactl("set-default-source", rig.source)
        try await eventually("the input resumed", timeout: 6) { !gaps.value.isEmpty || !errors.value.isEmpty }
        let after = try rig.play(tone)
        defer { after.kill(SIGKILL) }
        try await Task.sleep(for: .milliseconds(1500))
        #expect(recorder.isRecording, "the recording stopped: \(errors.value)")
        recorder.stop()
        _ = await events.value
        #expect(errors.value.isEmpty, "\(errors.value)")
        #expect(gaps.value.count == 1, "\(gaps.value)")
        let audio = try RecordingRig.read(path)
        #expect(abs(audio.duration - recorder.currentTime) < 0.001)
        let frequency = try #require(audio.dominantFrequency(channel: 0, range: (audio.duration - 0.8)..<(audio.duration - 0.1)))
        #expect(abs(frequency - 1000) < 1, "after the restart: \(frequency) Hz")
        let probe = try await run("ffprobe", ["-v", "error", path])
        #expect(probe.status == 0 && probe.stderr.isEmpty, "ffprobe: \(probe.stderr)")
    }
}
