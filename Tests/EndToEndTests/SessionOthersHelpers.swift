import DBus
import Foundation
import Testing
import TestSupport

// Other apps for the session tests: a real mpv with the mpv-mpris plugin, paplay streams,
// an `earshot daemon` hosting the arbiter (so that killing a player does not kill the
// arbiter), and fake MPRIS players that misbehave.

extension SessionWorld {
    /// Starts `earshot daemon --trace` in this world and waits until it owns the arbiter's
    /// name. Its trace (every event the arbiter applied) goes into failures that print
    /// ``arbiterReport()``.
    func daemon(_ extra: String...) async throws -> Child {
        let daemon = try Child(Paths.earshot, ["daemon", "--trace"] + extra, environment: environment)
        tracedDaemon.withLock { $0 = daemon }
        try await daemon.waitForOutput("serving ")
        return daemon
    }

    /// For a failure: what the arbiter made of the others (`earshot status`: players,
    /// sessions, who paused whom) and, with a daemon of ``daemon(_:)``, the last events it
    /// applied.
    func arbiterReport() async -> String {
        let status = (try? await earshot("status"))?.output ?? "earshot status failed"
        guard let daemon = tracedDaemon.value else { return "earshot status:\n\(status)" }
        let trace = daemon.stderr.split(separator: "\n").suffix(60).joined(separator: "\n")
        return "earshot status:\n\(status)\nthe daemon's last events (--trace):\n\(trace)"
    }

    /// Starts mpv (with mpv-mpris) playing a looped tone on `side`, and waits until it says
    /// Playing and its stream is on the sink.
    func mpv(side: SessionSide = .right, frequency: Double = 700) async throws -> ForeignPlayerProcess {
        let file = try SessionWorld.tone(side, frequency: frequency, duration: 30)
        let child = try Child("mpv", ["--no-video", "--no-terminal", "--ao=pulse", "--loop-file=inf", file],
                              environment: environment)
        let player = ForeignPlayerProcess(child: child, name: "org.mpris.MediaPlayer2.mpv", world: self)
        try await sessionPoll("mpv to say Playing", timeout: 10) { try await player.status() == "Playing" }
        // mpv-mpris answers Get with its new status before it signals the change: CI's
        // --trace showed the arbiter hear mpv's Playing 55 ms after its stream started, and
        // after a session the test had started in between, which mpv then rightly
        // interrupted. "A session started after mpv plays" means after the arbiter knows.
        // (With no arbiter yet, the one that starts asks mpv itself.)
        if try await arbiterOwner() != nil {
            let id = try await player.uniqueName()
            try await sessionPoll("the arbiter to know mpv as Playing", timeout: 10) {
                try await self.others().contains { $0["player"]?.string == id && $0["status"]?.string == "Playing" }
            }
        }
        return player
    }

    /// The arbiter's `Others`: one dictionary per other app's player or sounding process.
    func others() async throws -> [[String: DBusValue]] {
        (try await arbiterProperty("Others").elements ?? []).compactMap(\.stringKeyedDictionary)
    }

    /// Starts `earshot play --name APP FILE` with `XDG_CONFIG_HOME` set to `configHome`, so
    /// that the arbiter it hosts reads `configHome/earshot/arbiter.conf`.
    func play(_ app: String, side: SessionSide, duration: Double, configHome: String) throws -> SessionPlayer {
        let file = try SessionWorld.tone(side, frequency: side == .left ? 300 : 500, duration: duration)
        var environment = self.environment
        environment["XDG_CONFIG_HOME"] = configHome
        return SessionPlayer(app: app, side: side, process: try Child(Paths.earshot, ["play", "--name", app, file], environment: environment),
                             world: self)
    }

    /// A paplay stream (a looped tone on the right) that the sound server files under
    /// process `pid`: the sound of a ``FakePlayer``'s app, whose player is a connection of
    /// the test process. (The arbiter matches streams to players by
    /// `application.process.id`; a stream's own property wins over its client's.)
    func sound(asProcess pid: Int32) throws -> Child {
        let tone = try SessionWorld.tone(.right, frequency: 700, duration: 30)
        return try Child("paplay", ["--property=application.process.id=\(pid)", tone], environment: environment)
    }

    /// Registers the test's client connection as a session, for the signals the arbiter
    /// sends it.
    func registerClient(category: String, active: Bool) async throws {
        let state: [String: DBusValue] = ["category": .string(category), "active": .boolean(active)]
        _ = try await client.call(destination: SessionArbiter.name, path: SessionArbiter.path, interface: SessionArbiter.interface,
                                  method: "Register", [.string("observer"), .vardict(state)])
    }
}

