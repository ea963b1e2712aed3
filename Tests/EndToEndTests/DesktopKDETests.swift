import DBus
import Foundation
import Testing
import TestSupport

/// KDE Plasma 5.27's media keys, headless: Xvfb, kglobalaccel5 and the Media Player applet
/// alone (`plasmawindowed org.kde.plasma.mediacontroller`), on the world's private bus and
/// sound server. Keys are pressed both ways a user's reach the applet: kglobalaccel's
/// `invokeShortcut` on component `mediacontrol`, and a real X key event (xdotool). Where a
/// key went is read from the players themselves (each process's `PlaybackStatus` at its own
/// connection, mpv's at its name): the one whose status flips got it.
///
/// Issue 32 item 2: Plasma deletes its multiplexer when its player list empties, and an
/// owner change of an MPRIS name empties it for an instant when that name is the only
/// player; the keys then stay dead until plasmashell restarts. These tests press a key
/// after each step, after the handovers that used to kill them (docs/mpris-presence.md).
@Suite("the desktop: KDE Plasma's media keys", .enabled(if: KDEDesktop.available, "needs Xvfb, kglobalaccel5, plasmawindowed, xdotool"), .tags(.desktop))
struct DesktopKDETests {
    /// Two `earshot play` processes of the app "earshot", A then B, both playing: A holds
    /// the entry, B sounded last.
    private func twoProcesses(_ world: SessionWorld) async throws -> (SessionPlayer, SessionPlayer) {
        let a = try world.play("earshot", side: .left, duration: 120)
        try await a.waitUntilPlaying()
        let b = try world.play("earshot", side: .right, duration: 120)
        try await b.waitUntilPlaying()
        return (a, b)
    }

    @Test("one Earshot process: both kinds of key reach it, the pause is heard within 30 ms, the applet shows it")
    func oneProcess() async throws {
        let world = try await SessionWorld()
        let capture = try await world.capture()
        let kde = try await KDEDesktop(world)
        let a = try world.play("earshot", side: .left, duration: 120)
        try await a.waitUntilPlaying()
        let players = try await KDEPlayers(world, [("A", a)])
        try await kde.waitForPlayer()
        #expect(kde.appletPlayer == "earshot", "the applet's player: \(kde.appletLog)")
        try await kde.expectEntry(showsTitleOf: "A", players)

        // The pause the key asks for is heard within 30 ms of the press (the press is
        // timed before the status read that precedes it: the figure errs long).
        try await settle(0.3)
        let pressed = ContinuousClock.now
        #expect(try await kde.press(.invoke("playpausemedia"), players) == ["A"])
        let audio = try await capture.snapshot()
        let start = try audio.at(pressed)
        let delay = audio.silenceOnset(.left, after: start).map { $0 - start } ?? .infinity
        sessionReport("KDE: pause heard \(Int(delay * 1000)) ms after the key press")
        #expect(delay < 0.030, "the key's pause is heard \(Int(delay * 1000)) ms after the press")
        #expect(try await kde.press(.x("XF86AudioPlay"), players) == ["A"])
    }

