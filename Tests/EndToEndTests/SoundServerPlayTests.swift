import DBus
import Foundation
import Testing
import TestSupport

/// `earshot play` through the sound server, as a desktop sees it: the stream's properties
/// in `pactl list sink-inputs`, MPRIS Position against what the sink played, and the server
/// restarting under it.
@Suite("earshot play through the sound server", .tags(.sessions))
struct SoundServerPlayTests {
    /// The player's MPRIS Position, and the instants the call was sent and its reply
    /// received: the reply was made somewhere in between (under load the two halves of the
    /// round trip are far from equal, so the middle is no better a guess than the ends).
    static func position(_ player: SessionPlayer, _ world: SessionWorld) async throws
        -> (position: Double, sent: ContinuousClock.Instant, received: ContinuousClock.Instant) {
        let sent = ContinuousClock.now
        let reply = try await world.client.call(
            destination: "org.mpris.MediaPlayer2." + player.app, path: "/org/mpris/MediaPlayer2",
            interface: StandardInterface.properties, method: "Get",
            [.string("org.mpris.MediaPlayer2.Player"), .string("Position")])
        let received = ContinuousClock.now
        let value = try #require(reply.first)
        let micros = try #require(value.unwrapped.int64)
        return (Double(micros) / 1e6, sent, received)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    @Test("the stream names the app (its --name), its icon, process and role music")
    func streamProperties() async throws {
        let world = try await SessionWorld()
        let player = try world.play("podcasts", side: .left)
        try await player.waitUntilPlaying()
        let listing = try world.server.pactl("list", "sink-inputs")
        let pid = try #require(try await world.pid(of: try await player.uniqueName()))
        let block = try #require(listing.components(separatedBy: "Sink Input #").first { $0.contains("application.process.id = \"\(pid)\"") },
                                 "\(listing)")
        #expect(block.contains("application.name = \"podcasts\""), "\(block)")
        #expect(block.contains("application.icon_name = \"earshot\""), "\(block)")
        #expect(block.contains("media.role = \"music\""), "\(block)")
        #expect(!block.contains("ALSA plug-in"), "\(block)")
        // media.name is what plays now: the MPRIS title.
        let title = try await world.playerctl("--player", "podcasts", "metadata", "title").output
        #expect(!title.isEmpty && title != "podcasts")
        #expect(block.contains("media.name = \"\(title)\""), "media.name is not the title \(title): \(block)")
    }

    @Test("the stream runs at the first file's rate (44.1 kHz here), which the server resamples, as paplay's does; below 44.1 kHz, at the sink's rate")
    func streamAtTheFilesRate() async throws {
        let world = try await SessionWorld()
        let file = try TestSignals.sine(frequency: 440, duration: 20, sampleRate: 44100)
        let process = try Child(Paths.earshot, ["play", "--name", "cdrate", file], environment: world.environment)
        defer { process.kill(SIGKILL) }
        let player = SessionPlayer(app: "cdrate", side: .left, process: process, world: world)
        try await player.waitUntilPlaying()
        let pid = try #require(try await world.pid(of: try await player.uniqueName()))
        let listing = try world.server.pactl("list", "sink-inputs")
        let block = try #require(listing.components(separatedBy: "Sink Input #").first { $0.contains("application.process.id = \"\(pid)\"") },
                                 "\(listing)")
        let spec = try #require(block.split(separator: "\n").first { $0.contains("Sample Specification:") }, "\(block)")
        #expect(spec.hasSuffix(" 44100Hz"), "\(spec)")

