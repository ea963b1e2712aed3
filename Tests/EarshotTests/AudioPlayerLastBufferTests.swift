import Earshot
import AudioEngine
import Foundation
import Testing
import TestSupport

/// On a long buffer a player's last frame is mixed up to a buffer before it is heard. In
/// that time the listener still hears it play: `isPlaying`, `currentTime`, a pause and a
/// seek are for what is heard, and the end is reported once, when heard. (Before, the
/// player said it had stopped, its position read 0, a pause did nothing and a seek was
/// lost, for up to the buffer's length.)
extension AudioPlayerTests {
    /// Counts the finishes an ``AudioPlayerDelegate`` is told of.
    final class FinishCounter: AudioPlayerDelegate {
        let finished = Locked<[Bool]>([])
        func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) { finished.withLock { $0.append(flag) } }
    }

    /// A player of `file` on a one-second buffer, and the counter of its finishes.
    static func longBufferPlayer(_ file: String) throws -> (AudioPlayer, FinishCounter) {
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: file), engine: longBufferEngine(seconds: 1))
        let delegate = FinishCounter()
        player.delegate = delegate
        return (player, delegate)
    }

    /// Waits for `player` to finish, and a little past its end.
    static func finish(_ player: AudioPlayer) async throws {
        try await waitUntilFinished(player)
        try await sleep(0.2)
    }

    @Test("on a long buffer, a pause after the end was mixed pauses at what is heard; play plays the rest, and the end is reported once")
    func pauseInLastBuffer() async throws {
        let (player, delegate) = try Self.longBufferPlayer(TestSignals.sine(frequency: 500, duration: 1.5))
        var positionPaused = -1.0, positionPlaying = -1.0
        let (audio, paused) = try await capturedWithChangeInLastBuffer(play: { #expect(player.play()) }, endMixed: { player.isEndingUnheard }) {
            #expect(player.isPlaying, "the player says it stopped while its end is still to be heard")
            positionPlaying = player.currentTime
            player.pause()
            try await sleep(0.5)
            #expect(!player.isPlaying)
            #expect(delegate.finished.value.isEmpty, "the end was reported, though the player paused before it was heard")
            positionPaused = player.currentTime
            #expect(player.play())
            try await Self.finish(player)
        }
        #expect(delegate.finished.value == [true], "\(delegate.finished.value)")
        let regions = audio.activeRegions(minGap: lastBufferGap, window: 0.002)
        try #require(regions.count == 2, "no silence between the pause and play: \(regions)")
        #expect(regions[0].end - paused < 0.03, "paused at \(paused) s: \(regions)")
        // Not 0 (the rewind that used to come with the end's mix), but what was heard.
        #expect(positionPlaying > 0.4, "the position after the end was mixed: \(positionPlaying)")
        #expect(positionPaused.isClose(to: regions[0].duration, within: 0.03), "position \(positionPaused) s, heard \(regions)")
        // The whole sound, in two parts.
        #expect((regions[0].duration + regions[1].duration).isClose(to: 1.5, within: 0.03), "\(regions)")
    }

    @Test("on a long buffer, a seek after the end was mixed plays on from the target, and the end is reported once, when heard")
    func seekInLastBuffer() async throws {
        let (player, delegate) = try Self.longBufferPlayer(TestSignals.steppedTone(steps: 3))
        let (audio, sought) = try await capturedWithChangeInLastBuffer(play: { #expect(player.play()) }, endMixed: { player.isEndingUnheard }, timeout: 6) {
            player.currentTime = 1.5
            #expect(player.currentTime.isClose(to: 1.5, within: 0.05), "\(player.currentTime)")
            #expect(player.isPlaying)
            try await Self.finish(player)
        }
        #expect(delegate.finished.value == [true], "\(delegate.finished.value)")
        let regions = audio.activeRegions()
        let end = try #require(regions.last?.end)
        // From the seek: the rest of the second step (300 Hz, 0.5 s), then 400 Hz.
        #expect((end - sought).isClose(to: 1.5, within: 0.06), "sought at \(sought) s, the end at \(end) s: \(regions)")
        let first = try #require(audio.dominantFrequency(channel: 0, range: (sought + 0.08)..<(sought + 0.45)))
        #expect(first.isClose(to: 300, within: 5), "\(first) Hz just after the seek")
    }

    @Test("on a long buffer, a volume change after the end was mixed is heard at once, and the sound is whole")
    func volumeInLastBuffer() async throws {
        let (player, delegate) = try Self.longBufferPlayer(TestSignals.sine(frequency: 500, duration: 2, level: -6))
        let (audio, changed) = try await capturedWithChangeInLastBuffer(play: { #expect(player.play()) }, endMixed: { player.isEndingUnheard }) {
            player.volume = 0.25
            try await Self.finish(player)
        }
        #expect(delegate.finished.value == [true], "\(delegate.finished.value)")
        // A restart mixes the whole buffer again after the flush, and a debug build's sink
        // can run dry for a moment at the change (any restart on a long buffer, not only in
        // the last one). Gaps up to 30 ms, the issue's bound for a change to be heard, count
        // as none here; the item boundary is checked to 5 ms by the seek and pause tests.
        let regions = audio.activeRegions(minGap: 0.03, window: 0.002)
        // (A restart on PipeWire can lose a graph cycle of the sound: the flush there leaves
        // the stream a cycle on from where the mix goes on. See `restartTolerance`.)
        let whole = {
            #expect(regions.count == 1, "a gap: \(regions)")
            #expect(regions.first.map { $0.duration.isClose(to: 2, within: restartTolerance) } == true, "\(regions)")
        }
        if TestSoundServerKind.selected == .pipeWire {
            // On PipeWire the same restart sometimes leaves a gap at the change just over
            // the 30 ms allowed (32 ms, with no missed graph cycle and no underrun counted) in
            // the full app-level pass, in two fresh-clone CI runs; not in 8 runs of this
            // test alone. Not found yet: recorded as a known issue there, and only there.
            withKnownIssue("a long buffer's restart on PipeWire sometimes leaves a gap just over 30 ms", isIntermittent: true) { whole() }
        } else {
            whole()
        }
        let sound = try #require(regions.first.map { $0.start..<regions.last!.end }, "no sound")
        // Full level before the call, a quarter (−12 dB) from 30 ms after it to the end.
        // (The capture's clock is a few milliseconds off the test's on PipeWire: the window
        // before the call stops well short of it.)
        #expect(audio.sineLevelDBFS(channel: 0, range: (changed - 0.25)..<(changed - 0.08)).isClose(to: -6, within: 0.5))
        let after = (changed + 0.03)..<(sound.upperBound - 0.02)
        try #require(after.upperBound - after.lowerBound > 0.1, "the change came too late to measure: \(regions), at \(changed) s")
        #expect(audio.sineLevelDBFS(channel: 0, range: after).isClose(to: -18, within: 0.5),
                "\(audio.sineLevelDBFS(channel: 0, range: after)) dB after the change at \(changed) s")
    }
}