    @Test("two Earshot processes and mpv in turn, killed one by one: the key goes to the last sounder after each step")
    func twoProcessesAndMpv() async throws {
        let world = try await SessionWorld()
        let kde = try await KDEDesktop(world)
        let a = try world.play("earshot", side: .left, duration: 120)
        try await a.waitUntilPlaying()
        var players = try await KDEPlayers(world, [("A", a)])
        try await kde.waitForPlayer()
        #expect(try await kde.press(.invoke("playpausemedia"), players) == ["A"], "A alone")
        #expect(try await kde.press(.x("XF86AudioPlay"), players) == ["A"], "A alone, X key")

        // B sounds: the target moves to B, the entry stays with A (this killed the keys).
        let b = try world.play("earshot", side: .right, duration: 120)
        try await b.waitUntilPlaying()
        players = try await KDEPlayers(world, [("A", a), ("B", b)])
        #expect(try await kde.press(.invoke("playpausemedia"), players) == ["B"], "B sounded last")
        #expect(try await kde.press(.x("XF86AudioPlay"), players) == ["B"], "B sounded last, X key")
        #expect(kde.appletPlayer == "earshot", "B sounded last: \(kde.appletLog)")
        try await kde.expectEntry(showsTitleOf: "B", players)

        // mpv sounds: it is another app; Plasma's own rule (a Playing player takes over
        // from one that is not) decides, and B, interrupted by it, is not Playing.
        let mpv = try await world.mpv()
        players.add("mpv", mpv)
        let withMpv = players
        try await sessionPoll("B to be interrupted by mpv", timeout: 5) { try await withMpv.status("B") != "Playing" }
        #expect(try await kde.press(.invoke("playpausemedia"), players) == ["mpv"], "mpv sounded last")
        #expect(kde.appletPlayer == "mpv", "mpv sounded last: \(kde.appletLog)")

        // mpv killed: B (the app's target) gets the keys back.
        mpv.child.kill(SIGKILL)
        players.remove("mpv")
        try await kde.waitForPlayer()
        #expect(try await kde.press(.invoke("playpausemedia"), players).contains("B"), "mpv gone: B sounded last")
        try await players.makePlaying("B")
        #expect(kde.appletPlayer == "earshot", "mpv gone: \(kde.appletLog)")
        try await kde.expectEntry(showsTitleOf: "B", players)

        // B killed: the target returns to A through the entry A holds (no owner change).
        b.kill()
        players.remove("B")
        try await a.waitForLine("session: interruption ended, resuming", timeout: 8)
        try await a.waitUntilPlaying()
        #expect(try await kde.press(.invoke("playpausemedia"), players) == ["A"], "B gone: A sounded last")
        #expect(try await kde.press(.x("XF86AudioPlay"), players) == ["A"], "B gone: A, X key")
        #expect(kde.appletPlayer == "earshot", "B gone: \(kde.appletLog)")
        try await kde.expectEntry(showsTitleOf: "A", players)
    }

    @Test("the entry's holder killed while mpv plays: the entry passes to B and the keys live on")
    func holderKilledBesideAnotherPlayer() async throws {
        let world = try await SessionWorld()
        let kde = try await KDEDesktop(world)
        let (a, b) = try await twoProcesses(world)
        let mpv = try await world.mpv()
        var players = try await KDEPlayers(world, [("A", a), ("B", b)])
        players.add("mpv", mpv)
        try await kde.waitForPlayer()
        a.kill()
        players.remove("A")
        try await settle(1)
        #expect(try await kde.press(.invoke("playpausemedia"), players) == ["mpv"], "mpv sounded last")
        mpv.child.kill(SIGKILL)
        players.remove("mpv")
        try await kde.waitForPlayer()
        #expect(try await kde.press(.invoke("playpausemedia"), players).contains("B"), "the keys live: B")
    }

    @Test("the entry's holder exits cleanly (SIGTERM) with no other player: it bridges the hand-over and the keys live on")
    func holderExitsCleanlyAlone() async throws {
        let world = try await SessionWorld()
        let kde = try await KDEDesktop(world)
        let (a, b) = try await twoProcesses(world)
        let players = try await KDEPlayers(world, [("B", b)])
        try await kde.waitForPlayer()
        a.process.kill(SIGTERM)
        _ = try await a.process.wait(timeout: 10)
        try await kde.waitForPlayer()
        #expect(try await kde.press(.invoke("playpausemedia"), players) == ["B"], "the keys live: B")
        #expect(try await kde.press(.x("XF86AudioPlay"), players) == ["B"], "the keys live: B, X key")
    }

    /// What the design does not cover (docs/mpris-presence.md, "What still moves the
    /// entry"): the entry's holder is the app's oldest process; when it dies while a newer
    /// one lives and no other player is on the bus, Plasma sees the entry go offline and
    /// come back, and its keys die. Recorded as a known issue, so that a fix shows.
    @Test("the entry's holder killed with no other player on the bus (Plasma's multiplexer bug still meets this)")
    func holderKilledAlone() async throws {
        let world = try await SessionWorld()
        let kde = try await KDEDesktop(world)
        let (a, b) = try await twoProcesses(world)
        let players = try await KDEPlayers(world, [("B", b)])
        try await kde.waitForPlayer()
        a.kill()
        try await settle(1)
        let went = try await kde.press(.invoke("playpausemedia"), players)
        withKnownIssue("Plasma 5.27 deletes its multiplexer when the only entry changes owner") {
            #expect(went == ["B"])
        }
    }
}

