import Foundation

/// A private PipeWire, as a desktop runs it (`pipewire`, `wireplumber`, `pipewire-pulse`),
/// headless, with a null sink: the PulseAudio protocol on PipeWire for the same real-time
/// tests as ``PulseAudioServer``.
///
/// Each has its own runtime folder (mode 700; PipeWire's and pipewire-pulse's sockets live
/// there) and its own session bus (WirePlumber wants one; a private one keeps it from
/// meeting the test's). The null sink comes from `pactl load-module module-null-sink`, which
/// pipewire-pulse implements, and is made the default sink. The three daemons run under
/// watchdogs that kill them when the test process goes.
///
/// Capture with ``Capture``, which runs `parec` at 100 ms latency here: on pipewire-pulse
/// 0.3.65, `parec` at its default fragment size loses about a third of the audio (see
/// FIELD-NOTES); with `--latency-msec=20` (or 100) the same capture, from a monitor or from a
/// pw-loopback source, held a 3.000 s tone whole in every run here, also under load.
public final class PipeWireServer: Sendable {
    /// The runtime folder, also HOME.
    public let directory: String
    /// pipewire-pulse's native-protocol socket.
    public var socketPath: String { directory + "/pulse/native" }
    /// `unix:SOCKET`, for `PULSE_SERVER` or ``AudioEngine.Configuration.soundServer``.
    public var address: String { "unix:" + socketPath }
    public let sinkName: String
    /// The source that records what `sinkName` plays.
    public var monitorName: String { sinkName + ".monitor" }
    public let sampleRate: Int
    public let channels: Int
    /// For a client of this server (`pactl`, `parec`, `earshot`): the runtime folder,
    /// HOME, the private bus, and `PULSE_SERVER`.
    public let environment: [String: String]

    private let bus: PrivateBus
    private let daemons: Locked<[Watchdog]>
    /// PipeWire clients the harness runs beside the daemons (``addMicrophone(_:)``).
    private let helpers = Locked<[Watchdog]>([])
    private let daemonEnvironment: [String: String]
    /// The null sinks loaded with ``loadNullSink(name:sampleRate:channels:)``, by module index.
    private let sinks = Locked<[Int: (name: String, sampleRate: Int, channels: Int)]>([:])

    /// Starts the three daemons, waits (up to `timeout` s) for `pactl info`, and loads the sink.
    public init(sinkName: String = "earshot_pw", sampleRate: Int = 48000, channels: Int = 2, timeout: Double = 15) throws {
        let directory = try TemporaryDirectories.make("earshot-pw")
        chmod(directory, 0o700)
        self.directory = directory
        self.sinkName = sinkName
        self.sampleRate = sampleRate
        self.channels = channels
        bus = try PrivateBus()
        var client = ProcessInfo.processInfo.environment
        client["XDG_RUNTIME_DIR"] = directory
        client["HOME"] = directory
        client["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        client["PULSE_SERVER"] = "unix:" + directory + "/pulse/native"
        for key in ["PULSE_SINK", "PULSE_SOURCE", "PULSE_CLIENTCONFIG", "PULSE_COOKIE", "PIPEWIRE_REMOTE"] { client[key] = nil }
        environment = client
        var daemonEnvironment = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": directory,
            "XDG_RUNTIME_DIR": directory,
            "DBUS_SESSION_BUS_ADDRESS": bus.address,
            "LANG": "C",
        ]
        // PipeWire logs a missed graph cycle ("client too slow!") at info level, for its node
        // category: the captures count them (``graphXrunCount()``). A run that looks into the
        // daemons sets its own, e.g. EARSHOT_TEST_PW_DEBUG="2,pw.node:3,mod.protocol-pulse:4"
        // (pipewire-pulse's underruns and requests as well).
        daemonEnvironment["PIPEWIRE_DEBUG"] = ProcessInfo.processInfo.environment["EARSHOT_TEST_PW_DEBUG"] ?? "2,pw.node:3"
        var started: [Watchdog] = []
        do {
            for daemon in ["pipewire", "wireplumber", "pipewire-pulse"] {
                started.append(try Watchdog("exec \"$1\" 2>>\"$2\"", [daemon, directory + "/\(daemon).log"], environment: daemonEnvironment))
                if daemon == "pipewire" {
                    // WirePlumber and pipewire-pulse connect to PipeWire's socket at start.
                    let deadline = Date().addingTimeInterval(timeout)
                    while !FileManager.default.fileExists(atPath: directory + "/pipewire-0"), Date() < deadline { usleep(2_000) }
                }
            }
            daemons = Locked(started)
            self.daemonEnvironment = daemonEnvironment
            try Self.waitForPulse(environment: client, directory: directory, timeout: timeout)
            try Self.loadSink(sinkName, sampleRate: sampleRate, channels: channels, environment: client, timeout: timeout)
        } catch {
            started.forEach { $0.stop() }
            TemporaryDirectories.remove(directory)
            throw error
        }
    }

