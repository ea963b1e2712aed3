import DBus
import MPRIS
import Testing
import TestSupport

/// An in-process MPRIS player on a private bus, and a client to call it.
final class PlayerFixture: Sendable {
    let bus: PrivateBus
    let service: DBusConnection
    let client: DBusConnection
    let commands = RemoteCommandCenter()
    let nowPlaying = NowPlayingInfoCenter()
    let player: MPRISPlayer
    let signals = Locked<[(member: String, args: [DBusValue])]>([])

    init(coalescing: Duration = .milliseconds(100)) async throws {
        bus = try PrivateBus()
        service = try DBusConnection(.address(bus.address))
        client = try DBusConnection(.address(bus.address))
        var configuration = MPRISConfiguration(appName: "test", identity: "Test Player", desktopEntry: "test")
        configuration.supportedURISchemes = ["file"]
        configuration.coalescingInterval = coalescing
        player = try MPRISPlayer(connection: service, configuration: configuration,
                                 commandCenter: commands, nowPlayingInfoCenter: nowPlaying)
        #expect(try await player.publish() == .primaryOwner)
        let signals = self.signals
        _ = try await client.subscribe(MatchRule(sender: service.uniqueName, path: MPRISPlayer.objectPath)) { message in
            signals.withLock { $0.append((message.member ?? "", (try? message.arguments()) ?? [])) }
        }
    }

    func call(_ method: String, _ args: [DBusValue] = [], interface: String = MPRISPlayer.playerInterface) async throws(DBusError) {
        _ = try await client.call(destination: player.busName, path: MPRISPlayer.objectPath, interface: interface, method: method, args)
    }

    func all(_ interface: String = MPRISPlayer.playerInterface) async throws -> [String: DBusValue] {
        let reply = try await client.call(destination: player.busName, path: MPRISPlayer.objectPath,
                                          interface: StandardInterface.properties, method: "GetAll", [.string(interface)])
        return try #require(reply.first?.stringKeyedDictionary)
    }

    func set(_ property: String, _ value: DBusValue) async throws(DBusError) {
        _ = try await client.call(destination: player.busName, path: MPRISPlayer.objectPath, interface: StandardInterface.properties,
                                  method: "Set", [.string(MPRISPlayer.playerInterface), .string(property), .variant(value)])
    }

    /// PropertiesChanged payloads for the Player interface received so far.
    var playerChanges: [[String: DBusValue]] {
        signals.value.filter { $0.member == "PropertiesChanged" && $0.args.first?.string == MPRISPlayer.playerInterface }
            .compactMap { $0.args[1].stringKeyedDictionary }
    }

    var seeked: [Int64] {
        signals.value.filter { $0.member == "Seeked" }.compactMap { $0.args.first?.int64 }
    }

    /// Enables every plain command with a handler that records it.
    func enableAll(log: Locked<[String]>) {
        for command in [commands.playCommand, commands.pauseCommand, commands.stopCommand, commands.nextTrackCommand, commands.previousTrackCommand] {
            command.addTarget { event in
                log.withLock { $0.append(event.command.rawValue) }
                return .success
            }
        }
    }
}