/// The players a test follows, by label: Earshot processes (read at their own connection,
/// not through the app's entry) and mpv.
struct KDEPlayers: Sendable {
    private var readers: [(String, @Sendable () async throws -> String?)] = []
    /// Each Earshot process's own title, read at its own connection.
    private(set) var titles: [String: String] = [:]
    private let world: SessionWorld

    init(_ world: SessionWorld, _ players: [(String, SessionPlayer)]) async throws {
        self.world = world
        for (label, player) in players {
            let name = try await player.uniqueName()
            @Sendable func property(_ property: String) async throws -> DBusValue? {
                try await world.client.call(destination: name, path: "/org/mpris/MediaPlayer2", interface: StandardInterface.properties,
                                            method: "Get", [.string("org.mpris.MediaPlayer2.Player"), .string(property)]).first?.unwrapped
            }
            readers.append((label, { try await property("PlaybackStatus")?.string }))
            titles[label] = try await property("Metadata")?.stringKeyedDictionary?["xesam:title"]?.unwrapped.string
        }
    }

    mutating func add(_ label: String, _ mpv: ForeignPlayerProcess) { readers.append((label, { try await mpv.status() })) }
    mutating func remove(_ label: String) { readers.removeAll { $0.0 == label } }

    func status(_ label: String) async throws -> String? { try await readers.first { $0.0 == label }?.1() }

    func statuses() async -> [String: String] {
        var result: [String: String] = [:]
        for (label, read) in readers { result[label] = (try? await read()) ?? "?" }
        return result
    }

    /// Makes `label` Playing again (over the bus, at its own connection or name) after a key paused it.
    func makePlaying(_ label: String) async throws {
        guard try await status(label) != "Playing" else { return }
        _ = try await world.playerctl("--player", "earshot", "play")
        try await sessionPoll("\(label) to play", timeout: 5) { try await self.status(label) == "Playing" }
    }
}

/// Xvfb, kglobalaccel5 and the Media Player applet on a world's bus, with a home of their own.
final class KDEDesktop: Sendable {
    enum Key: Sendable {
        /// kglobalaccel's `invokeShortcut` on component `mediacontrol`.
        case invoke(String)
        /// A real key event through the X server (xdotool).
        case x(String)
    }