/// A ``FakePlayer`` that folds the arbiter's pause (``FakePlayer/Behaviour/foldsPause`` or
/// ``FakePlayer/Behaviour/foldsPauseHoldsReads``), its app's sound on (a paplay filed under
/// the test's process), paused by the arbiter for an `earshot play` ("music") started after
/// it; in a world of its own, with an `earshot daemon --trace` hosting the arbiter.
final class FoldingFakeScene {
    let world: SessionWorld
    let daemon: Child
    let fake: FakePlayer
    let music: SessionPlayer
    /// The fake app's sound: the stream now, replaced by ``soundAgain()``.
    private var sound: Child

    init(_ behaviour: FakePlayer.Behaviour) async throws {
        world = try await SessionWorld()
        daemon = try await world.daemon()
        fake = try await FakePlayer(world, behaviour)
        sound = try world.sound(asProcess: getpid())
        try await Self.waitUntil(sounding: true, world: world, fake: fake)
        music = try world.play("music", side: .left, duration: 20)
        try await music.waitUntilPlaying()
        try await sessionPoll("the arbiter to pause the fake") { [fake] in fake.pauses.value == 1 }
    }

    /// Stops its app's sound and the daemon. A test calls it (deferred) when it is done:
    /// that also keeps the scene alive until then, which its last use would not.
    func finish() {
        sound.kill(SIGKILL)
        daemon.kill(SIGKILL)
    }

    /// Its app falls silent (it paused: its stream goes), and the arbiter knows; the player
    /// still says Playing.
    func fallSilent() async throws {
        sound.kill(SIGKILL)  // paplay drains its stream on SIGTERM: seconds more of sound
        try await Self.waitUntil(sounding: false, world: world, fake: fake)
    }

    /// Its app sounds again (a new stream), as when the user plays it; returns at once.
    func soundAgain() throws {
        sound = try world.sound(asProcess: getpid())
    }

    /// Waits until the arbiter knows the app sounding (or silent) and its player Playing; a
    /// failure carries what the arbiter made of it.
    func waitUntil(sounding expected: Bool) async throws {
        try await Self.waitUntil(sounding: expected, world: world, fake: fake)
    }

    private static func waitUntil(sounding expected: Bool, world: SessionWorld, fake: FakePlayer) async throws {
        let id = fake.connection.uniqueName
        do {
            try await sessionPoll("the arbiter to know the fake \(expected ? "sounding" : "silent")", timeout: 5) {
                try await world.others().contains { $0["player"]?.string == id && $0["sounding"]?.bool == expected && $0["status"]?.string == "Playing" }
            }
        } catch {
            throw TestFailure("\(error)\n" + (await world.arbiterReport()))
        }
    }
}

/// Another app's player process (mpv) and its MPRIS name.
final class ForeignPlayerProcess: Sendable {
    let child: Child
    let name: String
    private let world: SessionWorld

    init(child: Child, name: String, world: SessionWorld) {
        self.child = child
        self.name = name
        self.world = world
    }

    /// Its `PlaybackStatus`, or nil while it has no name on the bus.
    func status() async throws -> String? {
        let reply = try? await world.client.call(
            destination: name, path: "/org/mpris/MediaPlayer2", interface: StandardInterface.properties, method: "Get",
            [.string("org.mpris.MediaPlayer2.Player"), .string("PlaybackStatus")], timeout: .seconds(2))
        return reply?.first?.unwrapped.string
    }

    /// The unique name owning its MPRIS name.
    func uniqueName() async throws -> String {
        try #require(try await world.client.nameOwner(name))
    }

    /// Waits until it says `status`; returns how long that took.
    @discardableResult
    func waitFor(_ status: String, timeout: Double = 5) async throws -> Duration {
        let start = ContinuousClock.now
        let last = Locked<String?>(nil)
        do {
            try await sessionPoll("mpv to say \(status)", timeout: timeout, interval: 0.005) {
                let now = try await self.status()
                last.withLock { $0 = now }
                return now == status
            }
        } catch {
            throw TestFailure("mpv did not say \(status) within \(timeout) s; it says \(last.value ?? "nothing")\n" + (await world.arbiterReport()))
        }
        return .now - start
    }

    /// Asks it to play or pause as a user would, with playerctl.
    func user(_ command: String) async throws {
        let result = try await world.playerctl("--player", "mpv", command)
        #expect(result.status == 0, "playerctl \(command): \(result.stderr)")
    }
}

