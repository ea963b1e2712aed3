@testable import Arbiter
import DBus
import SessionPolicy
import Testing
import TestSupport

/// Another app's player that flips its `PlaybackStatus`: one change reaches the policy at
/// once, the last of a burst at the end of the throttle window and not before, on a test
/// clock (the end-to-end case, on the real clock, is SessionHostilePlayerTests).
@Suite("Arbiter: other apps' status changes are throttled (a test clock)")
struct ArbiterThrottleTests {
    /// A player on a connection of its own, whose status the test sets and signals.
    final class FakePlayer: Sendable {
        let connection: DBusConnection
        let status = Locked("Paused")
        let object: DBusExportedObject

        init(_ bus: PrivateBus) async throws {
            connection = try DBusConnection(.address(bus.address))
            let status = self.status
            object = try connection.export([DBusInterface("org.mpris.MediaPlayer2.Player", properties: [
                DBusProperty("PlaybackStatus", .string) { .string(status.value) },
                DBusProperty("CanPause", .boolean) { .boolean(true) },
            ])], at: "/org/mpris/MediaPlayer2")
            _ = try await connection.requestName("org.mpris.MediaPlayer2.fake")
        }

        /// Sets the status and signals it.
        func set(_ value: String) throws {
            status.withLock { $0 = value }
            try object.emitPropertiesChanged(interface: "org.mpris.MediaPlayer2.Player", changed: ["PlaybackStatus": .string(value)])
        }
    }

    @Test("the first change reaches the policy at once; the last of a burst when the window ends, not a nanosecond before")
    func statusChangesAreThrottled() async throws {
        let clock = ManualArbiterClock()
        // An arbiter that does not take its name: its own process (this one, the player's
        // too) would then queue for the name, and a player of an Earshot process is not
        // another app's.
        let bus = try PrivateBus()
        let host = try DBusConnection(.address(bus.address))
        var configuration = Arbiter.Configuration()
        configuration.soundServer = .none
        let arbiter = try Arbiter(connection: host, configuration: configuration, clock: clock)
        defer { arbiter.stop() }
        let player = try await FakePlayer(bus)
        let owner = player.connection.uniqueName
        @Sendable func status() -> ForeignPlaybackStatus? { arbiter.policy.foreignPlayers[owner]?.status }
        /// A round trip from the player's connection through the arbiter: the bus delivers a
        /// connection's messages in order, so the arbiter has handled its signals.
        func roundTrip() async throws {
            _ = try await player.connection.call(destination: host.uniqueName, path: ArbiterName.path, interface: StandardInterface.properties,
                                                 method: "Get", [.string(ArbiterName.interface), .string("Target")])
        }
        try await eventually("the player known as another app's, paused") { status() == .paused }

        try player.set("Playing")
        try await roundTrip()
        #expect(status() == .playing, "the first change at once")

        for value in ["Paused", "Playing", "Stopped"] { try player.set(value) }
        try await roundTrip()
        #expect(status() == .playing, "the rest of the burst waits for the window")
        await clock.advance(by: Arbiter.statusThrottle - .nanoseconds(1))
        try await roundTrip()
        #expect(status() == .playing, "a nanosecond before the window ends")
        await clock.advance(by: .nanoseconds(1))
        #expect(status() == .stopped, "the last of the burst, once")
    }

    @Test("a burst that ends where it began (Paused, Playing) reaches the policy at the window's end as both changes, in order")
    func burstBackToStartIsNotLost() async throws {
        let clock = ManualArbiterClock()
        let bus = try PrivateBus()
        let host = try DBusConnection(.address(bus.address))
        var configuration = Arbiter.Configuration()
        configuration.soundServer = .none
        let arbiter = try Arbiter(connection: host, configuration: configuration, clock: clock)
        defer { arbiter.stop() }
        let player = try await FakePlayer(bus)
        let owner = player.connection.uniqueName
        let seen = Locked<[ForeignPlaybackStatus]>([])
        arbiter.eventObserver.withLock {
            $0 = { event in
                if case .foreignPlayer(let id, _, let status, _, _) = event, id == owner { seen.withLock { $0.append(status) } }
            }
        }
        defer { arbiter.eventObserver.withLock { $0 = nil } }
        func roundTrip() async throws {
            _ = try await player.connection.call(destination: host.uniqueName, path: ArbiterName.path, interface: StandardInterface.properties,
                                                 method: "Get", [.string(ArbiterName.interface), .string("Target")])
        }
        try await eventually("the player known as another app's, paused") { arbiter.policy.foreignPlayers[owner]?.status == .paused }
        seen.withLock { $0 = [] }

        try player.set("Playing")
        try await roundTrip()
        #expect(seen.value == [.playing], "the first change at once")
        // The arbiter's pause, seen, then the user's play, inside the window.
        try player.set("Paused")
        try player.set("Playing")
        try await roundTrip()
        #expect(seen.value == [.playing], "the rest of the burst waits for the window")
        await clock.advance(by: Arbiter.statusThrottle)
        try await roundTrip()
        #expect(seen.value == [.playing, .paused, .playing], "the pause in between, then the play")
    }
}