    static let available: Bool = ["Xvfb", "kglobalaccel5", "plasmawindowed", "xdotool"].allSatisfy { tool in
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)")
        }
    }

    let world: SessionWorld
    let environment: [String: String]
    private let children: [Child]
    private let home: String

    init(_ world: SessionWorld) async throws {
        self.world = world
        home = NSTemporaryDirectory() + "earshot-kde-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        // Xvfb picks a free display itself and writes its number (-displayfd): tests run side by side.
        let xvfb = try Child("Xvfb", ["-displayfd", "1", "-screen", "0", "1024x768x24", "-nolisten", "tcp"])
        var children = [xvfb]
        do {
            try await eventually("Xvfb to say its display", timeout: 10) { xvfb.stdout.contains("\n") }
            let display = ":" + xvfb.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            var environment = world.environment
            environment["DISPLAY"] = display
            environment["QT_QPA_PLATFORM"] = "xcb"
            // Its own home: kglobalaccel5 keeps its shortcuts in ~/.config/kglobalshortcutsrc.
            environment["HOME"] = home
            environment["XDG_CONFIG_HOME"] = home + "/.config"
            environment["XDG_DATA_HOME"] = home + "/.local/share"
            environment["XDG_CACHE_HOME"] = home + "/.cache"
            // The mpris2 engine says which player its multiplexer chose, for a failure to show.
            environment["QT_LOGGING_RULES"] = "kde.dataengine.mpris.debug=true"
            self.environment = environment
            children.append(try Child("kglobalaccel5", [], environment: environment))
            let client = world.client
            try await eventually("kglobalaccel5 on the bus", timeout: 15) { try await client.nameOwner("org.kde.kglobalaccel") != nil }
            children.append(try Child("plasmawindowed", ["org.kde.plasma.mediacontroller"], environment: environment))
            // The applet registers the media keys with kglobalaccel when it loads.
            try await eventually("the applet's media keys", timeout: 30) {
                let names = try? await client.call(destination: "org.kde.kglobalaccel", path: "/component/mediacontrol",
                                                   interface: "org.kde.kglobalaccel.Component", method: "shortcutNames").first?.stringArray
                return names?.contains("playpausemedia") == true
            }
            self.children = children
        } catch {
            for child in children { child.kill(SIGKILL) }
            throw error
        }
    }

    deinit {
        for child in children.reversed() { child.kill(SIGKILL) }
        try? FileManager.default.removeItem(atPath: home)
    }

    /// The applet's log (the mpris2 engine's choices), for failures.
    var appletLog: String { children.count > 2 ? children[2].stderr.split(separator: "\n").suffix(25).joined(separator: "\n") : "" }

    /// The player the applet shows and its keys act on: the mpris2 engine's multiplexer's
    /// choice, as its log last stated it (it logs each switch; nil before the first).
    var appletPlayer: String? {
        guard children.count > 2 else { return nil }
        var current: String?
        for line in children[2].stderr.split(separator: "\n") {
            for (prefix, suffix) in [("Determined \"", "\" to be the best player"), ("Player \"", "\" is now playing but current was not")] {
                guard let start = line.range(of: prefix), let end = line.range(of: suffix), start.upperBound <= end.lowerBound else { continue }
                current = String(line[start.upperBound..<end.lowerBound])
            }
        }
        return current
    }

    /// Expects the app's entry, `org.mpris.MediaPlayer2.earshot` (what the applet lists for
    /// every Earshot process), to show the title of the process `label`, as that process
    /// itself does: the entry relays the last sounder.
    func expectEntry(showsTitleOf label: String, _ players: KDEPlayers) async throws {
        let wanted = try #require(players.titles[label], "\(label) has no title")
        let shown = Locked<String?>(nil)
        do {
            try await eventually("the entry to show \(label)'s title", timeout: 3) {
                let title = try? await self.world.playerctl("--player", "earshot", "metadata", "xesam:title").output
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                shown.withLock { $0 = title }
                return title == wanted
            }
        } catch {
            Issue.record("the app's entry shows \(shown.value ?? "nothing"), not \(label)'s \(wanted)")
        }
    }

    /// Waits until the engine has taken in the players (it reads a new one's properties
    /// asynchronously after its name appears; a key pressed before that acts on the old
    /// choice).
    func waitForPlayer() async throws { try await settle(1.5) }

    /// Presses `key` and returns the labels of the players whose status changed within 3 s
    /// (empty: the key reached no one).
    func press(_ key: Key, _ players: KDEPlayers) async throws -> Set<String> {
        let before = await players.statuses()
        switch key {
        case .invoke(let shortcut):
            _ = try await world.client.call(destination: "org.kde.kglobalaccel", path: "/component/mediacontrol",
                                            interface: "org.kde.kglobalaccel.Component", method: "invokeShortcut", [.string(shortcut)])
        case .x(let keysym):
            let result = try await run("xdotool", ["key", keysym], environment: environment, timeout: 5)
            #expect(result.status == 0, "xdotool: \(result.stderr)")
        }
        let deadline = ContinuousClock.now + .seconds(3)
        var after = before
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            after = await players.statuses()
            if after != before { break }
        }
        try await settle(0.3)
        after = await players.statuses()
        let changed = Set(after.keys.filter { after[$0] != before[$0] })
        if changed.isEmpty { print("DesktopKDETests: \(key) reached no player (\(before)); the applet said:\n\(appletLog)") }
        // Let the engine see the new status before the next key (it picks Play or Pause by it).
        try await settle(0.4)
        return changed
    }
}
