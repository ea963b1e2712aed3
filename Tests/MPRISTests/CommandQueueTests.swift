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
        // The property read under test, made by `dbus-send` from a thread of its own as soon
        // as the first handler runs: a read made by the test's task started only when 19 of
        // 20 handlers had run in a loaded CI parallel pass (the two cooperative threads were
        // busy with other tests), leaving nothing to measure.
        let read = Locked<(doneBefore: Int, doneAfter: Int, seconds: Double, result: String)?>(nil)
        let (address, destination) = (fixture.bus.address, fixture.player.busName)
        let firstHandler = Locked(true)
        fixture.commands.nextTrackCommand.addTarget { _ in
            if firstHandler.withLock({ first in defer { first = false }; return first }) {
                Thread.detachNewThread {
                    let before = count.value
                    let clock = ContinuousClock(), start = clock.now
                    let result = Result {
                        try runSync("dbus-send", ["--bus=\(address)", "--print-reply", "--dest=\(destination)", MPRISPlayer.objectPath.rawValue,
                                                  "org.freedesktop.DBus.Properties.GetAll", "string:\(MPRISPlayer.playerInterface)"])
                    }
                    let seconds = (clock.now - start) / .seconds(1)
                    let outcome: String
                    switch result {
                    case .success(let answer): outcome = answer.status == 0 && answer.stdout.contains("CanGoNext") ? "ok" : "status \(answer.status): \(answer.stderr)"
                    case .failure(let error): outcome = "\(error)"
                    }
                    read.withLock { $0 = (before, count.value, seconds, outcome) }
                }
            }
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

        let burst = 20
        let answered = Locked<[Int]>([])
        let started = ContinuousClock.now
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
        let total = ContinuousClock.now - started
        try await eventually("the property read to be answered", timeout: 10) { read.value != nil }

        // Had the read waited behind the queued calls, every handler still queued would have
        // run meanwhile (100 ms each, 1.9 s in all); answered beside them, only those that
        // fit in the read's own time (dbus-send's start-up included) do: fewer than half.
        let measured = try #require(read.value, "the property read did not finish within 10 s")
        #expect(measured.result == "ok", "GetAll: \(measured.result)")
        print("command queue: GetAll answered in \(measured.seconds) s, started when \(measured.doneBefore) of \(burst) handlers had run, \(measured.doneAfter - measured.doneBefore) ran meanwhile")
        let left = burst - measured.doneBefore
        #expect(left >= burst - 1, "the read started when \(measured.doneBefore) handlers had run")
        #expect(measured.doneAfter - measured.doneBefore < left / 2,
                "GetAll (\(measured.seconds) s) was answered only after \(measured.doneAfter - measured.doneBefore) of the \(left) queued handlers had run")
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
