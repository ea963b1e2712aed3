import Earshot
import AudioEngine
import Foundation
import Testing
import TestSupport

@Suite("QueuePlayer, captured from a null sink")
struct QueuePlayerTests {
    func sine(_ frequency: Double, _ duration: Double) throws -> URL {
        URL(fileURLWithPath: try TestSignals.sine(frequency: frequency, duration: duration))
    }

    @Test("items follow each other without a gap, and the queue reports its progress")
    func gapless() async throws {
        let queue = try QueuePlayer(urls: [sine(500, 0.5), sine(1000, 0.5)])
        let nowPlaying = NowPlayingInfoCenter()
        queue.connect(to: nowPlaying, commands: RemoteCommandCenter())
        #expect(queue.items.count == 2)
        #expect(nowPlaying.nowPlayingInfo?.queueIndex == 0 && nowPlaying.nowPlayingInfo?.queueCount == 2)
        let events = Locked<[QueuePlayer.Event]>([])
        let listener = Task { for await event in queue.events { events.withLock { $0.append(event) } } }
        let audio = try await captured {
            queue.play()
            try await eventually("the queue to run out", timeout: 5) { queue.currentItem == nil }
        }
        listener.cancel()
        // 1 ms windows: with the default 5 ms ones a short dropout inside a window does
        // not break the run and shows only as a region a few ms too long.
        let regions = audio.activeRegions(minGap: 0.001, window: 0.001)
        #expect(regions.count == 1, "a gap between items: \(regions)")
        #expect(regions.first?.duration.isClose(to: 1, within: 0.002) == true, "\(regions)")
        let start = try #require(regions.first?.start)
        #expect(try #require(audio.dominantFrequency(channel: 0, range: (start + 0.05)..<(start + 0.45))).isClose(to: 500, within: 2))
        #expect(try #require(audio.dominantFrequency(channel: 0, range: (start + 0.55)..<(start + 0.95))).isClose(to: 1000, within: 2))
        let ended = events.value.compactMap { if case .itemDidPlayToEnd(let item) = $0 { item.title } else { nil } }
        #expect(ended.count == 2, "\(events.value)")
        #expect(nowPlaying.nowPlayingInfo == nil, "nothing is playing once the queue ran out")
    }

    @Test("next, previous, insert and remove move through the queue and update now playing")
    func navigation() async throws {
        let queue = try QueuePlayer(urls: [sine(300, 2), sine(400, 2), sine(500, 2)])
        let nowPlaying = NowPlayingInfoCenter()
        let commands = RemoteCommandCenter()
        queue.connect(to: nowPlaying, commands: commands)
        _ = try await captured {
            queue.play()
            try await sleep(0.2)
            #expect(commands.nextTrackCommand.perform() == .success)
            #expect(queue.currentIndex == 1)
            #expect(nowPlaying.nowPlayingInfo?.queueIndex == 1)
            #expect(nowPlaying.nowPlayingInfo?.playbackState == .playing)
            #expect(commands.previousTrackCommand.perform() == .success)
            #expect(queue.currentIndex == 0)
            #expect(commands.previousTrackCommand.perform() == .noSuchContent, "no item before the first")
            let inserted = try queue.insert(try sine(600, 1), after: queue.currentItem)
            #expect(queue.items.map(\.id)[1] == inserted.id)
            queue.remove(queue.items[0])
            #expect(queue.currentItem?.id == inserted.id, "removing the current item moves on")
            #expect(commands.changePlaybackPositionCommand.perform(.init(positionTime: 0.5)) == .success)
            try await sleep(0.1)
            #expect(queue.currentTime >= 0.5)
            queue.removeAllItems()
            #expect(queue.currentItem == nil && nowPlaying.nowPlayingInfo == nil)
        }
    }

    @Test("a burst of remote Next calls moves the queue at once and in order, and the item it lands on plays")
    func nextBurst() async throws {
        // Each remote Next moves at once and leaves the opening of its item to the queue's
        // opener, which opens the item current when it gets to it (not each one passed).
        let queue = try QueuePlayer(urls: (0..<12).map { try sine(300 + 50 * Double($0), 3) })
        let nowPlaying = NowPlayingInfoCenter()
        let commands = RemoteCommandCenter()
        queue.connect(to: nowPlaying, commands: commands)
        let events = Locked<[QueuePlayer.Event]>([])
        let listener = Task { for await event in queue.events { events.withLock { $0.append(event) } } }
        let audio = try await captured {
            queue.play()
            try await sleep(0.3)
            for step in 1...10 {
                #expect(commands.nextTrackCommand.perform() == .success)
                #expect(queue.currentIndex == step)
                #expect(nowPlaying.nowPlayingInfo?.queueIndex == step && nowPlaying.nowPlayingInfo?.playbackState == .playing,
                        "\(String(describing: nowPlaying.nowPlayingInfo))")
            }
            #expect(queue.timeControlStatus == .playing)
            try await sleep(0.6)
            #expect(queue.isPlaying)
        }
        listener.cancel()
        let end = audio.duration
        #expect(try #require(audio.dominantFrequency(channel: 0, range: (end - 0.45)..<(end - 0.05))).isClose(to: 800, within: 2),
                "the item the burst landed on (800 Hz) plays")
        let changed = events.value.compactMap { if case .currentItemChanged(let item?) = $0 { item.id } else { nil } }
        #expect(changed == queue.items[0...10].map(\.id), "each move reported, in order: \(events.value)")
        #expect(!events.value.contains { if case .itemFailed = $0 { true } else { false } }, "\(events.value)")
    }

    @Test("a bad file in the queue is an error naming it")
    func badFile() {
        #expect(throws: AudioFileError.self) { try QueuePlayer(urls: [URL(fileURLWithPath: "/nonexistent/x.flac")]) }
    }
}

