import DBus
import Foundation
import Testing
import TestSupport

// The harness of the audio-session end-to-end tests: each test builds a `SessionWorld` (a
// private bus, a sound server of its own, a client connection), starts real
// `earshot play` processes in it (`SessionPlayer`), and checks three things: what the
// processes print, what the arbiter says (its D-Bus properties and `earshot status`), and
// what reaches the sink (a `Capture` of its monitor). Every player's tone goes to one
// channel only, so one capture measures two processes independently.

/// The arbiter's names (`dbus/org.earshot.AudioSession.xml`).
enum SessionArbiter {
    static let name = "org.earshot.AudioSession"
    static let interface = "org.earshot.AudioSession"
    static let path: ObjectPath = "/org/earshot/AudioSession"
}

/// The stereo channel a test tone is on (the other one is digital silence).
enum SessionSide: Int, Sendable, CustomStringConvertible {
    case left = 0
    case right = 1
    var channel: Int { rawValue }
    var description: String { self == .left ? "left" : "right" }
}

/// One entry of the arbiter's `Sessions` property.
struct SessionInfo: Sendable, CustomStringConvertible {
    let id: String
    let app: String
    let category: String
    let options: [String]
    let active: Bool
    let producingSound: Bool
    let interrupted: Bool
    let ducked: Bool
    let eligible: Bool
    let target: Bool

    init(_ d: [String: DBusValue]) {
        id = d["id"]?.string ?? "?"
        app = d["app"]?.string ?? "?"
        category = d["category"]?.string ?? "?"
        options = d["options"]?.stringArray ?? []
        active = d["active"]?.bool ?? false
        producingSound = d["producingSound"]?.bool ?? false
        interrupted = d["interrupted"]?.bool ?? false
        ducked = d["ducked"]?.bool ?? false
        eligible = d["eligible"]?.bool ?? false
        target = d["target"]?.bool ?? false
    }

    var description: String {
        var state: [String] = []
        if target { state.append("target") }
        if active { state.append("active") }
        if producingSound { state.append("playing") }
        if interrupted { state.append("interrupted") }
        if ducked { state.append("ducked") }
        return "\(id) \(app) \(category) [\(options.joined(separator: ","))] \(state.isEmpty ? "idle" : state.joined(separator: ", "))"
    }
}

/// `earshot status`, parsed.
struct SessionStatusTable: Sendable, CustomStringConvertible {
    struct Row: Sendable {
        let id: String
        let app: String
        let category: String
        let options: String
        /// What it plays through: `pulseaudio-16.1`, `pipewire-0.3.65`, `alsa:DEVICE`, or `-`.
        let output: String
        /// `target`, `active`, `playing`, `interrupted`, `ducked`, or `idle`.
        let state: [String]
    }

    /// The arbiter's unique name, from `arbiter :1.N (process P); target: …`.
    let arbiter: String
    /// The process that serves the arbiter (nil if status could not say).
    let arbiterProcess: Int32?
    let screenLocked: Bool
    /// The target's unique name, or nil for `none`.
    let target: String?
    let rows: [Row]
    let text: String

    init(_ text: String) throws {
        self.text = text
        let lines = text.split(separator: "\n").map(String.init)
        guard let first = lines.first,
              let match = first.wholeMatch(of: /arbiter (:[0-9.]+)(?: \(process ([0-9]+)\))?(, screen locked)?; target: (\S+)/) else {
            throw TestFailure("unexpected first line of earshot status: “\(text)”")
        }
        arbiter = String(match.1)
        arbiterProcess = match.2.flatMap { Int32($0) }
        screenLocked = match.3 != nil
        target = match.4 == "none" ? nil : String(match.4)
        guard lines.count >= 2, lines[1].hasPrefix("SESSION") else {
            throw TestFailure("no header line in earshot status: “\(text)”")
        }
        // The sessions' rows end where the other apps' table begins.
        rows = try lines.dropFirst(2).prefix { !$0.hasPrefix("OTHER ") }.map { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard fields.count >= 6 else { throw TestFailure("unexpected earshot status row: “\(line)”") }
            let state = fields[5...].joined(separator: " ").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            return Row(id: fields[0], app: fields[1], category: fields[2], options: fields[3], output: fields[4], state: state)
        }
    }

    func row(_ id: String) -> Row? { rows.first { $0.id == id } }
    var description: String { text }
}