@Suite("MPRISPlayer on a private bus")
struct MPRISPlayerTests {
    @Test("nothing loaded: Stopped, empty Metadata, nothing possible, CanControl true")
    func empty() async throws {
        let f = try await PlayerFixture()
        let all = try await f.all()
        #expect(all["PlaybackStatus"] == .string("Stopped"))
        #expect(all["Metadata"] == .vardict([:]))
        for key in ["CanPlay", "CanPause", "CanSeek", "CanGoNext", "CanGoPrevious"] { #expect(all[key] == .boolean(false), "\(key)") }
        #expect(all["CanControl"] == .boolean(true))
        #expect(all["Rate"] == .double(1))
        let root = try await f.all(MPRISPlayer.rootInterface)
        #expect(root["Identity"] == .string("Test Player"))
        #expect(root["DesktopEntry"] == .string("test"))
        #expect(root["CanQuit"] == .boolean(false))
        #expect(root["SupportedUriSchemes"] == .strings(["file"]))
    }

    @Test("Can* follow the available commands and the queue position")
    func capabilities() async throws {
        let f = try await PlayerFixture()
        let log = Locked<[String]>([])
        var info = NowPlayingInfo(title: "A", duration: 60)
        info.queueIndex = 0
        info.queueCount = 2
        f.nowPlaying.nowPlayingInfo = info
        var all = try await f.all()
        #expect(all["CanPlay"] == .boolean(false), "no play handler yet")
        f.enableAll(log: log)
        f.commands.changePlaybackPositionCommand.addTarget { _ in .success }
        all = try await f.all()
        #expect(all["CanPlay"] == .boolean(true))
        #expect(all["CanSeek"] == .boolean(true))
        #expect(all["CanGoNext"] == .boolean(true))
        #expect(all["CanGoPrevious"] == .boolean(false), "first of the queue")
        f.nowPlaying.update { $0?.repeatMode = .all }
        #expect(try await f.all()["CanGoPrevious"] == .boolean(true), "a looping playlist wraps")
        f.commands.nextTrackCommand.isEnabled = false
        #expect(try await f.all()["CanGoNext"] == .boolean(false))

        try await f.call("Next")
        try await f.call("Previous")
        #expect(log.value == ["previousTrack"], "Next is a no-op while CanGoNext is false")
    }

    @Test("handler statuses become named errors")
    func statuses() async throws {
        let f = try await PlayerFixture()
        f.nowPlaying.nowPlayingInfo = NowPlayingInfo(title: "A", duration: 60, playbackState: .paused)
        f.commands.playCommand.addTarget { _ in .deviceNotFound }
        #expect(await dbusErrorName { try await f.call("Play") } == "org.earshot.RemoteCommand.DeviceNotFound")
        f.commands.playCommand.addTarget { _ in .noActionableNowPlayingItem }
        #expect(await dbusErrorName { try await f.call("PlayPause") } == "org.earshot.RemoteCommand.NoActionableNowPlayingItem")
    }

    @Test("a burst of changes: the first at once, the rest in one PropertiesChanged, only what changed")
    func coalescing() async throws {
        let f = try await PlayerFixture(coalescing: .milliseconds(300))
        let start = ContinuousClock.now
        f.nowPlaying.nowPlayingInfo = NowPlayingInfo(title: "A", duration: 60)
        try await eventually("the first PropertiesChanged") { !f.playerChanges.isEmpty }
        // At once, not after the 300 ms interval (a loaded machine may take tens of ms).
        #expect(ContinuousClock.now - start < .milliseconds(150))
        let first = try #require(f.playerChanges.first)
        #expect(first["PlaybackStatus"] == .string("Playing"))
        #expect(first["Metadata"]?.stringKeyedDictionary?["xesam:title"] == .string("A"))

        f.nowPlaying.update { $0?.volume = 0.5 }
        f.nowPlaying.update { $0?.title = "B" }
        f.nowPlaying.update { $0?.volume = 0.25 }
        try await eventually("the burst's PropertiesChanged", timeout: 3) { f.playerChanges.count > 1 }
        try await Task.sleep(for: .milliseconds(400))
        let changes = f.playerChanges
        #expect(changes.count == 2, "\(changes)")
        let changed = try #require(changes.last)
        #expect(changed["Volume"] == .double(0.25))
        #expect(changed["Metadata"]?.stringKeyedDictionary?["xesam:title"] == .string("B"))
        #expect(changed["PlaybackStatus"] == nil, "unchanged, and sent again")
        #expect(changed["Position"] == nil && changed["CanControl"] == nil && changed["Rate"] == nil)

        // The same values again: nothing.
        f.nowPlaying.update { $0?.volume = 0.25 }
        f.nowPlaying.update { $0?.title = "B" }
        try await Task.sleep(for: .milliseconds(400))
        #expect(f.playerChanges.count == 2, "\(f.playerChanges)")
        // A change undone within a burst: what goes out ends at the final value (the first
        // change may have gone out at once), and nothing else.
        f.nowPlaying.update { $0?.volume = 0.9 }
        f.nowPlaying.update { $0?.volume = 0.25 }
        try await Task.sleep(for: .milliseconds(400))
        let undone = f.playerChanges.dropFirst(2)
        #expect(undone.isEmpty || undone.count == 2 && undone.last?["Volume"] == .double(0.25), "\(Array(undone))")
    }

    @Test("a position jump emits Seeked with the new position; playing on does not")
    func seeked() async throws {
        let f = try await PlayerFixture(coalescing: .milliseconds(10))
        f.nowPlaying.nowPlayingInfo = NowPlayingInfo(title: "A", duration: 60, elapsedTime: 1)
        try await Task.sleep(for: .milliseconds(150))
        #expect(f.seeked.isEmpty)
        f.nowPlaying.update { $0?.elapsedTime = 30 }
        try await eventually("Seeked") { !f.seeked.isEmpty }
        let position = try #require(f.seeked.first)
        #expect(abs(position - 30_000_000) < 100_000)
        #expect(f.playerChanges.allSatisfy { $0["Position"] == nil })
    }

    @Test("Position is live and Rate never reads 0")
    func positionAndRate() async throws {
        let f = try await PlayerFixture()
        var info = NowPlayingInfo(title: "A", duration: 60, elapsedTime: 5)
        info.playbackRate = 1.5
        f.nowPlaying.nowPlayingInfo = info
        let first = try #require(try await f.all()["Position"]?.int64)
        try await Task.sleep(for: .milliseconds(200))
        let second = try #require(try await f.all()["Position"]?.int64)
        #expect(second - first >= 250_000, "1.5× for ≥0.2 s")
        f.nowPlaying.update {
            $0?.playbackState = .paused
            $0?.playbackRate = 0
            $0?.defaultPlaybackRate = 1.5
        }
        let all = try await f.all()
        #expect(all["Rate"] == .double(1.5))
        #expect(all["PlaybackStatus"] == .string("Paused"))
    }

    @Test("rate limits come from the supported rates; setters validate and change nothing on error")
    func setters() async throws {
        let f = try await PlayerFixture()
        f.nowPlaying.nowPlayingInfo = NowPlayingInfo(title: "A", duration: 60)
        let rates = Locked<[Double]>([])
        let paused = Locked(0)
        f.commands.changePlaybackRateCommand.supportedPlaybackRates = [0.25, 1, 3]
        f.commands.changePlaybackRateCommand.addTarget { event in
            rates.withLock { $0.append(event.playbackRate) }
            return .success
        }
        f.commands.pauseCommand.addTarget { _ in
            paused.withLock { $0 += 1 }
            return .success
        }
        var all = try await f.all()
        #expect(all["MinimumRate"] == .double(0.25) && all["MaximumRate"] == .double(3))
        try await f.set("Rate", .double(2.5))
        try await f.set("Rate", .double(0))
        for bad in [Double.nan, -1, 4, .infinity] {
            #expect(await dbusErrorName { try await f.set("Rate", .double(bad)) } == DBusError.Name.invalidArgs, "Rate \(bad)")
        }
        #expect(await dbusErrorName { try await f.set("Rate", .string("fast")) } == DBusError.Name.invalidArgs)
        #expect(await dbusErrorName { try await f.set("LoopStatus", .string("Playlist")) } == DBusError.Name.notSupported)
        #expect(await dbusErrorName { try await f.set("PlaybackStatus", .string("Playing")) } == DBusError.Name.propertyReadOnly)
        #expect(rates.value == [2.5])
        #expect(paused.value == 1)
        all = try await f.all()
        #expect(all["Rate"] == .double(1), "the app did not change its rate, so neither does Rate")
    }

    @Test("Seek clamps at zero, saturates huge offsets, and past the end acts as Next")
    func seek() async throws {
        let f = try await PlayerFixture()
        let log = Locked<[String]>([])
        f.enableAll(log: log)
        f.commands.seekCommand.addTarget { event in
            log.withLock { $0.append("seek \(event.offset)") }
            return .success
        }
        f.nowPlaying.nowPlayingInfo = NowPlayingInfo(title: "A", duration: 60, elapsedTime: 10, playbackState: .paused)
        try await f.call("Seek", [.int64(-20_000_000)])
        try await f.call("Seek", [.int64(Int64.min)])
        try await f.call("Seek", [.int64(Int64.max)])
        try await f.call("Seek", [.int64(0)])
        #expect(log.value == ["seek -10.0", "seek -10.0", "nextTrack"])
        #expect(await dbusErrorName { try await f.call("Seek", [.string("5")]) } == DBusError.Name.invalidArgs)
    }

    @Test("SetPosition moves only the current track, and only within its length")
    func setPosition() async throws {
        let f = try await PlayerFixture()
        let positions = Locked<[Double]>([])
        f.commands.changePlaybackPositionCommand.addTarget { event in
            positions.withLock { $0.append(event.positionTime) }
            return .success
        }
        var info = NowPlayingInfo(title: "A", duration: 60)
        info.trackID = "song/1"
        f.nowPlaying.nowPlayingInfo = info
        let metadata = try #require(try await f.all()["Metadata"]?.stringKeyedDictionary)
        let track = try #require(metadata["mpris:trackid"]?.objectPath)
        #expect(track.rawValue == "/org/earshot/test/Track/song_2f1")
        try await f.call("SetPosition", [.objectPath(track), .int64(30_000_000)])
        try await f.call("SetPosition", [.objectPath("/org/earshot/test/Track/other"), .int64(5_000_000)])
        try await f.call("SetPosition", [.objectPath(track), .int64(-1)])
        try await f.call("SetPosition", [.objectPath(track), .int64(61_000_000)])
        #expect(positions.value == [30])
    }

    @Test("OpenUri checks the scheme before the app sees it")
    func openURI() async throws {
        let f = try await PlayerFixture()
        let opened = Locked<[String]>([])
        f.commands.openURICommand.addTarget { event in
            opened.withLock { $0.append(event.uri) }
            return event.uri.hasSuffix(".missing") ? .noSuchContent : .success
        }
        try await f.call("OpenUri", [.string("file:///music/a.flac")])
        #expect(await dbusErrorName { try await f.call("OpenUri", [.string("https://example.invalid/a")]) } == DBusError.Name.notSupported)
        #expect(await dbusErrorName { try await f.call("OpenUri", [.string("no scheme")]) } == DBusError.Name.invalidArgs)
        #expect(await dbusErrorName { try await f.call("OpenUri", [.string("file:///x.missing")]) } == "org.earshot.RemoteCommand.NoSuchContent")
        #expect(opened.value == ["file:///music/a.flac", "file:///x.missing"])
    }

    @Test("tags with NUL bytes and odd characters are published, not fatal")
    func hostileTags() async throws {
        let f = try await PlayerFixture()
        var info = NowPlayingInfo(title: "bad\0title", artists: ["ü\u{FFFE}"], duration: 1)
        info.artworkPath = "/tmp/cover art#1.png"
        f.nowPlaying.nowPlayingInfo = info
        let metadata = try #require(try await f.all()["Metadata"]?.stringKeyedDictionary)
        #expect(metadata["xesam:title"] == .string("bad"))
        #expect(metadata["xesam:artist"] == .strings(["ü\u{FFFE}"]))
        #expect(metadata["mpris:artUrl"] == .string("file:///tmp/cover%20art%231.png"))
    }
}
