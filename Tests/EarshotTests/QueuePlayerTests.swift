@testable import Earshot
import AudioEngine
import Foundation
import Testing
import TestSupport

@Suite("QueuePlayer, captured from a null sink", .tags(.appAudio))
struct QueuePlayerTests {
    func sine(_ frequency: Double, _ duration: Double) throws -> URL {
        URL(fileURLWithPath: try TestSignals.sine(frequency: frequency, duration: duration))
    }

    /// A sine at `level` dBFS peak (a level check tells one item from two at once).
    func sine(_ frequency: Double, _ duration: Double, level: Double) throws -> URL {
        URL(fileURLWithPath: try TestSignals.sine(frequency: frequency, duration: duration, level: level))
    }

    /// Waits (at most `timeout` seconds) until `queue` has run out of items.
    func waitUntilRunOut(_ queue: QueuePlayer, timeout: Double) async throws {
        try await eventually("the queue to run out", timeout: timeout) { queue.currentItem == nil }
    }

    /// Captures `queue` played from where it is until it runs out (at most `timeout` seconds).
    func capturedToTheEnd(_ queue: QueuePlayer, timeout: Double) async throws -> CapturedAudio {
        try await captured {
            queue.play()
            try await waitUntilRunOut(queue, timeout: timeout)
        }
    }

    /// Captures `queue` played until its item's end is mixed (the engine has started the
    /// next item), then changed by `change` in that item's last buffer; returns the capture
    /// and when the change began, in the capture's time.
    func capturedWithChangeInItemsLastBuffer(_ queue: QueuePlayer, _ change: @escaping () async throws -> Void) async throws -> (audio: CapturedAudio, changedAt: Double) {
        try await capturedWithChangeInLastBuffer(play: { queue.play() }, endMixed: {
            queue.state.withLock { $0.next?.player.isPlaying } == true
        }, change)
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
        let audio = try await capturedToTheEnd(queue, timeout: 5)
        listener.cancel()
        // 1 ms windows: with the default 5 ms ones a short dropout inside a window does
        // not break the run and shows only as a region a few ms too long.
        let regions = audio.activeRegions(minGap: 0.001, window: 0.001)
        let span = gaplessSpan(regions, in: audio)
        #expect(span != nil, "a gap between items: \(regions)")
        #expect(span?.isClose(to: 1, within: 0.002) == true, "\(regions)")
        let start = try #require(regions.first?.start)
        #expect(try #require(audio.dominantFrequency(channel: 0, range: (start + 0.05)..<(start + 0.45))).isClose(to: 500, within: 2))
        #expect(try #require(audio.dominantFrequency(channel: 0, range: (start + 0.55)..<(start + 0.95))).isClose(to: 1000, within: 2))
        let ended = events.value.compactMap { if case .itemDidPlayToEnd(let item) = $0 { item.title } else { nil } }
        #expect(ended.count == 2, "\(events.value)")
        #expect(nowPlaying.nowPlayingInfo == nil, "nothing is playing once the queue ran out")
    }

    /// On a long server buffer the next item starts in the mix a buffer ahead of what is
    /// heard; when it becomes the current item the queue gives it its volume and rate again.
    /// Those used to restart it from what was heard (the rate's `enableRate` went from false
    /// to true), and its start was heard twice: 84 ms of it with a 0.25 s buffer, and after
    /// the end with a 2 s one. Now the next item is given them as it is prepared, and a
    /// setting that changes nothing does nothing.
    @Test("on a long buffer, the next item follows without a gap and its start is heard once")
    func gaplessOnLongBuffer() async throws {
        let queue = try QueuePlayer(urls: [sine(500, 2.5), sine(1000, 1)], names: nil, engine: longBufferEngine(seconds: 0.25))
        let audio = try await capturedToTheEnd(queue, timeout: 8)
        let regions = audio.activeRegions(minGap: 0.001, window: 0.001)
        let span = gaplessSpan(regions, in: audio)
        #expect(span != nil, "a gap, or sound after the end: \(regions)")
        #expect(span?.isClose(to: 3.5, within: 0.003) == true, "\(regions)")
        let start = try #require(regions.first?.start)
        #expect(try #require(audio.dominantFrequency(channel: 0, range: (start + 2.6)..<(start + 3.4))).isClose(to: 1000, within: 2))
    }

