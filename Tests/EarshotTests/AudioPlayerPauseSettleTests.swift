import Earshot
import AudioEngine
import MPRIS
import Foundation
import Testing
import TestSupport

/// A pause publishes where the engine expects the sound to stop: the device clock read at
/// the call, plus what the output will still play. With a long server buffer that estimate
/// was 5–11 ms past what the sink played (the clock's interpolation between the server's
/// rare timing updates), and MPRIS kept it. The engine then finds the exact frame (the
/// server's read index after the flush) and puts the voice there; the player publishes
/// that. Part of the `AudioPlayerTests` suite, so that `scripts/test` runs it in the
/// real-time audio pass.
extension AudioPlayerTests {
    @Test("after a pause on a long buffer, the now-playing elapsed time settles at currentTime, what the sink played", arguments: [false, true])
    func pausePublishesSettledPosition(queued: Bool) async throws {
        let engine = longBufferEngine()
        let url = URL(fileURLWithPath: try TestSignals.sine(frequency: 700, duration: 4))
        let center = NowPlayingInfoCenter()
        // Both owners: a player connected by itself, and a queue (what `earshot play` is).
        let player = try AudioPlayer(contentsOf: url, engine: engine)
        let queue = try QueuePlayer(urls: [url], names: nil, engine: engine)
        if queued {
            queue.connect(to: center, commands: RemoteCommandCenter())
        } else {
            player.connect(to: center, commands: RemoteCommandCenter())
            #expect(player.prepareToPlay())
        }
        let currentTime = { queued ? queue.currentTime : player.currentTime }
        let audio = try await captured {
            if queued { queue.play() } else { #expect(player.play()) }
            try await sleep(1.2)  // past the first requests: the long buffer is full
            if queued { queue.pause() } else { player.pause() }
            try await sleep(0.4)
        }
        let published = try #require(center.nowPlayingInfo?.elapsedTime)
        let heard = audio.activeRegions().totalDuration
        let position = currentTime()
        print(String(format: "pause on a long buffer (%@): published %.4f s, currentTime %.4f s, the sink played %.4f s",
                     queued ? "queue" : "player", published, position, heard))
        #expect(abs(published - position) < 0.0001, "published \(published) s, currentTime \(position) s")
        // The capture starts before the play, so the whole sound is in it. pipewire-pulse
        // reports timing in whole graph cycles (256 frames, 5.33 ms at 48 kHz; see
        // GraphCycleClock), so there the position may be a cycle off, still within the
        // issue's 10 ms.
        let bound = TestSoundServerKind.selected == .pipeWire ? 0.003 + 256.0 / 48000 : 0.003
        #expect(abs(position - heard) < bound, "currentTime \(position) s, the sink played \(heard) s")
    }
}

extension AudioPlayerTests {
    /// A long buffer's stream starts with a burst of the whole buffer (a second). Before the
    /// stream waited for the voice's reader, an unprepared player's first burst was silence
    /// and its sound came a buffer late (`earshot play` of a FLAC file: 1.09 s from the command
    /// to the first frame, `bench/audio`; here 0.998 and 0.999 s). The wait for the reader is
    /// bounded (`longBufferPrimeWait`, 0.5 s): a debug build under load took 0.19–0.40 s to
    /// decode and resample the buffer and a half it primes, a release build 10–30 ms.
    @Test("on a long buffer, an unprepared player of a 44.1 kHz file does not sit out the first burst: heard within 0.6 s of play() (was a second), and whole")
    func longBufferStartsAtOnce() async throws {
        let engine = longBufferEngine()
        let url = URL(fileURLWithPath: try TestSignals.sine(frequency: 700, duration: 1.5, sampleRate: 44100))
        let player = try AudioPlayer(contentsOf: url, engine: engine)
        let called = Locked<ContinuousClock.Instant?>(nil)
        let audio = try await captured {
            try await sleep(0.3)  // the capture runs
            called.withLock { $0 = .now }
            #expect(player.play())
            try await sleep(2.3)
        }
        let regions = audio.activeRegions()
        let first = try #require(regions.first, "nothing was heard")
        let call = try #require(called.value.flatMap { audio.time(of: $0) }, "the capture has no origin")
        let latency = first.start - call
        print(String(format: "long buffer, unprepared play() to the first frame heard: %.1f ms; heard %.3f s", latency * 1000, regions.totalDuration))
        #expect(latency < 0.6, "heard \(latency) s after play()")
        #expect(regions.count == 1 && abs(regions.totalDuration - 1.5) < 0.02, "\(regions)")
    }
}
