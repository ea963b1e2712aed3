@testable import Arbiter
import ArbiterTestSupport
import AudioEngine
import DBus
@testable import Earshot
import Foundation
import SessionPolicy
import Testing
import TestSupport

/// Issue 9, "one path for session events": what an `AudioSession` tells the arbiter
/// (sound, activation) reaches it in the order it happened in the process, whatever
/// threads it happened on. Against a real arbiter on a private bus, observed in process.
@Suite("AudioSession's one path to the arbiter", .serialized)
struct SessionEventOrderTests {
    /// What the arbiter applies for `id`, in its order: "sound", "silence", "activate".
    static func follow(_ arbiter: Arbiter, _ id: SessionID) -> Locked<[String]> {
        let seen = Locked<[String]>([])
        arbiter.eventObserver.withLock {
            $0 = { event in
                switch event {
                case let .soundStarted(who, _) where who == id: seen.withLock { $0.append("sound") }
                case let .soundStopped(who, _) where who == id: seen.withLock { $0.append("silence") }
                case let .activate(who) where who == id: seen.withLock { $0.append("activate") }
                default: break
                }
            }
        }
        return seen
    }

    /// Runs `body` on a thread of its own (as the engine's sound events come from its thread).
    static func onAnotherThread(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                body()
                continuation.resume()
            }.start()
        }
    }

    @Test("a sound that starts and stops on the engine's thread, then an activation from another, many times: the arbiter sees each in order and ends where the process is")
    func soundAndActivationKeepTheirOrder() async throws {
        let f = try await ArbiterFixture()
        let session = SessionModelTests.silentSession(f, "order")
        let id = SessionID(try await session.connection().uniqueName)
        try await session.setCategory(.playback)
        let seen = Self.follow(f.arbiter, id)
        defer { f.arbiter.eventObserver.withLock { $0 = nil } }

        var expected: [String] = []
        for _ in 0..<150 {
            await Self.onAnotherThread {
                session.soundChanged(true)
                session.soundChanged(false)
            }
            // The reports are on their way; the activation, made after them, comes after them.
            try await session.setActive(true)
            expected += ["sound", "silence", "activate"]
        }
        await Self.onAnotherThread { session.soundChanged(true) }
        expected.append("sound")
        // Settles the path: a step after the last report.
        try await session.setCategory(.playback)

        let arrived = seen.value
        #expect(arrived.count == expected.count, "every change reaches the arbiter, none replaced by a later one")
        let first = zip(arrived, expected).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(first == nil, "the arbiter's order departs from the process's at event \(first?.offset ?? -1): \(arrived.suffix(12))")
        let view = try #require(f.arbiter.policy[id])
        #expect(view.isProducingSound == session.state.withLock { $0.client.producingSound } && view.isProducingSound,
                "the arbiter ends with the process's sound: \(view)")
        #expect(view.isActive && session.isActive)
    }

    @Test("an activation enqueued behind sound reports from several threads does not overtake them, and the last report wins")
    func reportsFromManyThreadsEndWithTheLast() async throws {
        let f = try await ArbiterFixture()
        let session = SessionModelTests.silentSession(f, "threads")
        let id = SessionID(try await session.connection().uniqueName)
        try await session.setCategory(.playback)
        try await session.setActive(true)
        let seen = Self.follow(f.arbiter, id)
        defer { f.arbiter.eventObserver.withLock { $0 = nil } }

        // Threads that flip the sound at once: the process's order is the order in which
        // they changed its state; the arbiter must hear every flip, and end on the last.
        for round in 0..<40 {
            await withTaskGroup(of: Void.self) { group in
                for thread in 0..<4 {
                    group.addTask { await Self.onAnotherThread { session.soundChanged((round + thread) % 2 == 0) } }
                }
            }
            try await session.setActive(true)
        }
        try await session.setCategory(.playback)
        let arrived = seen.value
        #expect(arrived.filter { $0 == "activate" }.count == 40)
        #expect(arrived.filter { $0 != "activate" }.count == 160, "every flip reaches the arbiter")
        let view = try #require(f.arbiter.policy[id])
        #expect(view.isProducingSound == session.state.withLock { $0.client.producingSound }, "the last report wins: \(view)")
    }
}
