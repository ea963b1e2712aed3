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

    /// An arbiter on a test clock and a fake player, both on a private bus. The arbiter does
    /// not take its name: its own process (this one, the player's too) would then queue for
    /// the name, and a player of an Earshot process is not another app's.
    struct Fixture {
        let clock = ManualArbiterClock()
        /// Its dbus-daemon, which ends with it.
        let bus: PrivateBus
        let host: DBusConnection
        let arbiter: Arbiter
        let player: FakePlayer
        var owner: String { player.connection.uniqueName }

        init() async throws {
            bus = try PrivateBus()
            host = try DBusConnection(.address(bus.address))
            var configuration = Arbiter.Configuration()
            configuration.soundServer = .none
            arbiter = try Arbiter(connection: host, configuration: configuration, clock: clock)
            player = try await FakePlayer(bus)
        }

        /// A round trip from the player's connection through the arbiter: the bus delivers a
        /// connection's messages in order, so the arbiter has handled its signals.
        func roundTrip() async throws {
            _ = try await player.connection.call(destination: host.uniqueName, path: ArbiterName.path, interface: StandardInterface.properties,
                                                 method: "Get", [.string(ArbiterName.interface), .string("Target")])
        }

        /// The player's status as the policy knows it.
        func status() -> ForeignPlaybackStatus? { arbiter.policy.foreignPlayers[owner]?.status }
    }

    @Test("the first change reaches the policy at once; the last of a burst when the window ends, not a nanosecond before")
    func statusChangesAreThrottled() async throws {
        let f = try await Fixture()
        defer { f.arbiter.stop() }
        try await eventually("the player known as another app's, paused") { f.status() == .paused }

        try f.player.set("Playing")
        try await f.roundTrip()
        #expect(f.status() == .playing, "the first change at once")

        for value in ["Paused", "Playing", "Stopped"] { try f.player.set(value) }
        try await f.roundTrip()
        #expect(f.status() == .playing, "the rest of the burst waits for the window")
        await f.clock.advance(by: Arbiter.statusThrottle - .nanoseconds(1))
        try await f.roundTrip()
        #expect(f.status() == .playing, "a nanosecond before the window ends")
        await f.clock.advance(by: .nanoseconds(1))
        #expect(f.status() == .stopped, "the last of the burst, once")
    }

    @Test("a burst that ends where it began (Paused, Playing) reaches the policy at the window's end as both changes, in order")
    func burstBackToStartIsNotLost() async throws {
        let f = try await Fixture()
        defer { f.arbiter.stop() }
        let seen = Locked<[ForeignPlaybackStatus]>([])
        f.arbiter.eventObserver.withLock {
            $0 = { event in
                if case .foreignPlayer(let id, _, let status, _, _) = event, id == f.owner { seen.withLock { $0.append(status) } }
            }
        }
        defer { f.arbiter.eventObserver.withLock { $0 = nil } }
        try await eventually("the player known as another app's, paused") { f.status() == .paused }
        seen.withLock { $0 = [] }

        try f.player.set("Playing")
        try await f.roundTrip()
        #expect(seen.value == [.playing], "the first change at once")
        // The arbiter's pause, seen, then the user's play, inside the window.
        try f.player.set("Paused")
        try f.player.set("Playing")
        try await f.roundTrip()
        #expect(seen.value == [.playing], "the rest of the burst waits for the window")
        await f.clock.advance(by: Arbiter.statusThrottle)
        try await f.roundTrip()
        #expect(seen.value == [.playing, .paused, .playing], "the pause in between, then the play")
    }
}
