import DBus
import MPRIS
import Testing
import TestSupport

/// The app's MPRIS entry (docs/mpris-presence.md) with two players of one app in this
/// process, each on a connection of its own as two processes would be: the entry stays
/// with the first, and relays to whichever claimed the app's last-sound-wins name last.
@Suite("the app's MPRIS entry: one name that stays, a target that moves")
struct MPRISPresenceTests {
    final class Side: Sendable {
        let connection: DBusConnection
        let nowPlaying = NowPlayingInfoCenter()
        let player: MPRISPlayer

        init(_ bus: PrivateBus, title: String, app: String = "pair") throws {
            connection = try DBusConnection(.address(bus.address))
            nowPlaying.nowPlayingInfo = NowPlayingInfo(title: title, duration: 60, playbackState: .paused)
            player = try MPRISPlayer(connection: connection, configuration: MPRISConfiguration(appName: app, identity: "Pair"),
                                     commandCenter: RemoteCommandCenter(), nowPlayingInfoCenter: nowPlaying)
        }
    }

    static func title(_ client: DBusConnection, _ name: String) async throws -> String? {
        let reply = try await client.call(destination: name, path: MPRISPlayer.objectPath, interface: StandardInterface.properties,
                                          method: "Get", [.string(MPRISPlayer.playerInterface), .string("Metadata")])
        return reply.first?.unwrapped.stringKeyedDictionary?["xesam:title"]?.unwrapped.string
    }

    @Test("names: the entry is org.mpris.MediaPlayer2.<app>, the stack org.earshot.MPRISTarget.<app>; an instance name has neither")
    func names() throws {
        var configuration = MPRISConfiguration(appName: "my-app_2", identity: "X")
        #expect(configuration.busName == "org.mpris.MediaPlayer2.my-app_2")
        #expect(configuration.targetBusName == "org.earshot.MPRISTarget.my-app_2")
        try BusName.validate(configuration.targetBusName)
        configuration.instanceID = "7"
        #expect(configuration.busName == "org.mpris.MediaPlayer2.my-app_2.instance7")
    }

    @Test("the second player's claim moves the target, not the entry; calls, properties and signals follow the target")
    func claimMovesTargetOnly() async throws {
        let bus = try PrivateBus()
        let client = try DBusConnection(.address(bus.address))
        let one = try Side(bus, title: "One")
        let two = try Side(bus, title: "Two")
        #expect(try await one.player.publish() == .primaryOwner)
        #expect(try await two.player.publish() == .inQueue)
        let entryName = one.player.busName
        try await eventually("the first player to hold the entry") { one.player.holdsAppEntry }
        let entry = try #require(try await client.nameOwner(entryName))
        #expect(!two.player.holdsAppEntry)
        #expect(try await Self.title(client, entryName) == "One")

        let titles = Locked<[String]>([])
        _ = try await client.subscribe(MatchRule(sender: entry, interface: StandardInterface.properties, member: "PropertiesChanged",
                                                 path: MPRISPlayer.objectPath)) { message in
            guard let changed = (try? message.arguments())?.dropFirst().first?.stringKeyedDictionary,
                  let title = changed["Metadata"]?.unwrapped.stringKeyedDictionary?["xesam:title"]?.unwrapped.string else { return }
            titles.withLock { $0.append(title) }
        }
        #expect(try await two.player.claimName() == .primaryOwner)
        try await eventually("the entry to answer with the second player") { try await Self.title(client, entryName) == "Two" }
        try await eventually("the entry to say the target's title changed") { titles.value == ["Two"] }
        #expect(try await client.nameOwner(entryName) == entry, "the entry did not move")

        // The target's own changes are relayed; the other player's are not.
        one.nowPlaying.update { $0?.title = "One, changed" }
        two.nowPlaying.update { $0?.title = "Two, changed" }
        try await eventually("the target's change relayed") { titles.value.last == "Two, changed" }
        #expect(!titles.value.contains("One, changed"))

        // The target leaves: the stack returns to the first player, the entry stays.
        // (A call in the instant between the leaving player's unexport and its release of the
        // stack gets UnknownObject, as a call to a process that exits would.)
        two.player.unpublish()
        try await eventually("the entry to answer with the first player again") { (try? await Self.title(client, entryName)) == "One, changed" }
        #expect(try await client.nameOwner(entryName) == entry)
        one.player.unpublish()
        try await eventually("the entry to go with the last player") { try await client.nameOwner(entryName) == nil }
    }

    @Test("the holder leaving passes the entry to the next player, which relays to the target")
    func holderLeaves() async throws {
        let bus = try PrivateBus()
        let client = try DBusConnection(.address(bus.address))
        let one = try Side(bus, title: "One", app: "leave")
        let two = try Side(bus, title: "Two", app: "leave")
        try await one.player.publish()
        try await two.player.publish()
        try await two.player.claimName()
        try await eventually("the first player to hold the entry") { one.player.holdsAppEntry }
        one.player.unpublish()
        try await eventually("the second player to hold the entry") { two.player.holdsAppEntry }
        #expect(try await Self.title(client, two.player.busName) == "Two")
        two.player.unpublish()
    }

    @Test("a call that expects no reply, an unknown method and an error come through the entry as from the target")
    func errorsAndNoReply() async throws {
        let bus = try PrivateBus()
        let client = try DBusConnection(.address(bus.address))
        let one = try Side(bus, title: "One", app: "errors")
        try await one.player.publish()
        try await eventually("the entry held") { one.player.holdsAppEntry }
        await #expect(throws: DBusError.self) {
            try await client.call(destination: one.player.busName, path: MPRISPlayer.objectPath, interface: MPRISPlayer.playerInterface, method: "NoSuchMethod")
        }
        do {
            _ = try await client.call(destination: one.player.busName, path: MPRISPlayer.objectPath, interface: StandardInterface.properties,
                                      method: "Get", [.string(MPRISPlayer.playerInterface), .string("NoSuchProperty")])
            Issue.record("Get of an unknown property succeeded")
        } catch {
            #expect(error.name == DBusError.Name.unknownProperty)
        }
        let message = try DBusMessage.methodCall(destination: one.player.busName, path: MPRISPlayer.objectPath,
                                                 interface: MPRISPlayer.playerInterface, method: "Play")
        message.setNoReply()
        try client.send(message)
        #expect(try await Self.title(client, one.player.busName) == "One", "still answers after a call without reply")
        one.player.unpublish()
    }
}