    deinit {
        helpers.value.forEach { $0.stop() }
        daemons.value.reversed().forEach { $0.stop() }
        TemporaryDirectories.remove(directory)
    }

    /// Kills pipewire-pulse (SIGKILL: a crash, as its clients see it) and starts it again on
    /// the same socket; the null sink it made went with it and is loaded again. PipeWire and
    /// WirePlumber run on (the configured defaults stay). Returns once the sink is the default.
    public func restartPulseServer(timeout: Double = 10) throws {
        let old = daemons.value.last!
        kill(old.childPID, SIGKILL)
        old.stop()
        let fresh = try Watchdog("exec \"$1\" 2>>\"$2\"", ["pipewire-pulse", directory + "/pipewire-pulse.log"], environment: daemonEnvironment)
        daemons.withLock { $0[$0.count - 1] = fresh }
        // The sinks it loaded were its own (its clients' objects go with it).
        sinks.withLock { $0 = [:] }
        try Self.waitForPulse(environment: environment, directory: directory, timeout: timeout)
        let sinks = try runSync("pactl", ["list", "short", "sinks"], environment: environment).output
        if !sinks.contains(sinkName) {
            try Self.loadSink(sinkName, sampleRate: sampleRate, channels: channels, environment: environment, timeout: timeout)
        }
    }

    /// Adds a microphone without hardware: a `pw-loopback` whose capture side is a sink
    /// named `NAME_feed` (play a signal into it, e.g. `paplay -d NAME_feed`) and whose
    /// playback side is a source named `NAME` (media.class `Audio/Source`, as a microphone
    /// is). Returns once pipewire-pulse lists the source. Recording from it goes through
    /// pipewire-pulse's record stream as recording a microphone does, not through a sink's
    /// monitor.
    public func addMicrophone(_ name: String, timeout: Double = 10) throws {
        let position = channels == 1 ? "[MONO]" : "[FL FR]"
        let loopback = try Watchdog("exec pw-loopback --capture-props=\"$1\" --playback-props=\"$2\" 2>>\"$3\"", [
            "media.class=Audio/Sink node.name=\(name)_feed node.description=\(name)_feed audio.position=\(position)",
            "media.class=Audio/Source node.name=\(name) node.description=\(name) priority.session=2000 audio.position=\(position)",
            directory + "/pw-loopback.log",
        ], environment: environment)
        helpers.withLock { $0.append(loopback) }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let sources = try runSync("pactl", ["list", "short", "sources"], environment: environment).output
            let sinks = try runSync("pactl", ["list", "short", "sinks"], environment: environment).output
            if sources.split(separator: "\n").contains(where: { $0.split(separator: "\t").dropFirst().first == Substring(name) }),
               sinks.contains(name + "_feed") {
                return
            }
            if Date() > deadline || !loopback.isRunning { throw TestFailure("pw-loopback's source \(name) did not appear: \(sources)") }
            usleep(10_000)
        }
    }

    private static func waitForPulse(environment: [String: String], directory: String, timeout: Double) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if FileManager.default.fileExists(atPath: directory + "/pulse/native"),
                let info = try? runSync("pactl", ["info"], environment: environment, timeout: 5), info.status == 0
            {
                return
            }
            if Date() > deadline { throw TestFailure("pipewire-pulse did not answer within \(timeout) s") }
            usleep(5_000)
        }
    }

    private static func loadSink(_ sinkName: String, sampleRate: Int, channels: Int, environment: [String: String], timeout: Double) throws {
        let load = try runSync("pactl", ["load-module", "module-null-sink", "sink_name=\(sinkName)", "rate=\(sampleRate)",
                                         "channels=\(channels)"], environment: environment)
        guard load.status == 0 else { throw TestFailure("cannot load the null sink: \(load.stderr)") }
        _ = try runSync("pactl", ["set-default-sink", sinkName], environment: environment)
        // The sink appears to clients once WirePlumber has seen it.
        let sinkDeadline = Date().addingTimeInterval(timeout)
        while try !runSync("pactl", ["get-default-sink"], environment: environment).output.contains(sinkName) {
            if Date() > sinkDeadline { throw TestFailure("the null sink did not become the default") }
            usleep(10_000)
            _ = try runSync("pactl", ["set-default-sink", sinkName], environment: environment)
        }
    }

    /// Runs `pactl ARGUMENTS` against this server and returns its output; throws if it fails.
    @discardableResult
    public func pactl(_ arguments: String...) throws -> String {
        let result = try runSync("pactl", arguments, environment: environment)
        guard result.status == 0 else {
            throw TestFailure("pactl \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.stderr)")
        }
        return result.output
    }
}