/// A fake MPRIS player on its own connection of the test process, which plays and then
/// misbehaves when told to pause.
final class FakePlayer: Sendable {
    enum Behaviour: String, Sendable {
        /// Never answers `Pause` (holds the call).
        case holdsPause
        /// Answers `Pause` with an error.
        case failsPause
        /// Leaves the bus when told to pause, without answering.
        case vanishesOnPause
        /// Answers, but sends 1,000 `PropertiesChanged` a second (metadata, and its
        /// unchanged status) from the start.
        case floods
        /// Answers, and flips its status between Playing and Paused 1,000 times a second
        /// from the start (ending Paused when stopped).
        case flipsStatus
        /// Plays, and answers its first `PlaybackStatus` read (the arbiter's `GetAll`) only
        /// when ``answer()`` is called (at most ``lateAnswerLimit`` late), as a busy app
        /// does; then pauses and plays as told, and says so.
        case answersLate
        /// Plays, but holds its first `PlaybackStatus` read (the arbiter's `GetAll`) for
        /// ``unansweredHold``, past the arbiter's wait, so that to the arbiter it never
        /// answers; then says Playing by signal, and pauses and plays as told.
        case answersNever
        /// Answers `Pause` (and counts it), but never says it paused: its status stays
        /// Playing, read or signalled. So mpv-mpris behaves when a play follows the pause
        /// within its 100 ms batch of changes (one `Playing`, or nothing new), and when its
        /// `Get` is answered before the pause reached the plugin. Its sound is the test's
        /// to make (``SessionWorld/sound(asProcess:)``).
        case foldsPause
        /// As ``foldsPause``, and once told to pause it holds every `PlaybackStatus` read
        /// past the arbiter's 2 s wait (until ``answer()``), as a hung app does; it counts
        /// those reads (``heldReads``).
        case foldsPauseHoldsReads
    }

    /// How long a ``Behaviour/foldsPauseHoldsReads`` player holds a read at most: past the
    /// arbiter's 2 s wait for another app's player.
    static let heldReadLimit: Double = 2.5

    /// How long an ``Behaviour/answersNever`` player holds its first answer: past the
    /// arbiter's 2 s wait for another app's player.
    static let unansweredHold: Double = 3

    /// How long an ``Behaviour/answersLate`` player holds its first answer at most: below
    /// the arbiter's 2 s wait for another app's player, so the answer still counts.
    static let lateAnswerLimit: Double = 1.8

    let connection: DBusConnection
    let behaviour: Behaviour
    let pauses = Locked(0)
    /// How often it was told `Play`.
    let plays = Locked(0)
    /// Whether ``answer()`` released its first answer (not its limit).
    let answeredWhenTold = Locked(false)
    /// The `PlaybackStatus` reads a ``Behaviour/foldsPauseHoldsReads`` player got once told
    /// to pause (held, or answered at once after ``answer()``).
    let heldReads = Locked(0)
    /// Released by ``answer()``: a ``Behaviour/foldsPauseHoldsReads`` player's reads
    /// return at once from then on.
    private let readsReleased = Locked(false)
    private let readRelease = DispatchSemaphore(value: 0)
    private let firstAnswer = DispatchSemaphore(value: 0)
    private let holdsFirstAnswer = Locked(true)
    private let held = Locked<[DBusMethodCall]>([])
    private let flooding = Locked<Task<Void, Never>?>(nil)
    static let playerInterface = "org.mpris.MediaPlayer2.Player"
    /// The MPRIS name it owns.
    var busName: String { "org.mpris.MediaPlayer2.fake\(behaviour.rawValue)" }

