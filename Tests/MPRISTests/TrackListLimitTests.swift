import DBus
import MPRIS
import Testing
import TestSupport

/// A list of `count` tracks that takes at most `limit`.
final class BoundedQueue: TrackListSource, Sendable {
    let ids = Locked<[String]>([])
    let limit: Int
    init(count: Int, limit: Int) {
        ids.withLock { $0 = (0..<count).map { "t\($0)" } }
        self.limit = limit
    }
    var trackListItems: [NowPlayingInfo] {
        ids.value.map { id in
            var info = NowPlayingInfo(title: id, duration: 1)
            info.trackID = id
            return info
        }
    }
    var canEditTracks: Bool { true }
    var maximumTrackCount: Int { limit }
    func goTo(_ trackID: String) -> RemoteCommandHandlerStatus { .success }
    func addTrack(uri: String, after trackID: String?, setAsCurrent: Bool) -> RemoteCommandHandlerStatus {
        ids.withLock { $0.append("t\($0.count)") }
        return .success
    }
    func removeTrack(_ trackID: String) -> RemoteCommandHandlerStatus { .success }
}

/// What a client can make the track list allocate: replies no larger than the list,
/// and a list no longer than its limit.
@Suite("MPRIS TrackList bounds")
struct TrackListLimitTests {
    func setUp(count: Int, limit: Int) async throws -> (PrivateBus, DBusConnection, MPRISPlayer, BoundedQueue) {
        let bus = try PrivateBus()
        let service = try DBusConnection(.address(bus.address))
        let client = try DBusConnection(.address(bus.address))
        let queue = BoundedQueue(count: count, limit: limit)
        var configuration = MPRISConfiguration(appName: "bounded", identity: "Bounded")
        configuration.supportedURISchemes = ["file"]
        let player = try MPRISPlayer(connection: service, configuration: configuration, commandCenter: RemoteCommandCenter(),
                                     nowPlayingInfoCenter: NowPlayingInfoCenter(), trackList: queue)
        try await player.publish()
        return (bus, client, player, queue)
    }

    func path(_ id: String) -> DBusValue { .objectPath(ObjectPath("/org/earshot/bounded/Track").appending(escaped: id)) }

    @Test("GetTracksMetadata repeating one id 20,000 times answers it once")
    func repeatedIDs() async throws {
        let (bus, client, player, _) = try await setUp(count: 2, limit: 10)
        let ids = DBusValue.array(.objectPath, [DBusValue](repeating: path("t1"), count: 20_000) + [path("t0")])
        let reply = try await client.call(destination: player.busName, path: MPRISPlayer.objectPath,
                                          interface: MPRISPlayer.trackListInterface, method: "GetTracksMetadata", [ids])
        let titles = reply.first?.elements?.compactMap { $0.stringKeyedDictionary?["xesam:title"]?.string }
        #expect(titles == ["t1", "t0"])
        withExtendedLifetime(bus) {}
    }

    @Test("AddTrack past the list's limit is LimitsExceeded and adds nothing")
    func limit() async throws {
        let (bus, client, player, queue) = try await setUp(count: 2, limit: 3)
        func add() async throws {
            _ = try await client.call(destination: player.busName, path: MPRISPlayer.objectPath, interface: MPRISPlayer.trackListInterface,
                                      method: "AddTrack", [.string("file:///x.wav"), .objectPath(MPRISPlayer.noTrack), .boolean(false)])
        }
        try await add()
        #expect(queue.ids.value.count == 3)
        let error = await dbusErrorName { try await add() }
        #expect(error == "org.freedesktop.DBus.Error.LimitsExceeded")
        #expect(queue.ids.value.count == 3)
        withExtendedLifetime(bus) {}
    }
}
