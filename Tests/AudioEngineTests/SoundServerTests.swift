import AudioEngine
import Foundation
import Synchronization
import Testing
import TestSupport

/// The engine's output through the sound server (libpulse), captured from the shared
/// PulseAudio server's null sink: what the stream says about itself, which output is
/// chosen, the clock against what the sink played, and faults (a killed stream).
@Suite("AudioEngine through the sound server", .serialized, .tags(.inProcessAudio))
struct SoundServerTests {
    /// `pactl list sink-inputs`, as one property list per stream.
    static func sinkInputProperties(_ server: PulseAudioServer) throws -> [[String: String]] {
        var result: [[String: String]] = []
        for line in try server.pactl("list", "sink-inputs").split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("Sink Input #") {
                result.append(["index": String(text.dropFirst("Sink Input #".count))])
            } else if let equals = text.range(of: " = "), !result.isEmpty {
                let key = String(text[..<equals.lowerBound])
                let value = String(text[equals.upperBound...]).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                result[result.count - 1][key] = value
            }
        }
        return result
    }

    /// This process's newest stream (an idle engine of an earlier test may still have one),
    /// with `application.name` starting with `name` when given.
    static func ownStream(_ server: PulseAudioServer, named name: String? = nil) throws -> [String: String]? {
        try sinkInputProperties(server).last { stream in
            guard stream["application.process.id"] == String(getpid()) else { return false }
            guard let name else { return true }
            return stream["application.name"]?.hasPrefix(name) == true
        }
    }

    static func engine(identity: AudioEngine.StreamIdentity = .init(), device: String? = nil) -> AudioEngine {
        var configuration = AudioEngine.Configuration(device: device)
        configuration.identity = identity
        configuration.idleRelease = 0.5
        return AudioEngine(configuration: configuration)
    }

    static func voice(_ engine: AudioEngine, _ path: String) throws -> Voice {
        try engine.makeVoice(for: AudioFile(contentsOf: path))
    }

    @Test("the stream carries the app's name, id, icon, process and role; media.name follows")
    func streamIdentity() async throws {
        try await withAudio(idleTimeout: 0) { server in
            let engine = Self.engine(identity: .init(applicationName: "Sound Server Test", applicationID: "org.example.soundtest",
                                                     iconName: "earshot-test", role: .event))
            let voice = try Self.voice(engine, TestSignals.sine(duration: 1.5))
            defer { voice.dispose() }
            try voice.play()
            guard case .soundServer = engine.outputKind else {
                Issue.record("with a server answering, the engine chose \(String(describing: engine.outputKind))")
                return
            }
            let stream = try #require(try Self.ownStream(server, named: "Sound Server Test"), "no sink input of this process")
            #expect(stream["application.name"] == "Sound Server Test")
            #expect(stream["application.id"] == "org.example.soundtest")
            #expect(stream["application.icon_name"] == "earshot-test")
            #expect(stream["media.role"] == "event")
            #expect(stream["media.name"] == "Sound Server Test")

            var identity = engine.streamIdentity
            identity.mediaName = "Track Two"
            engine.streamIdentity = identity
            try await eventually("media.name to follow", timeout: 2) { try Self.ownStream(server, named: "Sound Server Test")?["media.name"] == "Track Two" }
        }
    }

    @Test("an ALSA device named in the configuration plays through ALSA, not the server")
    func namedALSADevice() async throws {
        try await withAudio(idleTimeout: 0) { server in
            let engine = Self.engine(device: "default")
            let voice = try Self.voice(engine, TestSignals.sine(duration: 1))
            defer { voice.dispose() }
            try voice.play()
            #expect(engine.outputKind == .alsa(device: "default"))
            // Through ALSA's pulse plugin the stream has the plugin's name. The plugin makes its
            // stream on the server when the PCM starts, which can be after play() returns.
            try await eventually("a stream through ALSA's pulse plugin", timeout: 3) { try Self.ownStream(server, named: "ALSA plug-in") != nil }
            let stream = try #require(try Self.ownStream(server, named: "ALSA plug-in"), "no stream through ALSA's pulse plugin")
            #expect(stream["media.role"] == nil, "\(stream)")
        }
    }

    @Test("a pause is heard at once, and currentTime then equals what the sink played, within 10 ms")
    func pausedPositionMatchesCapture() async throws {
        try await withAudio(idleTimeout: 0) { server in
            let engine = Self.engine()
            let voice = try Self.voice(engine, TestSignals.sine(frequency: 600, duration: 4))
            defer { voice.dispose() }
            let pause = try await PauseMeasurement(voice, playing: .milliseconds(1300), record: Capture(server: server).record)
            try #require(!pause.audio.activeRegions().isEmpty)
            let (heard, atPause, settled) = (pause.heard, pause.atPause, pause.settled)
            print(String(format: "SoundServer: heard %.4f s; currentTime %.4f s at the pause call, %.4f s after", heard, atPause, settled))
            #expect(abs(settled - heard) <= 0.010, "currentTime \(settled) s, the sink played \(heard) s")
            // What was buffered is dropped: the sound stops within 30 ms of the call.
            #expect(heard - atPause <= 0.030, "the sound went on \(heard - atPause) s after pause()")
            #expect(heard - atPause >= -0.002, "currentTime was ahead of the sound at the pause: \(atPause) s, heard \(heard) s")
        }
    }

    /// The device clock says when a frame is heard (the pause test checks it against the
    /// sink); a voice started at a device time has been heard for exactly the device time
    /// since. The position mixed runs ahead of that by the output's latency (48 ms or more).
    @Test("while playing, currentTime is the position heard (device clock), not the position mixed")
    func currentTimeIsHeardWhilePlaying() async throws {
        try await withAudio(idleTimeout: 0) { _ in
            let engine = Self.engine()
            let voice = try Self.voice(engine, TestSignals.sine(duration: 3))
            defer { voice.dispose() }
            try engine.openDevice()
            let start = engine.deviceCurrentTime + 0.3
            try voice.play(atDeviceTime: start)
            try await Task.sleep(for: .milliseconds(1000))
            var worst = 0.0
            for _ in 0..<20 {
                let (clock, position) = (engine.deviceCurrentTime, voice.currentTime)
                worst = max(worst, abs(position - (clock - start)))
                try await Task.sleep(for: .milliseconds(37))
            }
            print(String(format: "SoundServer: currentTime against the device clock: worst %.4f s (output latency %.3f s)", worst,
                         engine.outputLatency))
            #expect(worst <= 0.005, "currentTime differs from the time heard by up to \(worst) s")
        }
    }

    @Test("after a pause, play resumes where the sound stopped: nothing lost, nothing repeated")
    func resumeAfterPauseIsSeamless() async throws {
        try await withAudio(idleTimeout: 0) { server in
            let engine = Self.engine()
            let path = try TestSignals.steppedTone(steps: 4)
            let voice = try Self.voice(engine, path)
            defer { voice.dispose() }
            let capture = try Capture(server: server)
            let audio = try await capture.record {
                try voice.play()
                try await Task.sleep(for: .milliseconds(900))
                voice.pause()
                try await Task.sleep(for: .milliseconds(400))
                try voice.play()
                try await eventually("the voice to finish", timeout: 10) { !voice.isPlaying }
                try await Task.sleep(for: .milliseconds(200))
            }
            // Two regions, the pause between them (a loaded machine may add an underrun's gap:
            // a gap, not lost media).
            let regions = audio.activeRegions()
            try #require(regions.count >= 2, "\(regions)")
            #expect(regions.gaps.contains { $0 > 0.35 && $0 < 0.41 }, "the pause: \(regions)")
            #expect(abs(regions.totalDuration - voice.duration) <= 0.012, "\(regions) for \(voice.duration) s")
        }
    }

    /// A pause and a play that both come before the mixer looks (an interruption that
    /// begins and ends within a few milliseconds, on a loaded machine) leave the voice
    /// mixing on as if nothing happened: no flush, no rewind, so no new start in the mix.
    /// The play is a start all the same, and its owner waits for it to be heard (a session
    /// reports its sound once its resumed player is heard): a start handler that never came
    /// left `earshot play` active and silent at the arbiter, its player paused at the last
    /// of a burst of interrupters (SessionHostileTests, a fresh-clone CI run).
    /// `holdingChanges` keeps the mixer out for the pause and the play, as the race did.
    @Test("a play that follows a pause before the mixer saw it is heard as a start, on the short buffer and on a long one",
          arguments: [0.0, 1.0])
    func playBeforeThePauseIsMixedIsAStart(musicBuffer: Double) async throws {
        try await withAudio(idleTimeout: 0) { _ in
            var configuration = AudioEngine.Configuration()
            configuration.idleRelease = 0.5
            configuration.logsOutputChoice = false
            configuration.musicBufferDuration = musicBuffer
            let engine = AudioEngine(configuration: configuration)
            let voice = try Self.voice(engine, TestSignals.sine(duration: 4))
            defer { voice.dispose() }
            let starts = Atomic<Int>(0)
            voice.setStartHandler { starts.add(1, ordering: .relaxed) }
            try voice.play()
            try await eventually("the first start to be heard", timeout: 3) { starts.load(ordering: .relaxed) == 1 }
            try await Task.sleep(for: .milliseconds(300))
            try engine.holdingChanges {
                voice.pause()
                try voice.play()
                #expect(voice.isWaitingToBeHeard, "a play after a pause waits to be heard again")
            }
            try await eventually("the play after the pause to be heard", timeout: 3) { starts.load(ordering: .relaxed) == 2 }
            #expect(!voice.isWaitingToBeHeard)
            #expect(voice.isPlaying)
        }
    }

    /// Context switches of this process's engine threads (`earshot-*`, every engine of the
    /// test process), from /proc/self/task/*/status.
    /// Context switches (voluntary and involuntary) of the process's threads whose name
    /// starts with `prefix` (every engine's threads by default).
    static func engineThreadSwitches(named prefix: String = "earshot-") -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.reduce(0) { total, task in
            let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            guard comm.hasPrefix(prefix) else { return total }
            let status = (try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8)) ?? ""
            return total + status.split(separator: "\n").reduce(0) { sum, line in
                guard line.hasPrefix("voluntary_ctxt_switches") || line.hasPrefix("nonvoluntary_ctxt_switches") else { return sum }
                return sum + (Int(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0)
            }
        }
    }

    @Test("a paused engine sleeps: its threads do not wake while nothing changes")
    func pausedEngineSleeps() async throws {
        try await withAudio(idleTimeout: 0) { _ in
            let engine = Self.engine()
            let voice = try Self.voice(engine, TestSignals.sine(duration: 3))
            defer { voice.dispose() }
            try voice.play()
            try await Task.sleep(for: .milliseconds(400))
            voice.pause()
            // Past the sound-stopped event and the release of the output (0.5 s here).
            try await eventually("the output to be released", timeout: 3) { !engine.isDeviceOpen }
            try await Task.sleep(for: .milliseconds(600))
            let before = Self.engineThreadSwitches()
            try await Task.sleep(for: .seconds(2))
            let woke = Self.engineThreadSwitches() - before
            // Every engine of the test process counts (earlier tests' engines too); all idle.
            #expect(woke <= 4, "the engines' threads woke \(woke) times in 2 s while paused")
        }
    }

    @Test("while a sound plays through the server, the render thread sleeps: libpulse's thread mixes on each request")
    func playingRendersOnRequests() async throws {
        try await withAudio(idleTimeout: 0) { server in
            let engine = Self.engine()
            let voice = try Self.voice(engine, TestSignals.sine(frequency: 500, duration: 2))
            defer { voice.dispose() }
            let capture = try Capture(server: server)
            var woke = 0
            var advanced = 0.0
            let audio = try await capture.record {
                try voice.play()
                try await Task.sleep(for: .milliseconds(400))
                let (before, from) = (Self.engineThreadSwitches(named: "earshot-render"), voice.currentTime)
                try await Task.sleep(for: .seconds(1))
                (woke, advanced) = (Self.engineThreadSwitches(named: "earshot-render") - before, voice.currentTime - from)
                try await eventually("the tone to end", timeout: 4) { !voice.isPlaying }
                try await Task.sleep(for: .milliseconds(Int((engine.outputLatency + 0.15) * 1000)))
            }
            // Mixing on the render thread woke it once a period (62 times in 1 s at 16 ms).
            // Every engine's render thread counts; the others are idle.
            #expect(woke <= 6, "the render threads woke \(woke) times in 1 s of playing")
            #expect(abs(advanced - 1) <= 0.05, "currentTime advanced \(advanced) s in 1 s")
            // The whole tone, nothing lost (a loaded machine may add an underrun's gap).
            let regions = audio.activeRegions()
            #expect(!regions.isEmpty && abs(regions.totalDuration - 2) <= 0.02, "\(regions)")
        }
    }

    @Test("a stream killed by the server is a clear error at once; the voice pauses; the next play works")
    func killedStream() async throws {
        try await withAudio(idleTimeout: 0) { server in
            let engine = Self.engine(identity: .init(applicationName: "Killed Stream Test"))
            let voice = try Self.voice(engine, TestSignals.sine(duration: 3))
            defer { voice.dispose() }
            // When the error came, taken in the handler: the test's own wake-up after the kill
            // waits for a cooperative thread, which other tests of a parallel run may hold.
            let failure = Locked<String?>(nil)
            let failedAt = Locked<Date?>(nil)
            voice.setHandlers(onFinished: nil, onError: { error in
                failedAt.withLock { $0 = Date() }
                failure.withLock { $0 = "\(error)" }
            })
            try voice.play()
            try await Task.sleep(for: .milliseconds(500))
            let index = try #require(try Self.ownStream(server, named: "Killed Stream Test")?["index"].flatMap { UInt32($0) })
            let killed = Date()
            try PulseControl.killSinkInput(index)
            try await eventually("the error", timeout: 2) { failure.value != nil }
            let latency = failedAt.value.map { $0.timeIntervalSince(killed) } ?? .infinity
            #expect(latency < 0.5, "the error came \(latency) s after the kill")
            #expect(failure.value?.contains("removed the stream") == true, "\(failure.value ?? "")")
            #expect(!voice.isPlaying)
            #expect(!engine.isDeviceOpen)
            let pausedAt = voice.currentTime
            #expect(pausedAt > 0.3 && pausedAt < 0.8, "paused at \(pausedAt) s")

            try voice.play()
            try await Task.sleep(for: .milliseconds(300))
            #expect(voice.isPlaying)
            #expect(try Self.ownStream(server, named: "Killed Stream Test").map { $0["index"] != String(index) } == true, "a new stream plays")
            #expect(voice.currentTime > pausedAt, "it went on from \(pausedAt) s: \(voice.currentTime) s")
        }
    }
}

