@testable import Earshot
import Foundation
import Testing
import TestSupport

/// `actionAtItemEnd` and the playback-state event (`timeControlStatus`), heard for real.
/// Part of the `QueuePlayerTests` suite, so that `scripts/test` runs it in the real-time
/// audio pass.
extension QueuePlayerTests {
    private func statuses(_ queue: QueuePlayer) -> (Locked<[QueuePlayer.TimeControlStatus]>, Locked<[QueuePlayer.Event]>, Task<Void, Never>) {
        let statuses = Locked<[QueuePlayer.TimeControlStatus]>([])
        let events = Locked<[QueuePlayer.Event]>([])
        let task = Task {
            for await event in queue.events {
                events.withLock { $0.append(event) }
                if case .timeControlStatusChanged(let status) = event { statuses.withLock { $0.append(status) } }
            }
        }
        return (statuses, events, task)
    }

    @Test("timeControlStatus: playing, waiting to minimise stalls while the decoder is starved, playing when refilled, paused")
    func timeControlStatusFollowsTheStallHook() async throws {
        let queue = try QueuePlayer(urls: [sine(700, 4)])
        let (seen, _, listener) = statuses(queue)
        defer { listener.cancel() }
        #expect(queue.timeControlStatus == .paused)
        _ = try await captured {
            queue.play()
            #expect(queue.timeControlStatus == .playing)
            let supply = try #require(queue.currentSupply, "a file's decoder has a supply")
            supply.starved()
            try await eventually("waiting for data", timeout: 3) { queue.timeControlStatus == .waitingToPlayAtSpecifiedRate(.toMinimizeStalls) }
            #expect(queue.reasonForWaitingToPlay == .toMinimizeStalls)
            supply.refilled()
            try await eventually("playing again", timeout: 3) { queue.timeControlStatus == .playing }
            queue.pause()
            #expect(queue.timeControlStatus == .paused)
        }
        try await eventually("the four changes as events", timeout: 2) { seen.value.count >= 4 }
        #expect(seen.value == [.playing, .waitingToPlayAtSpecifiedRate(.toMinimizeStalls), .playing, .paused], "\(seen.value)")
    }

    @Test("a stream whose server stalls: the queue waits to minimise stalls, then plays on when data comes")
    func aStalledStreamIsWaiting() async throws {
        // 4 s of MP3; the server sends half of it at once, then nothing for 3 s, then the rest.
        let directory = NSTemporaryDirectory() + "earshot-queue-stall-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let file = directory + "/tone.mp3"
        let made = try await run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=4",
                                            "-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k", file], timeout: 60)
        guard made.status == 0 else { throw TestFailure("ffmpeg: \(made.stderr)") }
        let size = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? 0
        let server = try await HTTPTestServer(.stall(file: file, atByte: size / 2, seconds: 3))
        let queue = try QueuePlayer(urls: [try #require(URL(string: server.url()))])
        let (seen, _, listener) = statuses(queue)
        defer { listener.cancel() }
        _ = try await captured {
            queue.play()
            try await eventually("waiting for the stalled server", timeout: 8) { queue.timeControlStatus == .waitingToPlayAtSpecifiedRate(.toMinimizeStalls) }
            try await eventually("playing once the rest arrives", timeout: 8) { queue.timeControlStatus == .playing }
            queue.pause()
        }
        let statuses = seen.value
        #expect(statuses.firstIndex(of: .waitingToPlayAtSpecifiedRate(.toMinimizeStalls)).map { statuses[$0...].contains(.playing) } == true,
                "waiting, then playing: \(statuses)")
    }

    @Test("actionAtItemEnd = .pause: the queue stays on the item that ended, paused; the next is not heard")
    func actionAtItemEndPause() async throws {
        let queue = try QueuePlayer(urls: [sine(500, 0.4), sine(1000, 0.4)])
        queue.actionAtItemEnd = .pause
        let first = queue.currentItem
        let (seen, events, listener) = statuses(queue)
        defer { listener.cancel() }
        let audio = try await captured {
            queue.play()
            try await eventually("the first item's end", timeout: 5) {
                events.value.contains { if case .itemDidPlayToEnd = $0 { true } else { false } }
            }
            try await sleep(0.6)
        }
        #expect(queue.currentItem == first, "no advance")
        #expect(queue.timeControlStatus == .paused)
        #expect(seen.value.last == .paused, "\(seen.value)")
        let regions = audio.activeRegions()
        let heard = (regions.last?.end ?? 0) - (regions.first?.start ?? 0)
        #expect(heard > 0.3 && heard < 0.4 + 0.4 / 2, "only the first item (0.4 s; both would be 0.8 s) is heard: \(regions)")
    }

    @Test("actionAtItemEnd = .none: the item that ended stays current and the queue still means to play")
    func actionAtItemEndNone() async throws {
        let queue = try QueuePlayer(urls: [sine(500, 0.4), sine(1000, 0.4)])
        queue.actionAtItemEnd = .none
        let center = NowPlayingInfoCenter()
        queue.connect(to: center, commands: RemoteCommandCenter())
        let first = queue.currentItem
        let (_, events, listener) = statuses(queue)
        defer { listener.cancel() }
        let audio = try await captured {
            queue.play()
            try await eventually("the first item's end", timeout: 5) {
                events.value.contains { if case .itemDidPlayToEnd = $0 { true } else { false } }
            }
            try await sleep(0.6)
        }
        #expect(queue.currentItem == first, "no advance")
        #expect(queue.timeControlStatus == .playing, "as AVPlayer keeps its rate at the end with .none")
        let shown = center.currentElapsedTime
        #expect(shown.isClose(to: 0.4, within: 0.01), "now playing shows the item's end: \(shown) s")
        try await sleep(0.3)
        #expect(center.currentElapsedTime == shown, "standing still")
        let regions = audio.activeRegions()
        let heard = (regions.last?.end ?? 0) - (regions.first?.start ?? 0)
        #expect(heard > 0.3 && heard < 0.4 + 0.4 / 2, "only the first item (0.4 s; both would be 0.8 s) is heard: \(regions)")
        queue.pause()
    }
}