/// A private bus and a private sound server, with a client connection, for one test.
///
/// The server is the one `EARSHOT_TEST_SERVER` names (``TestSoundServerKind``): PulseAudio
/// at 48 kHz without rewinds (the default), PulseAudio at its defaults, or PipeWire
/// (pipewire, WirePlumber and pipewire-pulse, whose own private bus is not this world's:
/// the processes under test meet only `bus`). `scripts/test` runs the session suites on
/// each.
///
/// At most `SessionSlots.limit` worlds exist at once (each is a sound server, a
/// dbus-daemon, a capture and two or three players, all real time): on a small machine,
/// running every test at once starves them all and turns timing into noise.
final class SessionWorld: Sendable {
    let bus: PrivateBus
    let server: any TestSoundServer
    /// Which server `server` is.
    let serverKind: TestSoundServerKind
    let client: DBusConnection
    /// For the processes of the test: the server's environment (`PULSE_SERVER`,
    /// `XDG_RUNTIME_DIR`, …) with the bus's `DBUS_SESSION_BUS_ADDRESS`.
    let environment: [String: String]
    /// `pacat` writing zeros to the default sink (as an event stream, which never counts as
    /// another app's audio), so that the null sink does not sleep in
    /// 2 s blocks and a stream that starts sounds at once. Not needed when a capture starts
    /// before the players (`Capture.start()` wakes the sink and its recording keeps it awake),
    /// nor on PipeWire (its null sink follows the graph's clock), where it runs all the same
    /// so that the tests meet the same streams on every server.
    private let keepAwake: Child?
    private let pids = Locked<[String: Int32]>([:])
    /// The `earshot daemon --trace` of ``daemon(_:)``, whose trace a failure prints.
    let tracedDaemon = Locked<Child?>(nil)
    private let screenSavers = Locked<[String: ScreenSaverStandIn]>([:])

    init(keepAwake: Bool = true) async throws {
        await SessionSlots.shared.acquire()
        do {
            bus = try PrivateBus()
            serverKind = TestSoundServerKind.selected
            server = try serverKind.start(sinkName: "earshot_test")
            var environment = server.environment
            environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
            environment["NO_COLOR"] = "1"
            // A player that hosts the arbiter prints its trace (every event applied, and what
            // was decided) on stderr, for failures to show (``SessionPlayer/arbiterTrace``).
            environment["EARSHOT_ARBITER_TRACE"] = "1"
            self.environment = environment
            self.keepAwake = keepAwake
                // An event stream: the arbiter, which follows other apps' streams, never
                // counts it as another app playing.
                ? try Child("pacat", ["--playback", "--latency-msec=10", "--property=media.role=event", "--format=float32le",
                                      "--rate=\(server.sampleRate)", "--channels=\(server.channels)", "--raw", "/dev/zero"],
                            environment: environment)
                : nil
            client = try DBusConnection(.address(bus.address))
        } catch {
            SessionSlots.shared.release()
            throw error
        }
        if keepAwake {
            let server = self.server
            try await sessionPoll("pacat to keep the sink awake") { try server.listSinkInputs().count >= 1 }
        }
    }

    deinit {
        client.close()
        SessionSlots.shared.release()
    }

    // MARK: Files

    private static let tones = Locked<[String: String]>([:])

    /// A stereo WAV file (48 kHz, 16 bit) with a sine on one channel and silence on the
    /// other; made once per process for each set of arguments.
    static func tone(_ side: SessionSide, frequency: Double, duration: Double, level: Double = -12) throws -> String {
        let key = "\(side)-\(frequency)-\(duration)-\(level)"
        if let path = tones.value[key] { return path }
        let mono = TestSignals.render([.tone(frequency: frequency, duration: duration, level: level)], sampleRate: 48000, channels: 1)
        var stereo = [Float](repeating: 0, count: mono.count * 2)
        for (i, x) in mono.enumerated() { stereo[2 * i + side.channel] = x }
        let path = try TestSignals.writeWAV(stereo, sampleRate: 48000, channels: 2, format: .int16,
                                           name: "\(side)-\(Int(frequency))Hz-\(Int(duration * 10))ds")
        return tones.withLock { tones in
            if let existing = tones[key] { return existing }
            tones[key] = path
            return path
        }
    }

    // MARK: Processes

    /// Starts `earshot play --name APP [--category …] [--mix] [--duck] [--implicit-session] FILE`
    /// with a tone on `side` of `duration` seconds. With `implicitSession` the process's session
    /// is `AudioSession.shared`, whose app name is the process's: use "earshot" as `app`.
    func play(
        _ app: String, side: SessionSide, frequency: Double? = nil, duration: Double = 20, level: Double = -12,
        category: String? = nil, mix: Bool = false, duck: Bool = false, implicitSession: Bool = false
    ) throws -> SessionPlayer {
        let file = try SessionWorld.tone(side, frequency: frequency ?? (side == .left ? 300 : 500), duration: duration, level: level)
        var arguments = ["play", "--name", app]
        if let category { arguments += ["--category", category] }
        if mix { arguments.append("--mix") }
        if duck { arguments.append("--duck") }
        if implicitSession { arguments.append("--implicit-session") }
        arguments.append(file)
        return SessionPlayer(app: app, side: side, process: try Child(Paths.earshot, arguments, environment: environment), world: self)
    }