@Suite("SystemSound, captured from a null sink")
struct SystemSoundTests {
    @Test("a theme sound by name plays at once and calls its completion")
    func bell() async throws {
        let sound = try SystemSound(named: "bell")
        #expect(sound.path.hasSuffix("/bell.oga"))
        let completed = Locked(false)
        let clock = ContinuousClock()
        var called: ContinuousClock.Instant?
        let audio = try await captured {
            called = clock.now
            try sound.play { completed.withLock { $0 = true } }
            try await eventually("the completion", timeout: 3) { completed.value }
        }
        let onset = try #require(audio.onset(threshold: -60))
        let playCall = try #require(called.flatMap { audio.time(of: $0) })
        let latency = onset - playCall
        #expect(latency < 0.15, "\(latency * 1000) ms from play() to the first frame captured")
        #expect(!sound.isPlaying)
    }

    @Test("a short sound is heard whole, and its completion comes after its last frame")
    func completionAfterHeard() async throws {
        let sound = try SystemSound(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 1000, duration: 0.05)))
        let clock = ContinuousClock()
        let completedAt = Locked<ContinuousClock.Instant?>(nil)
        let audio = try await captured {
            try sound.play { completedAt.withLock { $0 = clock.now } }
            try await eventually("the completion", timeout: 3) { completedAt.value != nil }
        }
        let region = try #require(audio.activeRegions().first)
        // At PulseAudio's defaults (a 44.1 kHz null sink with rewinds) the server loses up to
        // 2.5 ms of a short sound for its own client too: 12 paplays of a 50 ms sine there
        // were captured 47.5–49.6 ms long (2026-11-26, parec from the monitor, a keep-alive
        // stream). Ours, 25 runs: 47.6–49.0 ms, the start cut at a random phase of its first
        // period and the end whole; paplay's starts were whole, so where the server loses
        // its part differs, and ours is not understood yet. 2 ms failed about 1 run in 6 there.
        let bound = TestSoundServerKind.selected == .pulseAudioDefaults ? 0.003 : 0.002
        #expect(region.duration.isClose(to: 0.05, within: bound), "\(region)")
        let completion = try #require(completedAt.value.flatMap { audio.time(of: $0) })
        #expect(completion >= region.end - 0.005, "completion at \(completion) s, the sound ended at \(region.end) s")
    }

    @Test("on an open, idle device a sound starts as fast as on a fresh one")
    func warmStart() async throws {
        let sound = try SystemSound(contentsOf: URL(fileURLWithPath: TestSignals.sine(frequency: 1000, duration: 0.1)))
        let clock = ContinuousClock()
        let calls = Locked<[ContinuousClock.Instant]>([])
        let done = Locked(0)
        let audio = try await captured {
            for round in 1...2 {
                calls.withLock { $0.append(clock.now) }
                try sound.play { done.withLock { $0 += 1 } }
                try await eventually("the completion", timeout: 3) { done.value == round }
                try await sleep(0.2)  // the device stays open, idle
            }
        }
        #expect(AudioEngine.systemSounds.isDeviceOpen)
        let onsets = audio.activeRegions().map(\.start)
        #expect(onsets.count == 2, "\(audio.activeRegions())")
        for (onset, call) in zip(onsets, calls.value) {
            let latency = try onset - #require(audio.time(of: call))
            #expect(latency < 0.02, "\(latency * 1000) ms from play() to the first frame captured")
        }
    }

    @Test("a missing name lists what was searched; a bad file names itself")
    func errors() throws {
        do {
            _ = try SystemSound(named: "earshot-no-such-sound")
            Issue.record("found a sound that does not exist")
        } catch {
            #expect("\(error)".contains("earshot-no-such-sound") && "\(error)".contains("/usr/share/sounds"))
        }
        #expect(throws: AudioFileError.self) { try SystemSound(contentsOf: URL(fileURLWithPath: "/nonexistent.wav")) }
    }

    @Test("overlapping plays of one sound both sound")
    func overlapping() async throws {
        let sound = try SystemSound(contentsOf: URL(fileURLWithPath: TestSignals.write(
            [.tone(frequency: 900, duration: 0.2), .silence(duration: 0.3)], name: "click")))
        let done = Locked(0)
        let audio = try await captured {
            try sound.play { done.withLock { $0 += 1 } }
            try await sleep(0.3)
            try sound.play { done.withLock { $0 += 1 } }
            try await eventually("both completions", timeout: 3) { done.value == 2 }
        }
        #expect(audio.activeRegions().count == 2, "\(audio.activeRegions())")
    }
}
