import Earshot
import MPRIS
import Foundation
import Testing
import TestSupport

extension QueuePlayerTests {
/// Queue edits at the edges, through the track-list calls MPRIS makes: every index the
/// queue computes stays inside its items, and edits naming items that are gone are
/// refused without changing anything.
///
/// Nested in ``QueuePlayerTests`` so that `scripts/test` runs it in the in-process audio
/// pass: the engine needs the shared test sound server, whose first use exports its
/// address with `setenv`, which must not race the parallel pass's process launches
/// (Foundation's `Process.run` copies the environment).
@Suite("QueuePlayer edits at the edges")
struct Edits {
    func sine(_ frequency: Double, _ duration: Double = 5) throws -> URL {
        URL(fileURLWithPath: try TestSignals.sine(frequency: frequency, duration: duration))
    }

    /// A queue of `count` items connected to a now-playing center, playing.
    func playingQueue(_ count: Int) throws -> (QueuePlayer, NowPlayingInfoCenter, RemoteCommandCenter) {
        let queue = try QueuePlayer(urls: (0..<count).map { try sine(300 + 100 * Double($0)) })
        let nowPlaying = NowPlayingInfoCenter()
        let commands = RemoteCommandCenter()
        queue.connect(to: nowPlaying, commands: commands)
        queue.play()
        return (queue, nowPlaying, commands)
    }

    func id(_ item: QueuePlayer.Item) -> String { "\(item.id)" }

    /// Runs `body` with the engine on the test sound server (in turn with the other audio
    /// tests); nothing is captured: these tests check the queue, not the sound.
    func onDevice(_ body: () async throws -> Void) async throws {
        try await withSharedAudio(idleTimeout: 0) { _ in try await body() }
    }

    @Test("removing the only item while it plays empties the queue: stopped, nothing now playing")
    func removeOnly() async throws {
        try await onDevice {
            let (queue, nowPlaying, _) = try self.playingQueue(1)
            try await sleep(0.1)
            #expect(queue.isPlaying)
            #expect(queue.removeTrack(self.id(queue.items[0])) == .success)
            #expect(queue.items.isEmpty)
            #expect(queue.currentItem == nil && queue.currentIndex == nil)
            #expect(nowPlaying.nowPlayingInfo == nil, "an emptied queue publishes nothing (MPRIS: Stopped, empty Metadata)")
            try await sleep(0.1)
            #expect(!queue.isPlaying)
            // Everything else on an empty queue is a no-op, not a trap.
            #expect(!queue.advanceToNextItem() && !queue.goToPreviousItem())
            queue.shuffleMode = .items
            queue.repeatMode = .all
            #expect(!queue.advanceToNextItem())
            queue.play()
            #expect(queue.currentItem == nil)
        }
    }

    @Test("removing the current last item moves to the new last item; removing an earlier one keeps the current")
    func removeLastAndEarlier() async throws {
        try await onDevice {
            let (queue, nowPlaying, _) = try self.playingQueue(3)
            let items = queue.items
            #expect(queue.goTo(self.id(items[2])) == .success)
            #expect(queue.removeTrack(self.id(items[2])) == .success)
            #expect(queue.currentItem == items[1])
            #expect(nowPlaying.nowPlayingInfo?.queueIndex == 1 && nowPlaying.nowPlayingInfo?.queueCount == 2)
            #expect(queue.removeTrack(self.id(items[0])) == .success)
            #expect(queue.currentItem == items[1] && queue.currentIndex == 0)
            #expect(nowPlaying.nowPlayingInfo?.queueIndex == 0 && nowPlaying.nowPlayingInfo?.queueCount == 1)
            try await sleep(0.1)
            #expect(queue.isPlaying, "removing another item does not stop the current one")
        }
    }

    @Test("ids that are gone are refused and change nothing: remove twice, go to, add after")
    func staleIDs() async throws {
        try await onDevice {
            let (queue, _, _) = try self.playingQueue(2)
            let items = queue.items
            #expect(queue.removeTrack(self.id(items[1])) == .success)
            let before = queue.items
            #expect(queue.removeTrack(self.id(items[1])) == .noSuchContent)
            #expect(queue.goTo(self.id(items[1])) == .noSuchContent)
            #expect(queue.goTo("not a number") == .noSuchContent)
            #expect(queue.goTo("18446744073709551615") == .noSuchContent)
            let file = try self.sine(900, 1).absoluteString
            #expect(queue.addTrack(uri: file, after: self.id(items[1]), setAsCurrent: true) == .noSuchContent)
            #expect(queue.items == before && queue.currentItem == items[0])
            // A NUL in a file URI would cut the path short for the C calls that open it.
            #expect(queue.addTrack(uri: items[0].url.absoluteString + "%00.txt", after: nil, setAsCurrent: false) == .noSuchContent)
            #expect(queue.items == before)
        }
    }

    @Test("shuffling a queue of one, and at its last item, keeps it whole")
    func shuffleEdges() async throws {
        try await onDevice {
            let (queue, _, _) = try self.playingQueue(1)
            let one = queue.items
            queue.shuffleMode = .items
            #expect(queue.items == one && queue.currentItem == one[0])
            let added = try queue.insert(try self.sine(700), after: one[0])
            #expect(queue.goTo(self.id(added)) == .success)
            queue.shuffleMode = .off
            queue.shuffleMode = .items
            #expect(queue.items.map(\.id) == [one[0].id, added.id] && queue.currentItem == added)
        }
    }

    @Test("edits from many threads at once keep every index inside the queue")
    func concurrentEdits() async throws {
        try await onDevice {
            let (queue, nowPlaying, commands) = try self.playingQueue(6)
            let file = try self.sine(800, 1).absoluteString
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        var random = SplitMix64(seed: UInt64(worker))
                        for _ in 0..<60 {
                            let items = queue.items
                            let pick = items.isEmpty ? "1" : "\(items[Int(random.next() % UInt64(items.count))].id)"
                            switch random.next() % 6 {
                            case 0: _ = queue.removeTrack(pick)
                            case 1: _ = queue.goTo(pick)
                            case 2: _ = queue.addTrack(uri: file, after: pick, setAsCurrent: random.next() % 2 == 0)
                            case 3: _ = commands.nextTrackCommand.perform()
                            case 4: _ = commands.previousTrackCommand.perform()
                            default: queue.shuffleMode = random.next() % 2 == 0 ? .items : .off
                            }
                            _ = queue.currentItem  // indexes the items with the current index
                        }
                    }
                }
            }
            let items = queue.items
            if let index = queue.currentIndex {
                #expect(items.indices.contains(index))
                #expect(nowPlaying.nowPlayingInfo?.queueCount == items.count)
            } else {
                #expect(nowPlaying.nowPlayingInfo == nil)
            }
            for item in items { _ = queue.removeTrack(self.id(item)) }
            #expect(queue.items.isEmpty && queue.currentItem == nil && nowPlaying.nowPlayingInfo == nil)
        }
    }
}
}