/// The sound server restarts under a playing engine: a private server of the test's own,
/// killed and started again on the same socket.
@Suite("AudioEngine when the sound server restarts", .tags(.inProcessAudio))
struct SoundServerRestartTests {
    @Test("the voice pauses where it was heard, the app hears of the reset, and the next play plays on the new server")
    func serverRestartsMidPlay() async throws {
        let server = try PulseAudioServer(sinkName: "restart_test")
        var configuration = AudioEngine.Configuration()
        configuration.soundServer = server.address
        configuration.identity = .init(applicationName: "Restart Test")
        let engine = AudioEngine(configuration: configuration)
        let resets = Locked(0)
        engine.onOutputReset { resets.withLock { $0 += 1 } }
        let voice = try engine.makeVoice(for: AudioFile(contentsOf: TestSignals.sine(duration: 4)))
        defer { voice.dispose() }
        let failure = Locked<String?>(nil)
        voice.setHandlers(onFinished: nil, onError: { error in failure.withLock { $0 = "\(error)" } })
        try voice.play()
        #expect(engine.outputKind.map { if case .soundServer = $0 { true } else { false } } == true)
        try await Task.sleep(for: .milliseconds(800))

        let before = voice.currentTime
        try server.restart()
        try await eventually("the engine to notice", timeout: 2) { failure.value != nil }
        #expect(failure.value?.contains("went away") == true, "\(failure.value ?? "")")
        #expect(resets.value == 1)
        #expect(!voice.isPlaying, "nothing plays that the app thinks is playing")
        let pausedAt = voice.currentTime
        // Where it was heard: after what was heard before the kill, and not past what the
        // old server could have buffered (the engine's output latency).
        #expect(pausedAt >= before && pausedAt <= before + 0.25, "paused at \(pausedAt) s; \(before) s was heard before the kill")
        try await Task.sleep(for: .milliseconds(200))
        #expect(abs(voice.currentTime - pausedAt) < 0.001, "the position stays while paused")

        // A fresh null sink renders in blocks of up to 2 s: a silent low-latency stream keeps
        // it awake, so that the capture holds all that plays (as on the shared server).
        let keepAlive = try Child("pacat", ["--playback", "--latency-msec=10", "--format=float32le", "--rate=48000", "--channels=2",
                                            "--raw", "/dev/zero"], environment: server.environment)
        defer { keepAlive.kill(SIGKILL) }
        try await eventually("the keep-alive stream", timeout: 5) { try server.listSinkInputs().count >= 1 }
        let capture = try Capture(server: server)
        let audio = try await capture.record {
            try voice.play()
            try await Task.sleep(for: .milliseconds(600))
            #expect(voice.isPlaying)
            voice.pause()
        }
        let heard = audio.activeRegions().totalDuration
        #expect(heard > 0.4, "the new server hears the voice: \(heard) s")
        #expect(abs(voice.currentTime - pausedAt - heard) < 0.015, "it went on from \(pausedAt) s: \(voice.currentTime) s after \(heard) s heard")
    }

