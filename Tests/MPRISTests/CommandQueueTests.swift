import DBus
import Foundation
import MPRIS
import Testing
import TestSupport

/// Calls that carry out remote commands run off the bus thread, one at a time in arrival
/// order, and are answered when the command is done (MPRISPlayer+CommandQueue).
@Suite("MPRIS: commands off the bus thread")
struct CommandQueueTests {
    @Test("a slow handler does not hold up property reads; a burst of Next runs in order, each answered after its effect")
    func slowHandlerLeavesTheBusFree() async throws {
        let fixture = try await PlayerFixture()
        let count = Locked(0)
        let busy = Locked(false)
        let overlapped = Locked(false)
        fixture.commands.nextTrackCommand.addTarget { _ in
            if busy.withLock({ b in defer { b = true }; return b }) { overlapped.withLock { $0 = true } }
            Thread.sleep(forTimeInterval: 0.1)  // a handler that opens a file, say
            count.withLock { $0 += 1 }
            busy.withLock { $0 = false }
            return .success
        }
        var info = NowPlayingInfo(title: "one", duration: 10)
        info.queueIndex = 0
        info.queueCount = 100
        fixture.nowPlaying.nowPlayingInfo = info
        try await eventually("CanGoNext") { (try await fixture.all())["CanGoNext"]?.bool == true }

        // 20 × 100 ms: long enough that the read below starts while handlers are still
        // queued even when the test's own task runs late on a loaded machine (with 10, the
        // parallel pass in CI started the read after the last handler had run).
        let burst = 20
        let answered = Locked<[Int]>([])
        let started = ContinuousClock.now
        let replies = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<burst {
                    group.addTask {
                        try await fixture.call("Next")
                        // Each reply comes after its effect: the count it sees has its own Next in it.
                        answered.withLock { $0.append(count.value) }
                    }
                }
                try await group.waitForAll()
            }
        }
        // While the burst (10 × 100 ms) runs, properties are answered without waiting for
        // it: on the bus thread, the read would wait for the Next calls queued before it.
        try await eventually("the first handler to run") { busy.value || count.value > 0 }
        let doneBeforeRead = count.value
        let readStart = ContinuousClock.now
        _ = try await fixture.all()
        let read = ContinuousClock.now - readStart
        let doneAtRead = count.value
        try await replies.value
        let total = ContinuousClock.now - started

        // Had the read waited behind the queued calls, every handler still queued would have
        // run meanwhile (100 ms each); answered beside them, only those that fit in the read's
        // own time on a loaded machine do (2 in a 0.22 s read in CI's parallel pass): fewer
        // than half of those left.
        let left = burst - doneBeforeRead
        #expect(left > 4, "the read started only when \(doneBeforeRead) of \(burst) handlers had run: nothing left to measure")
        #expect(doneAtRead - doneBeforeRead < left / 2,
                "GetAll (\(read)) was answered only after \(doneAtRead - doneBeforeRead) of the \(left) queued handlers had run")
        let (ran, overlap) = (count.value, overlapped.value)
        #expect(ran == burst)
        #expect(!overlap, "two handlers ran at once")
        #expect(total >= .milliseconds(100 * burst), "the calls were answered before their handlers ran: \(total)")
        // Each reply comes after its effect: the k-th reply to arrive has seen k effects at least.
        let seen = answered.value
        #expect(seen.count == burst && zip(seen, 1...).allSatisfy { $0 >= $1 }, "the counts seen at each reply: \(seen)")
    }

    @Test("a failing command on the queue answers with its named error")
    func failureIsReplied() async throws {
        let fixture = try await PlayerFixture()
        fixture.commands.playCommand.addTarget { _ in .noActionableNowPlayingItem }
        fixture.nowPlaying.nowPlayingInfo = NowPlayingInfo(title: "one", duration: 10)
        try await eventually("CanPlay") { (try await fixture.all())["CanPlay"]?.bool == true }
        do {
            try await fixture.call("Play")
            Issue.record("Play succeeded")
        } catch {
            #expect(error.name == "org.earshot.RemoteCommand.NoActionableNowPlayingItem")
        }
    }
}