    init(_ world: SessionWorld, _ behaviour: Behaviour) async throws {
        connection = try DBusConnection(.address(world.bus.address))
        self.behaviour = behaviour
        let (pauses, plays, held, connection) = (self.pauses, self.plays, self.held, self.connection)
        let (firstAnswer, holdsFirstAnswer, answeredWhenTold) = (self.firstAnswer, self.holdsFirstAnswer, self.answeredWhenTold)
        let (heldReads, readsReleased, readRelease) = (self.heldReads, self.readsReleased, self.readRelease)
        let status = Locked("Playing")
        let object = Locked<DBusExportedObject?>(nil)
        @Sendable func say(_ value: String) {
            status.withLock { $0 = value }
            try? object.value?.emitPropertiesChanged(interface: Self.playerInterface, changed: ["PlaybackStatus": .string(value)])
        }
        let pause: @Sendable (DBusMethodCall) throws -> [DBusValue] = { call in
            pauses.withLock { $0 += 1 }
            switch behaviour {
            case .answersLate, .answersNever:
                say(call.message.member == "Stop" ? "Stopped" : "Paused")
                return []
            case .holdsPause:
                held.withLock { $0.append(call) }
                throw DBusMethodCall.replyLater
            case .failsPause:
                throw DBusError("org.example.Fake.Refused", "this player refuses to pause")
            case .vanishesOnPause:
                held.withLock { $0.append(call) }
                Task { connection.close() }
                throw DBusMethodCall.replyLater
            case .floods, .flipsStatus, .foldsPause, .foldsPauseHoldsReads:
                return []
            }
        }
        let player = DBusInterface(
            Self.playerInterface,
            methods: [DBusMethod("Pause", handler: pause), DBusMethod("Stop", handler: pause),
                      DBusMethod("Play") { _ in
                          plays.withLock { $0 += 1 }
                          if behaviour == .answersLate || behaviour == .answersNever { say("Playing") }
                          return []
                      },
                      DBusMethod("PlayPause") { _ in [] }],
            properties: [DBusProperty("PlaybackStatus", .string) {
                             if behaviour == .foldsPauseHoldsReads, pauses.value > 0 {
                                 // Blocks this fake's own connection only, as a hung app's main
                                 // loop would: later calls wait in its socket, and are counted
                                 // when it gets to them.
                                 heldReads.withLock { $0 += 1 }
                                 if !readsReleased.value, readRelease.wait(timeout: .now() + Self.heldReadLimit) == .success {
                                     readRelease.signal()
                                 }
                                 return .string(status.value)
                             }
                             // Blocks this fake's own connection only, as a busy app's main loop would.
                             let holds = (behaviour == .answersLate || behaviour == .answersNever) && holdsFirstAnswer.withLock { held in
                                 defer { held = false }
                                 return held
                             }
                             if holds, behaviour == .answersNever {
                                 // The answer goes to a call the arbiter gave up on; then the
                                 // player says it plays, as one does that finally starts.
                                 Thread.sleep(forTimeInterval: Self.unansweredHold)
                                 Task {
                                     try? await Task.sleep(for: .milliseconds(20))
                                     say("Playing")
                                 }
                             } else if holds {
                                 let told = firstAnswer.wait(timeout: .now() + Self.lateAnswerLimit) == .success
                                 answeredWhenTold.withLock { $0 = told }
                             }
                             return .string(status.value)
                         },
                         DBusProperty("CanPause", .boolean) { .boolean(true) },
                         DBusProperty("CanPlay", .boolean) { .boolean(true) }])
        let root = DBusInterface("org.mpris.MediaPlayer2", properties: [DBusProperty("Identity", .string) { .string("Fake \(behaviour)") }])
        let exported = try connection.export([root, player], at: "/org/mpris/MediaPlayer2")
        object.withLock { $0 = exported }
        _ = try await connection.requestName(busName)
        if behaviour == .floods || behaviour == .flipsStatus {
            let task = Task {
                var n = 0
                while !Task.isCancelled {
                    // 11 a batch, so that a flipping player ends its batches Playing and Paused
                    // in turn. The arbiter applies the last status of each 50 ms window, and a
                    // PropertiesChanged that arrives before its GetAll answer wins over it;
                    // with 10 a batch every batch ended Paused, so whether the arbiter ever
                    // saw the player Playing came down to where its discovery fell (the
                    // interruption test failed 1 run in 4 on a quiet machine).
                    for _ in 0..<11 {
                        n += 1
                        let status = behaviour == .flipsStatus && n % 2 == 0 ? "Paused" : "Playing"
                        try? exported.emitPropertiesChanged(interface: Self.playerInterface, changed: [
                            "PlaybackStatus": .string(status),
                            "Metadata": .vardict(["xesam:title": .string("flood \(n)")]),
                        ])
                    }
                    try? await Task.sleep(for: .milliseconds(10))
                }
                if behaviour == .flipsStatus {
                    try? exported.emitPropertiesChanged(interface: Self.playerInterface, changed: ["PlaybackStatus": .string("Paused")])
                }
            }
            flooding.withLock { $0 = task }
        }
    }

    /// Lets an ``Behaviour/answersLate`` player answer the read it holds (later reads are
    /// answered at once), and a ``Behaviour/foldsPauseHoldsReads`` one every read it holds
    /// or is yet to get.
    func answer() {
        firstAnswer.signal()
        readsReleased.withLock { $0 = true }
        readRelease.signal()
    }

    /// Stops the flood (a status-flipping player says Paused last).
    func stopFlooding() async {
        let task = flooding.withLock { task -> Task<Void, Never>? in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
        await connection.flush()
    }

    deinit {
        flooding.value?.cancel()
        connection.close()
    }
}
