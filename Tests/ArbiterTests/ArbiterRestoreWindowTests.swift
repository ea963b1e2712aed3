@testable import Arbiter
import ArbiterTestSupport
import DBus
import SessionPolicy
import Testing
import TestSupport

/// After a host change every session registers again, an interrupted one saying by whom:
/// the interruption carries on if the interrupter registers again within the restore window,
/// and ends (resuming the victim that was playing) when the window passes without it. On a
/// test clock, so that the window is exact and nothing sleeps.
@Suite("Arbiter: the restore window after a host change (a test clock)")
struct ArbiterRestoreWindowTests {
    static func registerInterrupted(_ victim: Client, by interrupter: Client) async throws {
        try await registerInterrupted(victim, by: interrupter.id)
    }

    static func registerInterrupted(_ victim: Client, by interrupter: String) async throws {
        try await victim.call("Register", [.string("music"), .vardict([
            "category": .string("playback"), "interruptedBy": .string(interrupter), "wasPlaying": .boolean(true),
        ])])
    }

    /// A host process's two connections (its session's, and the arbiter's it served on) leave
    /// the bus one after the other: the name can move, and the victim register with the new
    /// arbiter, while the interrupter's session connection is still there. If it is gone
    /// before the new arbiter follows it, nothing would tell of its departure. CI saw the
    /// victim resume only at the window's end, 2 s after the host was killed.
    @Test("an interrupter already gone from the bus: its victim is told to resume at once, not when the window ends")
    func interrupterAlreadyGone() async throws {
        let clock = ManualArbiterClock()  // never advanced: the window does not end
        let f = try await ArbiterFixture(clock: clock)
        let victim = try await Client(f.bus)
        let interrupter = try await Client(f.bus)
        let gone = interrupter.id
        interrupter.connection.close()
        try await eventually("the bus to drop the interrupter") { try await f.host.nameOwner(gone) == nil }
        try await Self.registerInterrupted(victim, by: gone)
        try await eventually("the victim to be told to resume") { victim.received("InterruptionEnded") == [[.boolean(true)]] }
    }

    @Test("an interrupter that does not register again: its victim is told to resume when the window ends, not a nanosecond before")
    func windowEndsWithoutTheInterrupter() async throws {
        let clock = ManualArbiterClock()
        let f = try await ArbiterFixture(clock: clock)
        let victim = try await Client(f.bus)
        let interrupter = try await Client(f.bus)  // on the bus, not registered (yet)
        try await Self.registerInterrupted(victim, by: interrupter)
        await clock.advance(by: Arbiter.restoreWindow - .nanoseconds(1))
        // A round trip through the arbiter: what it sent the victim before has arrived.
        try await victim.call("SetRemoteCommandsEnabled", [.boolean(false)])
        #expect(victim.received("InterruptionEnded").isEmpty, "a nanosecond before the window ends")
        await clock.advance(by: .nanoseconds(1))
        try await victim.call("SetRemoteCommandsEnabled", [.boolean(false)])
        #expect(victim.received("InterruptionEnded") == [[.boolean(true)]], "it was playing, so it resumes")
    }

    @Test("an interrupter that registers again within the window, still interrupting: the interruption carries on past the window")
    func interrupterBackWithinTheWindow() async throws {
        let clock = ManualArbiterClock()
        let f = try await ArbiterFixture(clock: clock)
        let victim = try await Client(f.bus)
        let interrupter = try await Client(f.bus)
        try await Self.registerInterrupted(victim, by: interrupter)
        await clock.advance(by: Arbiter.restoreWindow - .nanoseconds(1))
        try await interrupter.register("game", active: true, producing: true)
        #expect(f.arbiter.policy[SessionID(victim.id)]?.interruptions == [.sessionActivated(SessionID(interrupter.id))])
        await clock.advance(by: Arbiter.restoreWindow * 2)
        try await victim.call("SetRemoteCommandsEnabled", [.boolean(false)])
        #expect(victim.received("InterruptionEnded").isEmpty, "the interruption carries on")
        #expect(victim.received("InterruptionBegan").isEmpty, "the victim knew already")
    }
}
