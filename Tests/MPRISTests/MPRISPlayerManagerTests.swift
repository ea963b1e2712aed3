import DBus
import MPRIS
import Testing
import TestSupport

/// The client of other apps' players checks every answer: pure decoding of the replies and
/// signals it reads, without a bus.
@Suite("MPRIS: decoding other players' replies")
struct MPRISPlayerRepliesTests {
    @Test("GetAll: one a{sv}; each property read on its own, a wrong one nil")
    func getAll() throws {
        let good = try MPRISPlayerProperties.decodeGetAll([.vardict(["PlaybackStatus": .string("Playing"), "CanPause": .boolean(false)])])
        #expect(good == MPRISPlayerProperties(playbackStatus: .playing, canPause: false))
        let odd = try MPRISPlayerProperties.decodeGetAll([.vardict(["PlaybackStatus": .string("Dancing"), "CanPause": .boolean(true)])])
        #expect(odd == MPRISPlayerProperties(playbackStatus: nil, canPause: true))
        let wrongTypes = try MPRISPlayerProperties.decodeGetAll([.vardict(["PlaybackStatus": .int32(1), "CanPause": .string("yes")])])
        #expect(wrongTypes.isEmpty)
        for reply: [DBusValue] in [[], [.string("Playing")], [.vardict([:]), .vardict([:])], [.strings(["PlaybackStatus"])]] {
            #expect(throws: MPRISClientError.self) { try MPRISPlayerProperties.decodeGetAll(reply) }
        }
    }

    @Test("Get(PlaybackStatus): one variant holding a known status, else a named error")
    func playbackStatus() throws {
        #expect(try MPRISPlayerProperties.decodePlaybackStatus([.variant(.string("Paused"))]) == .paused)
        #expect(try MPRISPlayerProperties.decodePlaybackStatus([.string("Stopped")]) == .stopped)
        for reply: [DBusValue] in [[], [.variant(.string("playing"))], [.variant(.boolean(true))], [.string("Paused"), .string("Paused")]] {
            let error = #expect(throws: MPRISClientError.self) { try MPRISPlayerProperties.decodePlaybackStatus(reply) }
            guard case .malformed? = error else { Issue.record("not a malformed reply: \(String(describing: error))"); continue }
        }
    }

    @Test("PropertiesChanged: only the player interface's; metadata alone names nothing")
    func changed() {
        let player = DBusValue.string(MPRISPlayer.playerInterface)
        #expect(MPRISPlayerProperties.decodeChanged([player, .vardict(["PlaybackStatus": .variant(.string("Paused"))]), .strings([])])
                == MPRISPlayerProperties(playbackStatus: .paused))
        #expect(MPRISPlayerProperties.decodeChanged([player, .vardict(["Metadata": .vardict([:])]), .strings([])])?.isEmpty == true)
        #expect(MPRISPlayerProperties.decodeChanged([.string(MPRISPlayer.rootInterface), .vardict(["CanPause": .boolean(true)])]) == nil)
        #expect(MPRISPlayerProperties.decodeChanged([player]) == nil)
        #expect(MPRISPlayerProperties.decodeChanged([player, .string("PlaybackStatus")]) == nil)
    }

    @Test("transport commands: method names and arguments both ways; Seek needs its int64 offset")
    func transport() {
        let all: [MPRISTransportCommand] = [.playPause, .play, .pause, .stop, .next, .previous, .seek(microseconds: -5_000_000)]
        for command in all {
            #expect(MPRISTransportCommand(method: command.method, arguments: command.arguments) == command)
        }
        #expect(MPRISTransportCommand.seek(microseconds: 7).arguments == [.int64(7)])
        #expect(MPRISTransportCommand(method: "Seek") == nil)
        #expect(MPRISTransportCommand(method: "Seek", arguments: [.int32(5)]) == nil)
        #expect(MPRISTransportCommand(method: "OpenUri", arguments: [.string("file:///")]) == nil)
    }

    @Test("player names: org.mpris.MediaPlayer2.* only")
    func names() {
        #expect(MPRISPlayerManager.isPlayerName("org.mpris.MediaPlayer2.mpv"))
        #expect(!MPRISPlayerManager.isPlayerName("org.mpris.MediaPlayer2"))
        #expect(!MPRISPlayerManager.isPlayerName("org.earshot.MPRISTarget.mpv"))
    }
}

/// The client against a player that answers wrongly or not at all, on a private bus: a named
/// error within the timeout, never a trap or a wait without end.
@Suite("MPRIS: a hostile player")
struct MPRISPlayerManagerHostileTests {
    @Test("a wrong answer is malformed, a missing one an error after the timeout, and a silent player holds up no other call")
    func hostilePlayer() async throws {
        let bus = try PrivateBus()
        let hostile = try DBusConnection(.address(bus.address))
        let client = try DBusConnection(.address(bus.address))
        // Answers Get with a number, GetAll with a string, and never answers a transport call.
        try hostile.forward(at: MPRISPlayer.objectPath) { call in
            switch call.member {
            case "Get": if let reply = try? call.makeReply([.variant(.int32(3))]) { try? hostile.send(reply) }
            case "GetAll": if let reply = try? call.makeReply([.string("Playing")]) { try? hostile.send(reply) }
            default: break
            }
        }
        #expect(try await hostile.requestName("org.mpris.MediaPlayer2.hostile") == .primaryOwner)
        let players = MPRISPlayerManager(connection: client, timeout: .milliseconds(300))
        #expect(try await players.playerNames() == ["org.mpris.MediaPlayer2.hostile"])
        let target = hostile.uniqueName
        await #expect(throws: MPRISClientError.self) { try await players.playbackStatus(of: target) }
        await #expect(throws: MPRISClientError.self) { try await players.properties(of: target) }
        let clock = ContinuousClock(), start = clock.now
        let silent = Task { () -> MPRISClientError? in
            do { try await players.send(.pause, to: target) } catch { return error as? MPRISClientError }
            return nil
        }
        // Meanwhile, the bus answers others.
        #expect(try await players.playerNames().count == 1)
        let error = await silent.value
        guard case .call(let dbus)? = error else { Issue.record("not a call error: \(String(describing: error))"); return }
        #expect(dbus.name == DBusError.Name.noReply || dbus.name == DBusError.Name.timeout)
        #expect(clock.now - start < .seconds(5))
    }
}
