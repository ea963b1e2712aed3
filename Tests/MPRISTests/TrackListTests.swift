import DBus
import MPRIS
import Synchronization
import Testing
import TestSupport

/// A queue of titles that records what clients asked of it.
final class FakeQueue: TrackListSource, @unchecked Sendable {
    let titles = Locked<[(id: String, title: String)]>([("a", "A"), ("b", "B"), ("c", "C")])
    let calls = Locked<[String]>([])
    let editable: Bool
    init(editable: Bool = true) { self.editable = editable }

    var trackListItems: [NowPlayingInfo] {
        titles.value.map { entry in
            var info = NowPlayingInfo(title: entry.title, duration: 10)
            info.trackID = entry.id
            return info
        }
    }
    var canEditTracks: Bool { editable }
    func goTo(_ trackID: String) -> RemoteCommandHandlerStatus {
        calls.withLock { $0.append("goTo \(trackID)") }
        return .success
    }
    func addTrack(uri: String, after trackID: String?, setAsCurrent: Bool) -> RemoteCommandHandlerStatus {
        calls.withLock { $0.append("add \(uri) after \(trackID ?? "start")") }
        titles.withLock { list in
            let at = trackID.flatMap { id in list.firstIndex { $0.id == id }.map { $0 + 1 } } ?? 0
            list.insert(("new", "New"), at: at)
        }
        return .success
    }
    func removeTrack(_ trackID: String) -> RemoteCommandHandlerStatus {
        calls.withLock { $0.append("remove \(trackID)") }
        titles.withLock { $0.removeAll { $0.id == trackID } }
        return .success
    }
}

@Suite("MPRIS TrackList on a private bus")
struct TrackListTests {
    struct Setup {
        let bus: PrivateBus
        let client: DBusConnection
        let player: MPRISPlayer
        let queue: FakeQueue
        let signals = Locked<[(String, [DBusValue])]>([])

        init(editable: Bool = true) async throws {
            bus = try PrivateBus()
            let service = try DBusConnection(.address(bus.address))
            client = try DBusConnection(.address(bus.address))
            queue = FakeQueue(editable: editable)
            var configuration = MPRISConfiguration(appName: "queue", identity: "Queue")
            configuration.supportedURISchemes = ["file"]
            player = try MPRISPlayer(connection: service, configuration: configuration, commandCenter: RemoteCommandCenter(),
                                     nowPlayingInfoCenter: NowPlayingInfoCenter(), trackList: queue)
            try await player.publish()
            let signals = self.signals
            _ = try await client.subscribe(MatchRule(sender: service.uniqueName, path: MPRISPlayer.objectPath)) { message in
                signals.withLock { $0.append((message.member ?? "", (try? message.arguments()) ?? [])) }
            }
        }

        func call(_ method: String, _ args: [DBusValue] = [], interface: String = MPRISPlayer.trackListInterface) async throws -> [DBusValue] {
            try await client.call(destination: player.busName, path: MPRISPlayer.objectPath, interface: interface, method: method, args)
        }

        func tracks() async throws -> [String] {
            let reply = try await call("Get", [.string(MPRISPlayer.trackListInterface), .string("Tracks")], interface: StandardInterface.properties)
            return reply.first?.unwrapped.elements?.compactMap(\.objectPath?.rawValue) ?? []
        }

        func path(_ id: String) -> DBusValue { .objectPath(ObjectPath("/org/earshot/queue/Track").appending(escaped: id)) }
    }

    @Test("Tracks, CanEditTracks, HasTrackList and GetTracksMetadata")
    func properties() async throws {
        let s = try await Setup()
        #expect(try await s.tracks() == ["/org/earshot/queue/Track/a", "/org/earshot/queue/Track/b", "/org/earshot/queue/Track/c"])
        let has = try await s.call("Get", [.string(MPRISPlayer.rootInterface), .string("HasTrackList")], interface: StandardInterface.properties)
        #expect(has == [.variant(.boolean(true))])
        let metadata = try await s.call("GetTracksMetadata", [.array(.objectPath, [s.path("c"), s.path("zzz"), s.path("a")])])
        let titles = metadata.first?.elements?.compactMap { $0.stringKeyedDictionary?["xesam:title"]?.string }
        #expect(titles == ["C", "A"], "unknown ids are skipped, order kept")
        let types = metadata.first?.elements?.first?.stringKeyedDictionary
        #expect(types?["mpris:trackid"]?.objectPath != nil && types?["mpris:length"] == .int64(10_000_000))
    }

    @Test("GoTo, AddTrack and RemoveTrack reach the queue; their changes are signalled")
    func editing() async throws {
        let s = try await Setup()
        _ = try await s.call("GoTo", [s.path("b")])
        _ = try await s.call("GoTo", [s.path("nope")])
        _ = try await s.call("AddTrack", [.string("file:///x.flac"), s.path("a"), .boolean(false)])
        s.player.trackListChanged()
        _ = try await s.call("RemoveTrack", [s.path("c")])
        s.player.trackListChanged()
        s.player.trackListChanged()  // nothing changed: nothing sent
        #expect(s.queue.calls.value == ["goTo b", "add file:///x.flac after a", "remove c"])
        try await eventually("the signals") { s.signals.value.contains { $0.0 == "TrackRemoved" } }
        let members = s.signals.value.map(\.0).filter { $0 != "PropertiesChanged" }
        #expect(members == ["TrackAdded", "TrackRemoved"])
        let added = try #require(s.signals.value.first { $0.0 == "TrackAdded" })
        #expect(added.1.last == s.path("a"), "added after a")
        #expect(added.1.first?.stringKeyedDictionary?["xesam:title"] == .string("New"))
        let invalidations = s.signals.value.filter { $0.0 == "PropertiesChanged" && $0.1.first?.string == MPRISPlayer.trackListInterface }
        #expect(invalidations.count == 2 && invalidations.allSatisfy { $0.1.last == .strings(["Tracks"]) })
    }

    @Test("bad AddTrack arguments are errors; a read-only list ignores edits")
    func badInput() async throws {
        let s = try await Setup()
        await #expect(throws: DBusError.self) { _ = try await s.call("AddTrack", [.string("ftp://x"), s.path("a"), .boolean(false)]) }
        await #expect(throws: DBusError.self) { _ = try await s.call("AddTrack", [.string("file:///x"), s.path("zzz"), .boolean(false)]) }
        await #expect(throws: DBusError.self) { _ = try await s.call("AddTrack", [.string("file:///x"), .string("a"), .boolean(false)]) }
        #expect(s.queue.calls.value.isEmpty)

        let readOnly = try await Setup(editable: false)
        _ = try await readOnly.call("AddTrack", [.string("file:///x.flac"), readOnly.path("a"), .boolean(false)])
        _ = try await readOnly.call("RemoveTrack", [readOnly.path("a")])
        #expect(readOnly.queue.calls.value.isEmpty)
    }
}
