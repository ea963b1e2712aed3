import Earshot
import AudioEngine
import Foundation
import Platform
import Testing
import TestSupport

/// AudioPlayer heard for real: ALSA → PulseAudio null sink → captured from its monitor.
@Suite("AudioPlayer, captured from a null sink", .tags(.appAudio))
struct AudioPlayerTests {
    @Test("a sine plays for its duration, at its frequency and level")
    func sine() async throws {
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 1000, duration: 1, level: -6)))
        #expect(player.duration.isClose(to: 1, within: 0.001))
        #expect(player.numberOfChannels == 2)
        #expect(player.settings.sampleRate == TestSignals.sinkRate && player.settings.bitDepth == 16 && player.settings.container == "WAV")
        let audio = try await captured {
            #expect(player.play())
            try await waitUntilFinished(player)
        }
        let regions = audio.activeRegions()
        #expect(regions.count == 1, "\(regions)")
        let region = try #require(regions.first)
        #expect(region.duration.isClose(to: 1, within: 0.02), "\(region)")
        let middle = try region.inner(trimming: 0.1)
        #expect(try #require(audio.dominantFrequency(channel: 0, range: middle)).isClose(to: 1000, within: 2))
        #expect(audio.sineLevelDBFS(channel: 0, range: middle).isClose(to: -6, within: 0.5))
        #expect(player.currentTime == 0, "rewound after finishing")
    }

    @Test("a 44.1 kHz file is resampled to the engine rate without changing pitch or length")
    func resampled() async throws {
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 440, duration: 1, sampleRate: 44100, channels: 1)))
        let audio = try await captured {
            player.play()
            try await waitUntilFinished(player)
        }
        let region = try #require(audio.activeRegions().first)
        #expect(region.duration.isClose(to: 1, within: 0.02), "\(region)")
        let middle = try region.inner(trimming: 0.1)
        #expect(try #require(audio.dominantFrequency(channel: 1, range: middle)).isClose(to: 440, within: 2), "mono plays on both channels")
    }

    /// An open, idle stream is stopped: the first writes fill the whole device buffer at
    /// once, before it starts. A voice that starts as soon as the reader has decoded its
    /// first block runs dry within that burst, and its sound has a hole after the block.
    @Test("an unprepared player started on an open, idle device plays without a hole",
          // The race it checks is the engine's own, the same on every server. Under its two
          // busy threads the harness's PipeWire daemons (no real-time scheduling here) starve
          // too: holes of one graph cycle with no underrun the engine can see, and device
          // clocks stalled for a second.
          .disabled(if: PipeWireServer.isSharedServer, "the harness's PipeWire starves under the test's CPU load"))
    func unpreparedOnIdleDevice() async throws {
        let wake = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 1000, duration: 0.1)))
        let file = URL(fileURLWithPath: try TestSignals.sine(frequency: 440, duration: 0.25, sampleRate: 44100, channels: 1))
        // The hole comes from a race of microseconds between the reader's second block and
        // the render thread's burst: it showed in about one start in 20 before the fix, so
        // the test makes many starts.
        let rounds = 12
        // Both cores kept busy, as on a loaded machine: the reader thread (normal priority)
        // then decodes slowly, while the render thread (real time where allowed) does not.
        let load = CPULoad(threads: 2)
        defer { load.stop() }
        // The hole under test is a voice running dry while the device is fed (silence mixed
        // in). A device underrun is another thing: the render thread itself starved, which
        // a loaded 2-core CI machine without real-time scheduling does now and then (one in a
        // fresh-clone run, a 4 ms hole). A take whose stream underran is taken again, at most
        // three; a take with a hole and no underrun fails at once.
        var problems: [String] = []
        for take in 1...3 {
            let underruns = AudioEngine.shared.underrunCount
            let audio = try await captured {
                #expect(wake.play())
                try await waitUntilFinished(wake)
                for _ in 0..<rounds {
                    try await sleep(0.12)  // the stream drains and stops; the device stays open
                    #expect(AudioEngine.shared.isDeviceOpen)
                    let player = try AudioPlayer(contentsOf: file)
                    #expect(player.play())
                    try await waitUntilFinished(player)
                }
            }
            // 1 ms windows and gaps: a hole of a few ms shows as two regions.
            let regions = audio.activeRegions(minGap: 0.001, window: 0.001)
            problems = []
            if regions.count != rounds + 1 { problems.append("\(regions.count) regions for \(rounds + 1) sounds: \(regions)") }
            for region in regions.dropFirst() where !region.duration.isClose(to: 0.25, within: 0.002) {
                problems.append("\(region) is not 0.250 s")
            }
            let starved = AudioEngine.shared.underrunCount - underruns
            print("unprepared starts, take \(take): \(problems.isEmpty ? "no hole" : problems.joined(separator: "; ")), \(starved) device underruns")
            if problems.isEmpty || starved == 0 { break }
        }
        for problem in problems { Issue.record(Comment(rawValue: problem)) }
    }

    @Test("pause leaves a gap as long as the pause, and nothing is lost")
    func pause() async throws {
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 800, duration: 1.5)))
        var paused = 0.0
        let audio = try await captured {
            player.play()
            try await sleep(0.5)
            player.pause()
            let start = Date()
            #expect(!player.isPlaying)
            try await sleep(0.5)
            paused = Date().timeIntervalSince(start)
            player.play()
            try await waitUntilFinished(player)
        }
        let regions = audio.activeRegions()
        #expect(regions.count == 2, "\(regions)")
        // A pause with nothing else playing drops what the output buffered (the sink's own
        // rendered block, a few ms, still plays) and the player resumes from what was heard;
        // on resume the stopped stream starts from an empty buffer. So the gap heard is the
        // pause, less at most 30 ms.
        #expect(regions.gaps.first.map { $0 <= paused + 0.005 && $0 >= paused - 0.030 } == true,
                "gap \(regions.gaps) for a pause of \(paused) s")
        #expect(regions.totalDuration.isClose(to: 1.5, within: 0.03), "\(regions) \(audio.duration)")
    }

    /// A music stream may hold a long server-side buffer (`musicBufferDuration`, 1 s here;
    /// `earshot play` of one file asks for 2 s) for low power; what changes what is heard must not
    /// wait behind it. Each change is timed as heard (the edges of the captured sound)
    /// against the time between the calls, so that the latencies common to all cancel out
    /// and one change heard late shows (without the restarts, each is heard up to a second
    /// late, whenever the server's next half-second request comes).
    @Test("beside a long buffer, a volume change, a second player's start and stop, and a pause are heard within 30 ms")
    func changesHeardAtOnce() async throws {
        let engine = longBufferEngine()
        let first = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 700, duration: 5)), engine: engine)
        let second = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 700, duration: 2)), engine: engine)
        #expect(first.prepareToPlay() && second.prepareToPlay())
        var calls: [Date] = []
        let audio = try await captured {
            #expect(first.play())
            try await sleep(1.5)  // past the first write requests: the buffer is long and full
            first.setVolume(0, fadeDuration: 0)
            calls.append(Date())
            try await sleep(0.5)
            #expect(second.play())
            calls.append(Date())
            try await sleep(0.6)
            second.stop()
            calls.append(Date())
            try await sleep(0.4)
            first.setVolume(1, fadeDuration: 0)
            calls.append(Date())
            try await sleep(0.7)
            first.pause()
            calls.append(Date())
            #expect(engine.ioBufferDuration > 0.3, "the long buffer's request: \(engine.ioBufferDuration) s")
        }
        let regions = audio.activeRegions()
        // The second player starts while the render thread may be filling the long buffer: a
        // start mixed ahead like that is un-mixed by the restart. Before, the restart could
        // not go back past it and gave up, so the start was heard a buffer late and two
        // regions ran together (2 instead of 3): about 1 run in 4 on PipeWire, where the
        // server's requests fell at such moments more often.
        #expect(regions.count == 3, "\(regions)")
        guard regions.count == 3 else { return }
        let asked = zip(calls.dropFirst(), calls).map { $0.timeIntervalSince($1) }
        let heard = [regions[1].start - regions[0].end, regions[1].duration, regions[2].start - regions[1].end, regions[2].duration]
        print("changes beside a long buffer: asked \(asked), heard \(heard), \(engine.underrunCount) underruns")
        let names = ["volume 0 to the second start", "the second player", "its stop to volume 1", "volume 1 to the pause"]
        for (name, (wanted, got)) in zip(names, zip(asked, heard)) {
            #expect(abs(got - wanted) <= 0.030, "\(name): \(got) s heard for \(wanted) s between the calls")
        }
    }

    /// A change beside a long buffer restarts the stream from what was heard (a flush, and
    /// the buffer written again). The position must run with the sound from there: it is
    /// read while playing, then at the pause, which settles where the flush says the sink
    /// stopped; the two readings differ by the time between them. Before the timing after a
    /// restart reached the clock, a two-second buffer's position ran 0.38 s behind the sink
    /// until the next write, a second later (PulseAudio at its defaults), and the pause then
    /// jumped it forward.
    @Test("beside a two-second buffer, the position after a volume change runs with the sound")
    func positionAfterRestart() async throws {
        let engine = longBufferEngine(seconds: 2)
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 700, duration: 8)), engine: engine)
        var playing = 0.0, playingAt = 0.0, paused = 0.0, pausedAt = 0.0
        _ = try await captured {
            #expect(player.play())
            try await sleep(2.5)  // past the first requests: the buffer is long and full
            player.setVolume(0.5, fadeDuration: 0)
            try await sleep(0.25)
            (playing, playingAt) = (player.currentTime, MonotonicClock.seconds())
            try await sleep(0.5)
            player.pause()
            pausedAt = MonotonicClock.seconds()
            try await sleep(0.3)
            paused = player.currentTime
            player.stop()
        }
        let ran = paused - playing, elapsed = pausedAt - playingAt
        print("position after a restart: ran \(ran) s in \(elapsed) s")
        #expect(abs(ran - elapsed) <= 0.015, "the position ran \(ran) s in \(elapsed) s (read at \(playing), paused at \(paused))")
    }

    @Test("a seek while playing lands where asked (stepped tone: frequency tells position)")
    func seek() async throws {
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.steppedTone(steps: 5)))
        let audio = try await captured {
            player.play()
            try await sleep(0.3)
            player.currentTime = 3.25
            #expect(player.currentTime.isClose(to: 3.25, within: 0.05))
            try await waitUntilFinished(player)
        }
        let regions = audio.activeRegions()
        let end = try #require(regions.last?.end)
        // After the seek: 0.75 s of 500 Hz, then 1 s of 600 Hz, then the end.
        let at500 = try #require(audio.dominantFrequency(channel: 0, range: (end - 1.6)..<(end - 1.1)))
        let at600 = try #require(audio.dominantFrequency(channel: 0, range: (end - 0.9)..<(end - 0.1)))
        #expect(at500.isClose(to: 500, within: 3))
        #expect(at600.isClose(to: 600, within: 3))
        let track = audio.frequencyTrack(window: 0.05).compactMap { point in point.frequency.map { (point.time, $0) } }
        let first500 = try #require(track.first { $0.1.isClose(to: 500, within: 5) }?.0)
        #expect((end - first500).isClose(to: 1.75, within: 0.06), "500 Hz from \(first500) s, end at \(end) s")
        #expect(!track.contains { $0.1.isClose(to: 400, within: 5) }, "the part before 3.25 s was skipped")
    }

    @Test("volume and pan change the channel levels by the expected dB")
    func volumeAndPan() async throws {
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 1000, duration: 1, level: -6)))
        player.volume = 0.5
        player.pan = 0.5
        let audio = try await captured {
            player.play()
            try await waitUntilFinished(player)
        }
        let region = try #require(audio.activeRegions().first)
        let middle = try region.inner(trimming: 0.1)
        // Volume 0.5 is −6.02 dB on both; pan 0.5 takes another −6.02 dB off the left.
        #expect(audio.sineLevelDBFS(channel: 0, range: middle).isClose(to: -6 - 12.04, within: 0.5))
        #expect(audio.sineLevelDBFS(channel: 1, range: middle).isClose(to: -6 - 6.02, within: 0.5))
    }

    @Test("a volume fade ramps smoothly to its target")
    func fade() async throws {
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 1000, duration: 1.5, level: -6)))
        let audio = try await captured {
            player.play()
            try await sleep(0.3)
            player.setVolume(0.1, fadeDuration: 0.5)
            try await waitUntilFinished(player)
        }
        let region = try #require(audio.activeRegions().first)
        let fading = try region.inner(head: 0.3, tail: 0.45)
        let before = audio.sineLevelDBFS(channel: 0, range: (region.start + 0.05)..<(region.start + 0.25))
        let after = audio.sineLevelDBFS(channel: 0, range: (region.end - 0.4)..<(region.end - 0.05))
        #expect(before.isClose(to: -6, within: 0.5))
        #expect(after.isClose(to: -26, within: 0.7), "0.1 is −20 dB")
        let levels = audio.frequencyTrack(window: 0.05, range: fading).map(\.rmsDBFS)
        #expect(zip(levels, levels.dropFirst()).allSatisfy { $1 <= $0 + 0.3 }, "the fade only goes down: \(levels)")
    }

    /// The stretcher keeps its delay's worth of the input (about 120 ms of media) until more
    /// comes: until the reader played it out with silence, a sound at rate 2 lost the last
    /// 60 ms of what is heard (0.938 s of 1 s), which a bound of 80 ms let pass.
    @Test("rate 2 halves the duration and rate 0.5 doubles it, at the same pitch, nothing lost at the end",
          arguments: [(rate: Float(2), seconds: 2.0), (rate: Float(0.5), seconds: 0.5)])
    func rate(_ rate: Float, seconds: Double) async throws {
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 1000, duration: seconds, level: -6)))
        player.enableRate = true
        player.rate = rate
        let audio = try await captured {
            player.play()
            try await waitUntilFinished(player)
        }
        let regions = audio.activeRegions(minGap: 0.05)
        #expect(regions.count == 1, "\(regions)")
        let region = try #require(regions.first { $0.duration > 0.5 })
        // Shorter only by what the server's missed graph cycles took at its ends, if any
        // (a PipeWire run lost 16 ms so, one xrun logged, no underrun).
        #expect(region.duration <= 1.005 && region.duration >= 0.995 - audio.graphXrunEdgeLoss,
                "\(region), \(audio.graphXruns) missed graph cycles")
        let middle = try region.inner(trimming: 0.2)
        let frequency = try #require(audio.dominantFrequency(channel: 0, range: middle))
        #expect(frequency.isClose(to: 1000, within: 5), "\(frequency) Hz; track: \(audio.frequencyTrack(window: 0.1))")
    }

    @Test("numberOfLoops n plays n + 1 times, seamlessly")
    func loops() async throws {
        let path = try TestSignals.write([.tone(frequency: 700, duration: 0.2), .silence(duration: 0.15)], name: "burst")
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: path))
        player.numberOfLoops = 2
        let audio = try await captured {
            player.play()
            try await waitUntilFinished(player)
        }
        let regions = audio.activeRegions()
        #expect(regions.count == 3, "\(regions)")
        for gap in regions.gaps { #expect(gap.isClose(to: 0.15, within: 0.003), "\(regions.gaps)") }
        for region in regions { #expect(region.duration.isClose(to: 0.2, within: 0.003)) }
    }

    @Test("two players started with play(atTime:) line up within 1 ms")
    func playAtTime() async throws {
        let path = try TestSignals.sine(frequency: 1000, duration: 0.5, channels: 1)
        let left = try AudioPlayer(contentsOf: URL(fileURLWithPath: path))
        let right = try AudioPlayer(contentsOf: URL(fileURLWithPath: path))
        left.pan = -1
        right.pan = 1
        left.prepareToPlay()
        right.prepareToPlay()
        let audio = try await captured {
            let start = left.deviceCurrentTime + 0.3
            #expect(left.play(atTime: start))
            try await sleep(0.05)
            #expect(right.play(atTime: start))
            try await waitUntilFinished(left)
            try await waitUntilFinished(right)
        }
        let onsetLeft = try #require(audio.onset(channel: 0))
        let onsetRight = try #require(audio.onset(channel: 1))
        #expect(abs(onsetLeft - onsetRight) < 0.001, "left \(onsetLeft) s, right \(onsetRight) s")
    }

    @Test("meters read known levels within 1 dB")
    func meters() async throws {
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 1000, duration: 1.5, level: -12)))
        player.isMeteringEnabled = true
        player.pan = -0.5  // right at −6 dB more
        _ = try await captured {
            player.play()
            try await sleep(1)
            player.updateMeters()
            player.stop()
        }
        // A sine's RMS is 3.01 dB under its peak.
        #expect(Double(player.peakPower(forChannel: 0)).isClose(to: -12, within: 1))
        #expect(Double(player.averagePower(forChannel: 0)).isClose(to: -15.01, within: 1))
        #expect(Double(player.peakPower(forChannel: 1)).isClose(to: -18.02, within: 1))
        #expect(Double(player.averagePower(forChannel: 1)).isClose(to: -21.03, within: 1))
        #expect(player.averagePower(forChannel: 5) == -160)
    }

    @Test("finishing is reported through the delegate and the event stream")
    func events() async throws {
        final class Delegate: AudioPlayerDelegate {
            let finished = Locked<[Bool]>([])
            func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) { finished.withLock { $0.append(flag) } }
        }
        let delegate = Delegate()
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(duration: 0.2)))
        player.delegate = delegate
        _ = try await captured {
            player.play()
            try await waitUntilFinished(player)
        }
        try await eventually("the delegate") { delegate.finished.value == [true] }
        var iterator = player.events.makeAsyncIterator()
        guard case .finished(successfully: true)? = await iterator.next() else {
            Issue.record("expected finished(successfully: true)")
            return
        }
    }

    @Test("bad files give clear errors while another player keeps playing")
    func badFiles() async throws {
        let folder = try makeFolder("bad-files")
        let empty = folder + "/empty.wav"
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        let random = folder + "/random.mp3"
        _ = FileManager.default.createFile(atPath: random, contents: Data((0..<4096).map { _ in UInt8.random(in: 0...255) }))
        let good = try Data(contentsOf: URL(fileURLWithPath: TestSignals.sine(duration: 1)))
        let truncated = folder + "/truncated.wav"
        _ = FileManager.default.createFile(atPath: truncated, contents: good.prefix(good.count / 2))

        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 600, duration: 1.5)))
        let audio = try await captured {
            player.play()
            for (path, reason) in [(empty, "empty"), (random, random), (folder, "directory"), (folder + "/missing.wav", "no such file")] {
                do {
                    _ = try AudioPlayer(contentsOf: URL(fileURLWithPath: path))
                    Issue.record("\(path) opened")
                } catch {
                    #expect("\(error)".contains(path) && "\(error)".contains(reason), "\(error)")
                }
            }
            // A truncated file opens (its header is fine) and plays what it has, then
            // reports the cut.
            let cut = try AudioPlayer(contentsOf: URL(fileURLWithPath: truncated))
            cut.volume = 0
            cut.play()
            try await waitUntilFinished(player)
        }
        let regions = audio.activeRegions()
        #expect(regions.count == 1 && regions[0].duration.isClose(to: 1.5, within: 0.02), "\(regions)")
    }

    @Test("a missing device is a clear error, quickly, not a hang")
    func missingDevice() async throws {
        // Inside withSharedAudio like every test that opens ALSA: ALSA reads its configuration
        // (and so where "default" goes) at the first open in the process, which must come
        // after the shared server has set PULSE_SERVER.
        try await withSharedAudio(idleTimeout: 0) { _ in
            let engine = AudioEngine(configuration: .init(device: "earshot_no_such_device"))
            let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(duration: 0.2)), engine: engine)
            let start = Date()
            #expect(!player.play())
            #expect(Date().timeIntervalSince(start) < 2)
            #expect(player.lastError?.description.contains("earshot_no_such_device") == true, "\(String(describing: player.lastError))")
            #expect(!player.isPlaying)
        }
    }

    @Test("the engine reports sound after silence and releases the device when idle")
    func soundStartedAndIdle() async throws {
        var configuration = AudioEngine.Configuration()
        configuration.idleRelease = 0.3
        let engine = AudioEngine(configuration: configuration)
        let starts = Locked(0)
        // Read on the engine's event thread as the event arrives: polling from a test task
        // can be late by more than the idle time when other tests keep the cooperative
        // pool busy, and would then see the device already released.
        let openAtEvent = Locked<[Bool]>([])
        engine.onSoundStarted {
            openAtEvent.withLock { $0.append(engine.isDeviceOpen) }
            starts.withLock { $0 += 1 }
        }
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: TestSignals.sine(duration: 0.3)), engine: engine)
        _ = try await captured {
            #expect(player.play())
            #expect(engine.isDeviceOpen, "play() opens the device before it returns")
            try await eventually("the sound-started event") { starts.value == 1 }
            #expect(openAtEvent.value == [true])
            try await waitUntilFinished(player)
            try await eventually("the device to be released", timeout: 3) { !engine.isDeviceOpen }
            let before = engine.deviceCurrentTime
            try await sleep(0.1)
            #expect(engine.deviceCurrentTime > before, "the clock runs on while released")
            #expect(player.play())
            try await eventually("a second sound-started event") { starts.value == 2 }
            #expect(openAtEvent.value == [true, true], "the device was opened again")
            try await waitUntilFinished(player)
        }
        #expect(engine.underrunCount == 0)
    }
}