    /// Runs `earshot ARGUMENTS…` to completion in this world.
    func earshot(_ arguments: String...) async throws -> CommandResult {
        try await run(Paths.earshot, arguments, environment: environment, timeout: 10)
    }

    /// Runs `playerctl ARGUMENTS…` in this world.
    func playerctl(_ arguments: String...) async throws -> CommandResult {
        try await run("playerctl", arguments, environment: environment, timeout: 10)
    }

    /// `earshot status`, parsed; fails when it fails.
    func status() async throws -> SessionStatusTable {
        let result = try await earshot("status")
        guard result.status == 0 else { throw TestFailure("earshot status failed (\(result.status)): \(result.stderr)") }
        return try SessionStatusTable(result.output)
    }

    // MARK: The arbiter, over the bus

    /// The unique name that owns `org.earshot.AudioSession`.
    func arbiterOwner() async throws -> String? { try await client.nameOwner(SessionArbiter.name) }

    /// The process that serves the arbiter (an embedded host serves it on a connection of its
    /// own, not on the one its session and players use), nil when none does.
    func arbiterHost() async throws -> Int32? {
        guard let owner = try await arbiterOwner() else { return nil }
        do {
            return try await pid(of: owner)
        } catch let error as DBusError where error.name == DBusError.Name.nameHasNoOwner {
            return nil  // gone between the two questions (a host just killed): none serves now
        }
    }

    func arbiterProperty(_ name: String) async throws -> DBusValue {
        let reply = try await client.call(destination: SessionArbiter.name, path: SessionArbiter.path,
                                          interface: StandardInterface.properties, method: "Get",
                                          [.string(SessionArbiter.interface), .string(name)])
        return try #require(reply.first).unwrapped
    }

    /// The arbiter's `Sessions`.
    func sessions() async throws -> [SessionInfo] {
        let value = try await arbiterProperty("Sessions")
        return (value.elements ?? []).compactMap(\.stringKeyedDictionary).map(SessionInfo.init)
    }

    /// The arbiter's `Sessions`, or [] while no arbiter answers (it is changing hosts).
    func sessionsIfAny() async -> [SessionInfo] { (try? await sessions()) ?? [] }

    /// The arbiter's `Target` ("" for none).
    func target() async throws -> String { try await arbiterProperty("Target").string ?? "" }

    /// The process id behind a unique name.
    func pid(of uniqueName: String) async throws -> Int32? {
        if let pid = pids.value[uniqueName] { return pid }
        guard let pid = try await client.processID(of: uniqueName).map({ Int32($0) }) else { return nil }
        pids.withLock { $0[uniqueName] = pid }
        return pid
    }

    /// Locks or unlocks the screen: a stand-in screen saver owning `interface`'s name
    /// (started on first use) sends `ActiveChanged(active)`. (The arbiter obeys the signal
    /// only from the owner of the name.)
    func screenSaver(active: Bool, interface: String = "org.freedesktop.ScreenSaver") async throws {
        let saver: ScreenSaverStandIn
        if let running = screenSavers.value[interface] {
            saver = running
        } else {
            saver = try await ScreenSaverStandIn(bus, name: interface, locked: false)
            screenSavers.withLock { $0[interface] = saver }
        }
        try saver.set(locked: active)
    }

    /// Sends `ActiveChanged(active)` from the test's client, which owns no screen-saver
    /// name: what any client can send.
    func spoofScreenSaver(active: Bool, interface: String = "org.freedesktop.ScreenSaver") throws {
        let path = try ObjectPath("/" + interface.replacingOccurrences(of: ".", with: "/"))
        try client.send(try DBusMessage.signal(path: path, interface: interface, name: "ActiveChanged",
                                               arguments: [.boolean(active)]))
    }

    /// A screen saver on this world's bus that owns `org.freedesktop.ScreenSaver` and
    /// answers `GetActive`, as a desktop's does.
    func runScreenSaver(locked: Bool = false) async throws -> ScreenSaverStandIn {
        try await ScreenSaverStandIn(bus, locked: locked)
    }