// MARK: The shared in-process server, on PipeWire

extension PipeWireServer: SharedAudioServer {
    /// Whether `EARSHOT_TEST_SERVER=pipewire` makes this the shared in-process server
    /// (``withSharedAudio(isolation:idleTimeout:_:)``).
    public static var isSharedServer: Bool { TestSoundServerKind.selected == .pipeWire }

    private static let sharedServer = Locked<PipeWireServer?>(nil)

    /// The one PipeWire server for audio played inside the test process: as
    /// `PulseAudioServer.shared()`, it exports `PULSE_SERVER` with `setenv` before anything
    /// in the process opens the sound server, and lives until the process exits. It needs
    /// no keep-alive stream: PipeWire's null sink follows the graph's clock, and its
    /// monitor does not drop the start of a sound after silence as PulseAudio's does.
    public static func shared() throws -> PipeWireServer {
        let result: Result<PipeWireServer, any Error> = sharedServer.withLock { server in
            if let server { return .success(server) }
            do {
                let created = try PipeWireServer()
                setenv("PULSE_SERVER", created.address, 1)
                for key in ["PULSE_COOKIE", "PULSE_CLIENTCONFIG", "PULSE_SINK", "PULSE_SOURCE"] { unsetenv(key) }
                server = created
                return .success(created)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The playback streams now connected.
    public func listSinkInputs() throws -> [PulseAudioServer.SinkInput] {
        PulseAudioServer.SinkInput.parse(shortList: try pactl("list", "short", "sink-inputs"))
    }

    /// Makes the harness's sink the default again (tests on the shared server load none of
    /// their own).
    public func reset() throws {
        try pactl("set-default-sink", sinkName)
    }
}

// MARK: Outputs plugged in and out, and a crash

extension PipeWireServer: TestSoundServer {
    /// Loads another null sink through pipewire-pulse (`pactl load-module module-null-sink`)
    /// and returns its module index once pipewire-pulse lists the sink (WirePlumber has seen
    /// it by then, so it can be made the default).
    public func loadNullSink(name: String, sampleRate: Int?, channels: Int?) throws -> Int {
        let rate = sampleRate ?? self.sampleRate
        let count = channels ?? self.channels
        let output = try pactl("load-module", "module-null-sink", "sink_name=\(name)", "rate=\(rate)", "channels=\(count)")
        guard let index = Int(output) else { throw TestFailure("load-module printed “\(output)”") }
        sinks.withLock { $0[index] = (name, rate, count) }
        let deadline = Date().addingTimeInterval(10)
        while !(try sinkNames().contains(name)) {
            if Date() > deadline { throw TestFailure("the null sink \(name) (module \(index)) did not appear within 10 s") }
            usleep(5_000)
        }
        return index
    }

    /// Unloads a module; for a null sink, returns once pipewire-pulse no longer lists it.
    public func unloadModule(_ index: Int) throws {
        try pactl("unload-module", String(index))
        guard let sink = sinks.withLock({ $0.removeValue(forKey: index) }) else { return }
        let deadline = Date().addingTimeInterval(10)
        while try sinkNames().contains(sink.name) {
            if Date() > deadline { throw TestFailure("the null sink \(sink.name) (module \(index)) was still there 10 s after its unloading") }
            usleep(5_000)
        }
    }

    /// Makes `name` the default sink and returns once pipewire-pulse says it is: it asks
    /// WirePlumber, which decides, so the change is not there when `pactl` returns.
    public func setDefaultSink(_ name: String) throws {
        try pactl("set-default-sink", name)
        let deadline = Date().addingTimeInterval(10)
        while try defaultSink() != name {
            if Date() > deadline { throw TestFailure("\(name) did not become the default sink within 10 s (it is \(try defaultSink()))") }
            usleep(5_000)
        }
    }

    public func defaultSink() throws -> String {
        try pactl("get-default-sink").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// ``restartPulseServer(timeout:)``: pipewire-pulse is the server a PulseAudio client
    /// talks to.
    public func restart(timeout: Double) throws {
        try restartPulseServer(timeout: timeout)
    }

    /// The format of the main sink or of one from ``loadNullSink(name:sampleRate:channels:)``.
    public func format(ofSink name: String) throws -> (sampleRate: Int, channels: Int) {
        if name == sinkName { return (sampleRate, channels) }
        guard let sink = sinks.value.values.first(where: { $0.name == name }) else {
            throw TestFailure("\(name) is not a sink the PipeWire harness made; its format is not known here")
        }
        return (sink.sampleRate, sink.channels)
    }

    private func sinkNames() throws -> [String] {
        try pactl("list", "short", "sinks").split(separator: "\n").compactMap { line in
            line.split(separator: "\t", omittingEmptySubsequences: false).dropFirst().first.map(String.init)
        }
    }
}