    @Test("a server that takes the connection and never answers: a voice is made within the sink query's second, and play names the timeout")
    func serverThatNeverAnswers() async throws {
        // A Unix socket that listens and never reads: libpulse connects (the kernel accepts it
        // into the backlog) and waits for an answer to its authentication that never comes,
        // as from a stopped or hung server.
        let socket = try TestSignals.directory + "/hung-server-\(getpid())"
        let listener = try Child("python3", ["-c", "import socket, sys, time\ns = socket.socket(socket.AF_UNIX)\ns.bind(sys.argv[1])\ns.listen(8)\nprint('ready', flush=True)\ntime.sleep(60)", socket])
        defer { listener.kill(SIGKILL) }
        try await eventually("the socket to listen", timeout: 5) { listener.stdout.contains("ready") }
        var configuration = AudioEngine.Configuration()
        configuration.soundServer = "unix:" + socket
        configuration.output = .soundServer
        configuration.logsOutputChoice = false
        let engine = AudioEngine(configuration: configuration)
        let made = Date()
        let voice = try engine.makeVoice(for: AudioFile(contentsOf: TestSignals.sine(duration: 0.2)))
        defer { voice.dispose() }
        // The sink's rate is asked with a 1 s limit; unanswered, the configuration's rate stays.
        #expect(Date().timeIntervalSince(made) < 1.5, "making the voice took \(Date().timeIntervalSince(made)) s")
        #expect(engine.sampleRate == configuration.sampleRate)
        let start = Date()
        do {
            try voice.play()
            Issue.record("play went ahead on a server that never answered")
        } catch {
            #expect("\(error)".contains("did not answer within 3"), "\(error)")
        }
        let waited = Date().timeIntervalSince(start)
        #expect(waited > 2.5 && waited < 4.5, "play gave up after \(waited) s (the output waits 3 s)")
        #expect(!voice.isPlaying)
    }

    @Test("no server and no ALSA device: a clear error, quickly")
    func noServerNoDevice() throws {
        var configuration = AudioEngine.Configuration()
        configuration.soundServer = "unix:/nonexistent/earshot/pulse/native"
        configuration.device = "earshot_no_such_device"
        let engine = AudioEngine(configuration: configuration)
        let voice = try engine.makeVoice(for: AudioFile(contentsOf: TestSignals.sine(duration: 0.2)))
        defer { voice.dispose() }
        let start = Date()
        #expect(throws: AudioEngineError.self) { try voice.play() }
        #expect(Date().timeIntervalSince(start) < 2)
        #expect(!voice.isPlaying)
        do { try voice.play() } catch {
            #expect("\(error)".contains("earshot_no_such_device"), "\(error)")
        }
    }
}