    /// Waits until `condition` holds for the arbiter's sessions.
    func waitForSessions(
        _ what: String, timeout: Double = 5, _ condition: @escaping @Sendable ([SessionInfo]) -> Bool
    ) async throws {
        let last = Locked<[SessionInfo]>([])
        do {
            try await sessionPoll(what, timeout: timeout) {
                let sessions = await self.sessionsIfAny()
                last.withLock { $0 = sessions }
                return condition(sessions)
            }
        } catch {
            throw TestFailure("timed out waiting for \(what); the arbiter's sessions: \(last.value)")
        }
    }

    // MARK: Audio

    /// A running capture of `sink` (default: the main sink).
    func capture(sink: String? = nil) async throws -> Capture {
        let capture = try Capture(server: server, sink: sink)
        try await capture.start()
        return capture
    }
}

/// One `earshot play` process.
final class SessionPlayer: Sendable {
    let app: String
    let side: SessionSide
    let process: Child
    private let world: SessionWorld
    private let resolved = Locked<String?>(nil)

    init(app: String, side: SessionSide, process: Child, world: SessionWorld) {
        self.app = app
        self.side = side
        self.process = process
        self.world = world
    }

    /// The lines it printed.
    var lines: [String] { process.stdout.split(separator: "\n").map(String.init) }

    /// The `session: …` lines it printed.
    var sessionLines: [String] { lines.filter { $0.hasPrefix("session: ") } }

    /// The session lines that come from outside the process: all but the route change its
    /// own `setCategory` causes. `earshot play` sets its category before it starts printing
    /// session events, and the route monitor delivers that categoryChange on its own queue,
    /// so whether it is printed is a race (it was, once the input monitor made the queue
    /// busier at start-up).
    var linesFromOthers: [String] { sessionLines.filter { $0 != "session: route changed (categoryChange)" } }

    func printed(_ line: String) -> Bool { lines.contains(line) }

    /// Waits until it prints `line` (a whole line); returns when it was seen.
    @discardableResult
    func waitForLine(_ line: String, timeout: Double = 6) async throws -> ContinuousClock.Instant {
        try await waitForLine(timeout: timeout, "“\(line)”") { $0 == line }
    }

    /// Waits until it prints a line matching `predicate`; returns when it was seen.
    @discardableResult
    func waitForLine(
        timeout: Double = 6, _ what: String, _ predicate: @escaping @Sendable (String) -> Bool
    ) async throws -> ContinuousClock.Instant {
        do {
            try await sessionPoll("\(app) to print \(what)", timeout: timeout, interval: 0.01) { self.lines.contains(where: predicate) }
        } catch {
            throw TestFailure("\(app) did not print \(what) within \(timeout) s; it printed \(lines), stderr: “\(process.stderr)”\n"
                              + (await world.arbiterReport()))
        }
        return .now
    }

    /// Its unique bus name: the arbiter's session whose connection belongs to this process.
    func uniqueName(timeout: Double = 6) async throws -> String {
        if let name = resolved.value { return name }
        let world = self.world
        let pid = process.pid
        let found = Locked<String?>(nil)
        let seen = Locked<[String]>([])
        do {
            try await sessionPoll("\(app) to register with the arbiter", timeout: timeout) {
                for session in await world.sessionsIfAny() where session.app == self.app {
                    let owner: Int32?
                    do {
                        owner = try await world.pid(of: session.id)
                    } catch {
                        seen.withLock { $0.append("\(session.id): \(error)") }
                        continue
                    }
                    seen.withLock { $0.append("\(session.id): pid \(owner.map(String.init) ?? "?")") }
                    if owner == pid {
                        found.withLock { $0 = session.id }
                        return true
                    }
                }
                return false
            }
        } catch {
            throw TestFailure("\(app) (pid \(pid)) never registered; sessions: \(await world.sessionsIfAny()); "
                              + "seen: \(Set(seen.value).sorted()); it printed \(lines), stderr: “\(process.stderr)”")
        }
        let name = found.value!
        resolved.withLock { $0 = name }
        return name
    }

    /// Its entry in the arbiter's `Sessions`, if there is one now.
    func session() async throws -> SessionInfo? {
        let id = try await uniqueName()
        return await world.sessionsIfAny().first { $0.id == id }
    }

    /// Waits until the arbiter's entry for it satisfies `condition`.
    func waitForSession(
        _ what: String, timeout: Double = 6, _ condition: @escaping @Sendable (SessionInfo) -> Bool
    ) async throws {
        let id = try await uniqueName()
        do {
            try await world.waitForSessions("\(app) (\(id)) to be \(what)", timeout: timeout) { sessions in
                sessions.first { $0.id == id }.map(condition) ?? false
            }
        } catch {
            throw TestFailure("\(error)" + (arbiterTrace.isEmpty ? "" : "\nthe arbiter it hosts, last events (--trace):\n\(arbiterTrace)"))
        }
    }