    /// With a 2 s buffer a 1 s item has ended in the mix before the queue makes it current
    /// (when the item before it is heard ending). The queue played it again then, over the
    /// item after it (a voice the engine started on its predecessor's end is not started
    /// again now); and the item after it, prepared only as the short one became current,
    /// had missed the short one's end in the mix and started when that end was heard, 0.1 s
    /// late. The queue now opens items ahead until they cover the buffer, each queued after
    /// the one before it.
    @Test("on a long buffer, an item shorter than the buffer is heard once, and the item after it follows without a gap")
    func shortItemOnLongBuffer() async throws {
        let queue = try QueuePlayer(urls: [sine(500, 2.5, level: -12), sine(1000, 1, level: -12), sine(300, 2, level: -12)], names: nil, engine: longBufferEngine(seconds: 2))
        let audio = try await capturedToTheEnd(queue, timeout: 10)
        let regions = audio.activeRegions(minGap: 0.001, window: 0.001)
        let span = gaplessSpan(regions, in: audio)
        #expect(span != nil, "a gap, or sound after the end: \(regions)")
        #expect(span?.isClose(to: 5.5, within: 0.003) == true, "\(regions)")
        let start = try #require(regions.first?.start)
        for (offset, frequency) in [(2.6, 1000.0), (3.1, 1000), (3.75, 300), (4.25, 300), (4.75, 300)] {
            let window = (start + offset)..<(start + offset + 0.3)
            #expect(try #require(audio.dominantFrequency(channel: 0, range: window)).isClose(to: frequency, within: 3), "at \(offset) s")
            #expect(audio.peakDBFS(channel: 0, range: window) < -10, "two items at once at \(offset) s")
        }
    }