        // A first file below 44.1 kHz leaves the engine at the sink's rate, for what follows it.
        let speech = try TestSignals.sine(frequency: 440, duration: 20, sampleRate: 16000)
        let second = try Child(Paths.earshot, ["play", "--name", "speechrate", speech, file], environment: world.environment)
        defer { second.kill(SIGKILL) }
        let speechPlayer = SessionPlayer(app: "speechrate", side: .left, process: second, world: world)
        try await speechPlayer.waitUntilPlaying()
        let speechPID = try #require(try await world.pid(of: try await speechPlayer.uniqueName()))
        let again = try world.server.pactl("list", "sink-inputs")
        let speechBlock = try #require(again.components(separatedBy: "Sink Input #").first { $0.contains("application.process.id = \"\(speechPID)\"") },
                                       "\(again)")
        let speechSpec = try #require(speechBlock.split(separator: "\n").first { $0.contains("Sample Specification:") }, "\(speechBlock)")
        #expect(speechSpec.hasSuffix(" \(TestSignals.sinkRate)Hz"), "\(speechSpec)")
    }

    @Test("earshot status shows what a session plays through: the server and its version")
    func statusShowsTheOutput() async throws {
        let world = try await SessionWorld()
        let player = try world.play("shown", side: .left)
        try await player.waitUntilPlaying()
        let id = try await player.uniqueName()
        let server = world.serverKind == .pipeWire ? "pipewire-" : "pulseaudio-"
        try await sessionPoll("earshot status to show the output (\(server)…)") { try await world.status().row(id)?.output.hasPrefix(server) == true }
        // ALSA named with --device: said as such. ALSA's `default` (its pulse plugin, to this
        // world's server), which plays in real time: `null` takes a 20 s tone in 0.2 s, and
        // the player was gone before the status was read.
        let alsa = try Child(Paths.earshot, ["play", "--name", "direct", "--device", "default", try SessionWorld.tone(.right, frequency: 500, duration: 20)],
                             environment: world.environment)
        defer { alsa.kill(SIGKILL) }
        let direct = SessionPlayer(app: "direct", side: .right, process: alsa, world: world)
        try await direct.waitUntilPlaying()
        let directID = try await direct.uniqueName()
        try await sessionPoll("earshot status to show the ALSA device") { try await world.status().row(directID)?.output == "alsa:default" }
    }

    @Test("earshot sound's stream has media.role event and names earshot")
    func soundStreamIsAnEvent() async throws {
        let world = try await SessionWorld()
        let file = try SessionWorld.tone(.left, frequency: 440, duration: 1.5, level: -12)
        let sound = try Child(Paths.earshot, ["sound", file], environment: world.environment)
        defer { sound.kill(SIGKILL) }
        let listed = Locked("")
        try await eventually("earshot sound's stream", timeout: 5) {
            let listing = try world.server.pactl("list", "sink-inputs")
            listed.withLock { $0 = listing }
            return listing.contains("application.process.id = \"\(sound.pid)\"")
        }
        let block = try #require(listed.value.components(separatedBy: "Sink Input #").first { $0.contains("application.process.id = \"\(sound.pid)\"") })
        #expect(block.contains("media.role = \"event\""), "\(block)")
        #expect(block.contains("application.name = \"earshot\""), "\(block)")
    }

    /// A theme sound goes to the server's sample cache once: a second `earshot sound` of the
    /// same name, another process, finds it there and plays it without uploading (the
    /// sample still carries the first process's id); a third, given an option (so its
    /// command line is parsed before it plays), plays it the same way.
    @Test("earshot sound NAME: a second process plays the sample the first one cached, without uploading")
    func soundCachedAcrossProcesses() async throws {
        let world = try await SessionWorld()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-theme-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folder = root + "/sounds/freedesktop/stereo"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let name = "earshot-e2e-\(UUID().uuidString.prefix(8).lowercased())"
        try FileManager.default.copyItem(atPath: SessionWorld.tone(.left, frequency: 440, duration: 0.3), toPath: folder + "/\(name).wav")
        var environment = world.environment
        environment["XDG_DATA_DIRS"] = root
        environment["XDG_DATA_HOME"] = root + "/home"
        func sample() throws -> String? {
            try world.server.pactl("list", "samples").components(separatedBy: "Sample #").first { $0.contains("Name: earshot.freedesktop.\(name).") }
        }
        #expect(try sample() == nil)
        let first = try await run(Paths.earshot, ["sound", name], environment: environment, timeout: 10)
        #expect(first.status == 0 && first.stdout.contains("played \(name) (\(folder)/\(name).wav, 0.30 s)"), "\(first.stdout) \(first.stderr)")
        let uploaded = try #require(try sample(), "no sample earshot.freedesktop.\(name)")
        #expect(uploaded.contains("media.role = \"event\""), "\(uploaded)")
        let second = try await run(Paths.earshot, ["sound", name], environment: environment, timeout: 10)
        #expect(second.status == 0 && second.stdout.contains("played \(name) (\(folder)/\(name).wav, 0.30 s)"), "\(second.stdout) \(second.stderr)")
        // Uploaded again, the sample would carry the second process's id.
        #expect(try sample() == uploaded)
        // With an option the command line is parsed first (`run()`), and the play takes the
        // same cached path.
        let parsed = try await run(Paths.earshot, ["sound", "--theme", "freedesktop", name], environment: environment, timeout: 10)
        #expect(parsed.status == 0 && parsed.stdout.contains("played \(name) (\(folder)/\(name).wav, 0.30 s)"), "\(parsed.stdout) \(parsed.stderr)")
        #expect(try sample() == uploaded)
        // None opened a stream of the engine's: no "audio output" line.
        #expect(![first, second, parsed].contains { $0.stderr.contains("audio output") }, "\(first.stderr) \(second.stderr) \(parsed.stderr)")
    }

    /// `--device` is the engine's configuration (`AudioEngine.configureShared`), not an
    /// environment variable set behind the app's back: the named ALSA device is used although
    /// a sound server answers, and the server sees no stream from the process. `sound` and
    /// `play` both take it.
    @Test("--device plays to that ALSA device, not to the sound server that answers")
    func deviceOptionChoosesALSA() async throws {
        let world = try await SessionWorld()
        let file = try SessionWorld.tone(.left, frequency: 440, duration: 0.5, level: -12)
        let sound = try await run(Paths.earshot, ["sound", "--device", "null", file], environment: world.environment, timeout: 10)
        #expect(sound.status == 0, "\(sound.stderr)")
        #expect(sound.stderr.contains("audio output: ALSA device “null”"), "\(sound.stderr)")
        let player = try Child(Paths.earshot, ["play", "--name", "devices", "--device", "null", file], environment: world.environment)
        defer { player.kill(SIGKILL) }
        try await eventually("earshot play to say which output it chose", timeout: 10) { player.stderr.contains("audio output:") }
        #expect(player.stderr.contains("audio output: ALSA device “null”"), "\(player.stderr)")
        #expect(try !world.server.pactl("list", "sink-inputs").contains("application.name = \"devices\""))
        // Without it, the same command plays through the server.
        let plain = try await run(Paths.earshot, ["sound", file], environment: world.environment, timeout: 10)
        #expect(plain.stderr.contains("audio output: sound server"), "\(plain.stderr)")
    }

    @Test("MPRIS Position matches what the sink played, from the first second")
    func positionMatchesSink() async throws {
        let world = try await SessionWorld()
        let capture = try await world.capture()
        let player = try world.play("clock", side: .left, duration: 6)
        try await player.waitUntilPlaying()
        try await Task.sleep(for: .milliseconds(300))
        // While playing: Position read at a known instant…
        let (playing, readSent, readReceived) = try await Self.position(player, world)
        // …then paused at a known instant: a pause is heard at once, so what the sink played
        // is the position at the pause, and the position read before must be that less the
        // time between the two.
        let pauseSent = ContinuousClock.now
        let result = try await world.playerctl("--player", "clock", "pause")
        #expect(result.status == 0, "\(result.stderr)")
        let pauseDone = ContinuousClock.now
        try await sessionPoll("Paused") { try await player.playbackStatus() == "Paused" }
        try await Task.sleep(for: .milliseconds(300))
        let (paused, _, _) = try await Self.position(player, world)
        let audio = try await capture.stop()
        let heard = audio.activeRegions(channel: SessionSide.left.channel).totalDuration
        // The pause took effect somewhere between sending it and playerctl's return, and the
        // Position was read somewhere in its call's round trip: the widest gap between the
        // two is from the call's sending to the pause's return, the narrowest from its reply
        // to the pause's sending. (Taking the middle of the round trip as the reading's
        // instant assumed its two halves equal, which a loaded machine does not keep to.)
        let earliest = paused - Self.seconds(pauseDone - readSent)
        let latest = paused - Self.seconds(pauseSent - readReceived) + 0.030
        sessionReport(String(format: "Position %.4f s while playing (%.4f…%.4f s from the pause); %.4f s paused; the sink played %.4f s",
                             playing, earliest, latest, paused, heard))
        // Paused, the position is where the engine put the voice once the flush said what the
        // sink had played (the server's read index after it), not the pause call's estimate
        // (with --long-buffer 5–11 ms past it; with the short buffer −14 … +1.4 ms under load):
        // to the frame where the sink cannot take back what it rendered (0.0–0.1 ms in 6 runs
        // each at 48 kHz without rewinds and on PipeWire). At PulseAudio's defaults the sink
        // rewinds part of its rendered block after that read index is taken: +0.5 … +2.5 ms
        // here, +4.4 ms once in a loaded CI run; there the bound is the issue's, 10 ms.
        let bound = TestSoundServerKind.selected == .pulseAudioDefaults ? 0.010 : 0.003
        #expect(abs(paused - heard) <= bound, "Position \(paused) s after the pause, the sink played \(heard) s")
        #expect(playing >= earliest - 0.010 && playing <= latest + 0.010,
                "Position \(playing) s while playing, expected \(earliest)…\(latest) s from the pause")
    }

    /// When the server dies, in milliseconds after the player says it plays: early, before the
    /// long buffer's second write (its first write, the whole buffer, is all the stream has
    /// had, and no write has said what was buffered: a paused position once went to the 1.3 s
    /// written, not the 0.15 s heard), and later, after some requests. The early moment also
    /// catches a pause for the lost device (the route monitor's, which a queue obeys) that
    /// comes before or after the stream's own failure: it once stayed at its estimate, the
    /// sink's latency past what was heard (0.3–0.4 s at PulseAudio's defaults).
    static let restartMoments: [(settle: Int, captured: Int)] = [(50, 150), (700, 500)]

    @Test("the sound server restarts mid-play: earshot play pauses where it was, says why, and MPRIS says Paused",
          arguments: restartMoments.indices)
    func serverRestart(moment: Int) async throws {
        let (settle, captured) = Self.restartMoments[moment]
        // The first server's sink kept awake: the player starts before any capture, and an idle
        // null sink with rewinds (PulseAudio's defaults) then takes a new stream at its own
        // pace (paplay of a 2 s file took 3.9 s there, 2.0 s beside a keep-awake stream), so
        // the position ran a second past what had been written and fell back to it at the kill.
        // The restarted server's sink is woken by the capture that starts on it.
        let world = try await SessionWorld()
        let player = try world.play("restart", side: .left, duration: 10)
        try await player.waitUntilPlaying()
        try await Task.sleep(for: .milliseconds(settle))
        // What the sink had played by the kill: a capture until then.
        let capture0 = try await world.capture()
        try await Task.sleep(for: .milliseconds(captured))
        let (before, _, _) = try await Self.position(player, world)
        try world.server.restart()
        let heardBefore = try await capture0.stop(drain: 0).activeRegions(channel: SessionSide.left.channel).totalDuration
        do {
            try await sessionPoll("Paused after the restart", timeout: 5) { try await player.playbackStatus() == "Paused" }
        } catch {
            // Say what became of the player (its MPRIS name may be gone here).
            Issue.record("\(error); earshot play \(player.process.isRunning ? "is running" : "has exited"); its output: \(player.process.stdout) \(player.process.stderr)")
            return
        }
        try await Task.sleep(for: .milliseconds(300))
        let (after, _, _) = try await Self.position(player, world)
        // Not before what the capture heard in its last half second, by more than the issue's
        // 10 ms bound on the Position against what was heard (it can be a little short: the
        // server's last timing is up to a timing update old when it dies),
        // and not past what the old server could have buffered.
        // (Its stderr says where the engine paused it: "paused at N ms".)
        #expect(after >= heardBefore - 0.010 && after <= before + 0.3,
                "Position \(after) s; \(before) s before the restart, \(heardBefore) s captured; earshot play said: \(player.process.stderr)")
        try await Task.sleep(for: .milliseconds(300))
        let (later, _, _) = try await Self.position(player, world)
        #expect(abs(later - after) < 0.002, "Position holds while paused: \(after) s, then \(later) s")
        #expect(player.process.stderr.contains("audio output lost: the sound server"), "\(player.process.stderr)")
        #expect(player.process.isRunning)

        // Play again: it plays on the new server, from where it stopped.
        let capture = try await world.capture()
        let result = try await world.playerctl("--player", "restart", "play")
        #expect(result.status == 0, "\(result.stderr)")
        try await sessionPoll("Playing again") { try await player.playbackStatus() == "Playing" }
        try await Task.sleep(for: .milliseconds(800))
        let audio = try await capture.stop()
        #expect(audio.activeRegions(channel: SessionSide.left.channel).totalDuration > 0.5, "the new server hears it")
        let (resumed, _, _) = try await Self.position(player, world)
        #expect(resumed > after + 0.5, "it went on from \(after) s: \(resumed) s")
    }
}