    /// The last 60 events the arbiter applied while this process hosted it (its stderr's
    /// trace lines), "" if it never did.
    var arbiterTrace: String {
        process.stderr.split(separator: "\n").filter { $0.hasPrefix("+") }.suffix(60).joined(separator: "\n")
    }

    /// Waits until the arbiter says it produces sound.
    func waitUntilPlaying(timeout: Double = 8) async throws {
        try await waitForSession("producing sound", timeout: timeout) { $0.producingSound }
    }

    /// The MPRIS `PlaybackStatus` of the player that owns `org.mpris.MediaPlayer2.APP`.
    func playbackStatus() async throws -> String? {
        let reply = try await world.client.call(
            destination: "org.mpris.MediaPlayer2." + app, path: "/org/mpris/MediaPlayer2",
            interface: StandardInterface.properties, method: "Get",
            [.string("org.mpris.MediaPlayer2.Player"), .string("PlaybackStatus")])
        return reply.first?.string
    }

    func kill() { process.kill(SIGKILL) }
}

// MARK: Audio analysis

extension CapturedAudio {
    /// The sine level (peak dBFS) of a channel over a range.
    func level(_ side: SessionSide, _ range: Range<Double>) -> Double {
        sineLevelDBFS(channel: side.channel, range: range)
    }

    /// The loudest sample of a channel over a range, in dBFS.
    func peak(_ side: SessionSide, _ range: Range<Double>) -> Double {
        peakDBFS(channel: side.channel, range: range)
    }

    /// The longest stretch in `range` where the channel is quieter than `threshold`,
    /// counting the stretches at both ends of the range.
    func longestSilence(_ side: SessionSide, in range: Range<Double>, threshold: Double = -40) -> Double {
        let regions = activeRegions(threshold: threshold, minGap: 0, channel: side.channel, range: range)
        guard let first = regions.first, let last = regions.last else { return range.upperBound - range.lowerBound }
        return ([first.start - range.lowerBound, range.upperBound - last.end] + regions.gaps).max()!
    }

    /// The time in this audio of `instant`, failing if the capture has no origin.
    func at(_ instant: ContinuousClock.Instant) throws -> Double {
        try #require(time(of: instant), "the capture has no time origin")
    }

    /// The last `seconds` of the audio.
    func tail(_ seconds: Double) -> Range<Double> { max(0, duration - seconds)..<duration }
}

/// The duck gain the arbiter applies by default: 0.3, −10.46 dB.
let sessionDuckDecibels = 20 * log10(0.3)

/// Polls `condition` every `interval` seconds until it holds; throws after `timeout`
/// seconds. (`eventually` polls every 10 ms, which, with a D-Bus round trip per poll and
/// many tests at once, costs more than the processes under test.)
func sessionPoll(
    _ what: String, timeout: Double = 5, interval: Double = 0.04, _ condition: @Sendable () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    while true {
        if try await condition() { return }
        if ContinuousClock.now > deadline { throw TestFailure("timed out waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(Int(interval * 1000)))
    }
}

/// Limits how many `SessionWorld`s run at once (`EARSHOT_SESSION_TESTS_PARALLEL`, default 3).
final class SessionSlots: Sendable {
    static let shared = SessionSlots(
        limit: ProcessInfo.processInfo.environment["EARSHOT_SESSION_TESTS_PARALLEL"].flatMap(Int.init).map { max(1, $0) } ?? 3)

    private struct State: Sendable {
        var free: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    let limit: Int
    private let state: Locked<State>

    init(limit: Int) {
        self.limit = limit
        state = Locked(State(free: limit))
    }

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let go = state.withLock { s -> Bool in
                if s.free > 0 {
                    s.free -= 1
                    return true
                }
                s.waiters.append(continuation)
                return false
            }
            if go { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if s.waiters.isEmpty {
                s.free += 1
                return nil
            }
            return s.waiters.removeFirst()
        }
        next?.resume()
    }
}

/// Prints a measurement when `EARSHOT_SESSION_TESTS_VERBOSE` is set (for tuning margins).
func sessionReport(_ text: @autoclosure () -> String, function: String = #function) {
    guard ProcessInfo.processInfo.environment["EARSHOT_SESSION_TESTS_VERBOSE"] != nil else { return }
    print("[\(function.prefix { $0 != "(" })] \(text())")
}

/// Pauses briefly (for settle times only: never to wait for an event).
func settle(_ seconds: Double) async throws {
    try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
}