    /// Once an item's last frame is mixed the engine starts the next one (gapless), a
    /// buffer before the queue, which moves on when that frame is heard, makes it current.
    /// A pause then used to reach only the ended item: the next one played on while the
    /// queue said paused; then it paused both, and dropped the ended item's unheard end. A
    /// long buffer makes the moment easy to hit (with 1 s, half a second at least: the test
    /// acts within it even on a loaded machine); the short one has it too, for a period or
    /// so at each item's end.
    @Test("a pause in an item's last buffer pauses at what is heard; play plays the rest of it, then the next item without a gap")
    func pauseAtItemBoundary() async throws {
        let queue = try QueuePlayer(urls: [sine(500, 1.5), sine(1000, 3)], names: nil, engine: longBufferEngine(seconds: 1))
        var positionPaused: TimeInterval = -1
        let (audio, paused) = try await capturedWithChangeInItemsLastBuffer(queue) {
            #expect(queue.isPlaying, "the queue says it does not play while its item's end is still to be heard")
            queue.pause()
            try await sleep(0.5)
            #expect(!queue.isPlaying, "the queue says it plays after a pause")
            #expect(queue.currentItem == queue.items.first, "the pause moved the queue on")
            positionPaused = queue.currentTime
            queue.play()
            // The rest of the first item, then a little of the next.
            try await sleep(max(0, 1.5 - positionPaused) + 0.4)
            queue.stop()
        }
        let regions = audio.activeRegions(minGap: lastBufferGap, window: 0.002)
        try #require(regions.count == 2, "no silence between the pause and play, or a gap after it: \(regions)")
        // Heard within 30 ms of the call (the first item still had half a second or more to go).
        #expect(regions[0].end - paused < 0.03, "paused at \(paused) s: \(regions)")
        #expect(regions[0].duration < 1.4, "\(regions)")
        // The position the pause left is what was heard.
        #expect(positionPaused.isClose(to: regions[0].duration, within: 0.03), "position \(positionPaused) s, heard \(regions)")
        // Resumed in the first item, where it paused: all of it is heard, then the
        // next item without a gap.
        let resumed = regions[1]
        let rest = 1.5 - regions[0].duration
        #expect(try #require(audio.dominantFrequency(channel: 0, range: resumed.start..<(resumed.start + max(0.01, rest - 0.02)))).isClose(to: 500, within: 5),
                "\(regions)")
        #expect(try #require(audio.dominantFrequency(channel: 0, range: (resumed.start + rest + 0.05)..<(resumed.start + rest + 0.25))).isClose(to: 1000, within: 2),
                "\(regions)")
    }

    /// A seek in the same moment went to the ended item, whose end was already mixed, and
    /// was lost: the queue moved on when that end was heard. It now plays the current item
    /// on from the target, and the next item after it without a gap.
    ///
    /// The rest of the item can also go missing without a gap: the pause's interrupt can cut
    /// off, before it wrote anything, the first write after the restart, which has mixed one
    /// period (16384 frames) of the sought item; the restart after it has nothing to drop,
    /// and the item goes on a period later. What a write cut short did not write is taken
    /// back.
    ///
    /// Where the seek is heard is measured in the sound, not estimated from the clock: the
    /// first item is a stepped tone too (300 Hz, then 100 Hz up every quarter second), so the
    /// drop back to 400 Hz is the seek, and the rise to 500 Hz is position 0.5 s. On PipeWire
    /// the clock's estimate puts the seek a few tens of milliseconds later than it is heard:
    /// the capture's origin is a late bound (a sample's arrival less the frames before it),
    /// and the monitor delivers through pipewire-pulse a graph cycle and parec's buffering
    /// late, so the estimate lags by that much, too close to a 50 ms bound, while the sound
    /// itself is whole.
    @Test("a seek in an item's last buffer plays that item on from the target, then the next item without a gap")
    func seekAtItemBoundary() async throws {
        // What is heard of each item tells where it played from: the first steps up from 300 Hz,
        // the second from 1000 Hz, by 100 and 200 Hz every quarter second.
        let first = URL(fileURLWithPath: try TestSignals.steppedTone(start: 300, step: 100, stepDuration: 0.25, steps: 6))
        let stepped = URL(fileURLWithPath: try TestSignals.steppedTone(start: 1000, step: 200, stepDuration: 0.25, steps: 4))
        let queue = try QueuePlayer(urls: [first, stepped], names: nil, engine: longBufferEngine(seconds: 1))
        var positionBefore = -1.0
        let (audio, sought) = try await capturedWithChangeInItemsLastBuffer(queue) {
            // The ended item's position is what is heard, not its start.
            positionBefore = queue.currentTime
            // Back from at least 0.5 s heard (the end is mixed a half second or more ahead).
            queue.currentTime = 0.3
            try await waitUntilRunOut(queue, timeout: 6)
        }
        #expect(positionBefore > 0.5, "the position in the last buffer: \(positionBefore) s")
        // The seek itself may leave a few milliseconds of silence (the item is paused and
        // played again); from just after it to the end, none.
        let regions = audio.activeRegions(minGap: lastBufferGap, window: 0.002)
        #expect(regions.filter { $0.end > sought + 0.05 }.count == 1, "a gap after the seek at \(sought) s: \(regions)")
        #expect(!regions.contains { $0.start > sought + 0.05 }, "a gap after the seek at \(sought) s: \(regions)")
        let end = try #require(regions.last?.end)
        // 20 ms windows every 5 ms: 400, 500 and 1000 Hz apart, each step placed within 10 ms.
        let track = audio.frequencyTrack(window: 0.02, hop: 0.005, range: max(0, sought - 0.3)..<end)
        func near(_ hz: Double) -> (FrequencyPoint) -> Bool { { $0.frequency.map { abs($0 - hz) < 30 } ?? false } }
        // The seek: the first window at 400 Hz after the item's end was mixed (it was heard at
        // 0.5 s or later, 500 Hz or more, until then).
        let heardSeek = try #require(track.first(where: near(400))?.time, "no 400 Hz after the seek: \(track)")
        let atHalf = try #require(track.first { $0.time > heardSeek && near(500)($0) }?.time, "no 500 Hz after the seek: \(track)")
        let second = try #require(track.first { $0.time > atHalf && near(1000)($0) }?.time, "the second item never started: \(track)")
        // 0.2 s from the target (0.3 s) to 0.5 s; 1 s from there to the first item's end; the
        // second item's 1 s; and so 1.2 s of the first item from the seek, then 1 s.
        #expect((atHalf - heardSeek).isClose(to: 0.2, within: 0.02), "the seek was heard at \(heardSeek) s, 0.5 s at \(atHalf) s")
        #expect((second - atHalf).isClose(to: 1.0, within: 0.02), "0.5 s at \(atHalf) s, the second item at \(second) s")
        #expect((end - second).isClose(to: 1.0, within: 0.02), "the second item from \(second) s to \(end) s")
        #expect((end - heardSeek).isClose(to: 2.2, within: 0.03), "the seek heard at \(heardSeek) s, the end at \(end) s: \(regions)")
        // The clock's estimate of the seek agrees with where it was heard, loosely: the
        // capture's origin is estimated (see above).
        #expect(abs(heardSeek - sought) < 0.1, "the seek was made at about \(sought) s and heard at \(heardSeek) s")
        #expect(try #require(audio.dominantFrequency(channel: 0, range: (end - 0.2)..<(end - 0.02))).isClose(to: 1600, within: 3),
                "the second item's end was not heard")
    }

    /// On a loaded machine the sound could stop at such a seek, a second of silence, then the
    /// second item: the rest of the first was lost. The stream went ahead without the sought
    /// voice (it waits half a second at most), and the voice, its end mark still the
    /// render's, ended again at once. Here the reader takes 0.7 s to apply the seek: the
    /// rest may come after a gap (the stream's first write goes ahead without it), but
    /// whole, and the second item after it.
    @Test("a seek in an item's last buffer that the reader is slow to apply still plays the rest of the item, then the next")
    func slowSeekAtItemBoundary() async throws {
        let stepped = URL(fileURLWithPath: try TestSignals.steppedTone(start: 1000, step: 200, stepDuration: 0.25, steps: 4))
        let queue = try QueuePlayer(urls: [sine(500, 1.5), stepped], names: nil, engine: longBufferEngine(seconds: 1, seekDelay: 0.7))
        let (audio, sought) = try await capturedWithChangeInItemsLastBuffer(queue) {
            queue.currentTime = 0.3
            try await waitUntilRunOut(queue, timeout: 8)
        }
        let after = audio.activeRegions(minGap: lastBufferGap, window: 0.002).filter { $0.start > sought + 0.05 }
        // PulseAudio at its defaults may play a millisecond where the stream starts again, half
        // a second after the seek (not the other two servers; its source is not found):
        // regions that short before the rest are let through, nothing longer.
        let blips = after.prefix { $0.duration < 0.005 }
        #expect(blips.count <= 1, "sought at \(sought) s: \(after)")
        let rest = try #require(after.dropFirst(blips.count).first, "nothing after the seek at \(sought) s: \(after)")
        // 1.2 s of the first item from the seek, then the second item's 1 s, without a gap.
        #expect(after.count == blips.count + 1, "a gap after the rest started: \(after)")
        #expect(rest.duration.isClose(to: 2.2, within: 0.05), "sought at \(sought) s: \(after)")
        #expect(try #require(audio.dominantFrequency(channel: 0, range: (rest.start + 0.1)..<(rest.start + 1.1))).isClose(to: 500, within: 3))
        #expect(try #require(audio.dominantFrequency(channel: 0, range: (rest.start + 1.25)..<(rest.start + 1.4))).isClose(to: 1000, within: 3),
                "the second item did not start at its start")
        #expect(try #require(audio.dominantFrequency(channel: 0, range: (rest.end - 0.2)..<(rest.end - 0.02))).isClose(to: 1600, within: 3),
                "the second item's end was not heard")
    }

    /// A volume change in the same moment was heard only when the next item started (the
    /// ended item could not be mixed again); the restart now mixes it again from what is
    /// heard, and the next item follows it without a gap.
    @Test("a volume change in an item's last buffer is heard at once; the next item follows without a gap")
    func volumeAtItemBoundary() async throws {
        let queue = try QueuePlayer(urls: [sine(500, 1.5, level: -6), sine(1000, 1, level: -6)], names: nil, engine: longBufferEngine(seconds: 1))
        let (audio, changed) = try await capturedWithChangeInItemsLastBuffer(queue) {
            queue.volume = 0.25
            try await waitUntilRunOut(queue, timeout: 6)
        }
        // A restart mixes the whole buffer again after the flush, and a debug build's sink
        // can run dry for a moment at the change (any restart on a long buffer, not only in
        // the last one). Gaps up to 30 ms, the issue's bound for a change to be heard, count
        // as none here; the item boundary is checked to 5 ms by the seek and pause tests.
        let regions = audio.activeRegions(minGap: 0.03, window: 0.002)
        #expect(regions.count == 1, "a gap: \(regions)")
        #expect(regions.first?.duration.isClose(to: 2.5, within: restartTolerance) == true, "\(regions)")
        let start = try #require(regions.first?.start)
        // The first item (it ends at 1.5 s) at −18 dB from 30 ms after the change.
        try #require(start + 1.48 - (changed + 0.03) > 0.1, "the change came too late to measure: \(regions), at \(changed) s")
        #expect(audio.sineLevelDBFS(channel: 0, range: (changed + 0.03)..<(start + 1.48)).isClose(to: -18, within: 0.5))
        #expect(audio.sineLevelDBFS(channel: 0, range: (start + 1.6)..<(start + 2.4)).isClose(to: -18, within: 0.5))
    }

    /// A rate change restarts an item from what is heard. In the same moment it restarted
    /// the next item, which the engine had started on the ended one's end, at once, over
    /// that end (and the ended item kept its rate). Now the ended item plays on at the new
    /// rate and the next one follows it, from its start.
    @Test("a rate change in an item's last buffer plays that item on at the new rate; the next item follows, from its start",
          // The queue's part is the same on every server. The stretcher's load (both items
          // stretched again at once, in a debug build) starved the harness's PipeWire daemons:
          // holes, and a second item cut short.
          .disabled(if: PipeWireServer.isSharedServer, "the harness's PipeWire starves under the stretcher's CPU load"))
    func rateAtItemBoundary() async throws {
        let stepped = URL(fileURLWithPath: try TestSignals.steppedTone(start: 1000, step: 200, stepDuration: 0.25, steps: 8, level: -12))
        let queue = try QueuePlayer(urls: [sine(500, 1.5, level: -12), stepped], names: nil, engine: longBufferEngine(seconds: 1))
        var positionBefore = -1.0
        let (audio, changed) = try await capturedWithChangeInItemsLastBuffer(queue) {
            positionBefore = queue.currentTime
            queue.rate = 2
            try await waitUntilRunOut(queue, timeout: 6)
        }
        let regions = audio.activeRegions(minGap: lastBufferGap, window: 0.002)
        let end = try #require(regions.last?.end)
        let rest = (1.5 - positionBefore) / 2
        // Both items go through the stretcher again from the change, and the restart waits
        // for both while the old buffer plays on. (A wait bounded at 50 ms is too short for a
        // debug build's stretcher: the restart would write silence where the items were not
        // yet primed, a gap after the change and one before the second item.)
        #expect(regions.count == 1, "a gap at or after the change at \(changed) s: \(regions)")
        // The second item whole, at twice the rate (its 2 s in 1 s), after the first's rest
        // and any gap.
        #expect(end - changed > 1 && end - changed < rest + 1 + 1.1,
                "changed at \(changed) s (position \(positionBefore) s), the end at \(end) s: \(regions)")
        #expect(try #require(regions.last?.duration) > 0.9, "\(regions)")
        // One item at a time (two at −12 dBFS would peak near −6), the second from its start
        // (1000 Hz, its first step: an eighth of a second at twice the rate) and once.
        #expect(audio.peakDBFS(channel: 0, range: (changed + 0.05)..<(end - 0.03)) < -10, "two items at once: \(regions)")
        // The first window after the change that holds one of the second item's steps (a
        // window across the change from 500 Hz reads in between, and is passed over) must be
        // its first.
        let track = audio.frequencyTrack(window: 0.02, range: changed..<end).compactMap(\.frequency)
        let steps = (0..<8).map { 1000 + 200 * Double($0) }
        let firstOfSecond = track.first { frequency in steps.contains { frequency.isClose(to: $0, within: 20) } }
        #expect(firstOfSecond.map { $0.isClose(to: 1000, within: 20) } == true,
                "the second item did not start at its start: \(track.prefix(40)) in \(regions)")
    }

    /// A move to another item in the same moment (the next item started in the mix, the
    /// ended one still current) let go of the started next item without stopping it: it
    /// ended only with its player, and what the buffer held of it (up to a buffer) was
    /// heard before the item moved to.
    @Test("a move just after an item's end was mixed stops the next item the engine started")
    func moveAtItemBoundary() async throws {
        let queue = try QueuePlayer(urls: [sine(500, 1, level: -12), sine(1000, 3, level: -12), sine(300, 3, level: -12)], names: nil, engine: longBufferEngine(seconds: 0.5))
        let (audio, moved) = try await capturedWithChangeInItemsLastBuffer(queue) {
            #expect(queue.loadItem(id: queue.items[2].id))
            try await sleep(1.2)
            queue.stop()
        }
        // The item moved to, and nothing of the dropped one, from 0.15 s after the move.
        for start in [0.15, 0.35, 0.55] {
            let window = (moved + start)..<(moved + start + 0.2)
            #expect(try #require(audio.dominantFrequency(channel: 0, range: window)).isClose(to: 300, within: 3), "\(start) s after the move")
            #expect(audio.peakDBFS(channel: 0, range: window) < -10, "two items at once \(start) s after the move")
        }
    }

    /// An item moved to while the queue was paused is opened and its next one prepared,
    /// but nothing plays to queue it after; ``QueuePlayer/play()`` did not either, so that
    /// item's end was followed by a gap while the queue opened the next one.
    @Test("an item moved to while paused is followed without a gap once played")
    func gaplessAfterPausedMove() async throws {
        // The item played first opens with silence, so that the stream starts on it. At
        // PulseAudio's defaults (rewinds on) the server cuts a few milliseconds off a stream
        // that starts with sound, whatever the client (`paplay` of a sine too), enough to
        // fail the item's length here. That is the stream's start, not the seam between
        // items this checks.
        let second = URL(fileURLWithPath: try TestSignals.write([.silence(duration: 0.1), .tone(frequency: 500, duration: 0.5)]))
        let queue = try QueuePlayer(urls: [sine(300, 0.5), second, sine(1000, 0.5)])
        queue.advanceToNextItem()
        let audio = try await capturedToTheEnd(queue, timeout: 5)
        let regions = audio.activeRegions(minGap: 0.001, window: 0.001)
        #expect(regions.count == 1, "a gap between items: \(regions)")
        #expect(regions.first?.duration.isClose(to: 1, within: 0.002) == true, "\(regions)")
    }

    /// As with `AVAudioPlayer`, metering is off until asked for (the mix then measures
    /// nothing); once on, it holds for the current item and the items after it.
    @Test("the queue's meters measure only once enabled, on the current item and the next")
    func meteringIsOptIn() async throws {
        let level = -12.0
        let queue = try QueuePlayer(urls: [sine(500, 2, level: level), sine(700, 2, level: level)])
        #expect(!queue.isMeteringEnabled)
        var readings: [(left: Float, right: Float)] = []
        _ = try await captured {
            queue.play()
            try await sleep(0.4)
            readings.append(queue.averagePower())
            // The average settles over about a second, as AVAudioPlayer's does.
            queue.isMeteringEnabled = true
            try await sleep(1)
            readings.append(queue.averagePower())
            try await eventually("the second item", timeout: 3) { queue.currentItem == queue.items.last }
            try await sleep(1)
            readings.append(queue.averagePower())
            queue.pause()
        }
        #expect(readings.count == 3)
        #expect(readings.first.map { $0.left == -160 && $0.right == -160 } == true, "metered while off: \(readings)")
        // A sine's RMS is 3.01 dB under its peak.
        for reading in readings.dropFirst() {
            #expect(Double(reading.left).isClose(to: level - 3.01, within: 1), "\(readings)")
        }
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

@Suite("SystemSound, captured from a null sink", .tags(.appAudio))
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
        // At PulseAudio's defaults (a 44.1 kHz null sink with rewinds) the server loses a few
        // milliseconds of a short sound, for its own client (`paplay`) too. Ours loses its
        // start, cut at a random phase of its first period, the end whole; paplay's starts
        // are whole, so where the server loses its part differs, and ours is not understood
        // yet. Hence 3 ms there, not 2.
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
