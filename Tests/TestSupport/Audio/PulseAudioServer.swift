import Foundation

/// A private PulseAudio server with a null sink: real-time paced audio without hardware.
///
/// Each server has its own runtime folder (its socket is `DIR/pulse/native`), so any number
/// can run at once. It is started with `-n` (no default script: no hardware detection, no
/// D-Bus, udev, X11, suspend-on-idle or restore modules) and loads only
/// `module-null-sink` (the default sink, `sinkName`) and `module-native-protocol-unix`
/// (anonymous auth, so that clients need no cookie). Its volume is 100 %, so what a client
/// plays arrives unchanged on `monitorName`.
///
/// Null sinks are loaded with `norewinds=1`. With rewinds, a stream that starts re-renders
/// the sink's last block (up to 10 ms while a capture runs), which the monitor has already
/// delivered as silence: captures then lost the first 3–5 ms of every start. Without them,
/// the monitor holds exactly what was played, sample for sample (checked by correlating
/// with the file played).
///
/// - Out-of-process clients (`aplay`, `paplay`, `parec`, `earshot play`) find it through
///   `environment`.
/// - Code under test that opens ALSA (`default` or `pulse`) *inside the test process* uses
///   the ALSA pulse plugin, which reads `PULSE_SERVER` from the process environment, and
///   ALSA evaluates its `default` → pulse hook once, when it first loads its configuration.
///   So in-process audio tests must use `PulseAudioServer.shared()`, which is started before
///   anything else and exported with `setenv`; they must all share its one sink and monitor,
///   so they run one at a time through `withAudio { server in … }`.
///
/// The daemon runs under a watchdog that kills it with SIGKILL when its standard input
/// closes: on deinit, and also when the test process dies without running deinits.
public final class PulseAudioServer: Sendable {
    /// The server's runtime folder, also its HOME.
    public let directory: String
    /// The native protocol socket.
    public let socketPath: String
    /// `unix:SOCKET`, the value for `PULSE_SERVER`.
    public var address: String { "unix:" + socketPath }
    /// The null sink created at start, the default sink.
    public let sinkName: String
    /// That sink's rate and channel count.
    public let sampleRate: Int
    public let channels: Int
    /// The source that records what `sinkName` plays.
    public var monitorName: String { sinkName + ".monitor" }
    /// The environment for a client of this server: the test process's environment with
    /// `XDG_RUNTIME_DIR`, `HOME`, `PULSE_SERVER`, `PULSE_COOKIE` and `PULSE_CLIENTCONFIG`
    /// (autospawn off) pointing here, and `PULSE_SINK`/`PULSE_SOURCE` removed.
    public let environment: [String: String]
    /// The daemon's process id.
    public var pid: Int32 { watchdog.value.childPID }
    /// The server's log (warnings and errors).
    public var logPath: String { directory + "/pulseaudio.log" }

    private let watchdog: Locked<Watchdog>
    private let daemonEnvironment: [String: String]
    /// Whether the null sink rewinds (PulseAudio's default); false means `norewinds=1`.
    public let rewinds: Bool
    /// The loopback port of `module-native-protocol-tcp` (anonymous auth), when the server was
    /// started with `tcp: true`; kept across ``restart(timeout:)``.
    public let tcpPort: Int?
    /// `tcp:127.0.0.1:PORT`, the server's address over TCP, when it listens there.
    public var tcpAddress: String? { tcpPort.map { "tcp:127.0.0.1:\($0)" } }
    private let sinks = Locked<[Int: NullSink]>([:])

    private struct NullSink: Sendable {
        let name: String
        let sampleRate: Int
        let channels: Int
    }

    /// Starts a server and waits (up to `timeout` seconds) until `pactl info` answers.
    ///
    /// `rewinds: true` leaves the sink as PulseAudio makes it by default (real sinks rewind);
    /// with `sampleRate: 44100` that is PulseAudio at its defaults. `tcp: true` also loads
    /// `module-native-protocol-tcp` on a free loopback port (``tcpAddress``).
    public init(
        sinkName: String = "earshot_test", sampleRate: Int = 48000, channels: Int = 2, rewinds: Bool = false, tcp: Bool = false,
        timeout: Double = 10
    ) throws {
        try Self.validate(name: sinkName)
        let directory = try TemporaryDirectories.make("earshot-pa")
        self.directory = directory
        self.socketPath = directory + "/pulse/native"
        self.sinkName = sinkName
        self.sampleRate = sampleRate
        self.channels = channels
        let clientConfig = directory + "/client.conf"
        try "autospawn = no\ndefault-server = unix:\(directory)/pulse/native\n"
            .write(toFile: clientConfig, atomically: true, encoding: .utf8)

        var client = ProcessInfo.processInfo.environment
        client["XDG_RUNTIME_DIR"] = directory
        client["HOME"] = directory
        client["PULSE_SERVER"] = "unix:" + directory + "/pulse/native"
        client["PULSE_COOKIE"] = directory + "/.config/pulse/cookie"
        client["PULSE_CLIENTCONFIG"] = clientConfig
        client["PULSE_SINK"] = nil
        client["PULSE_SOURCE"] = nil
        self.environment = client

        // The daemon sees a minimal environment: no D-Bus session, no display.
        let daemonEnvironment = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": directory,
            "XDG_RUNTIME_DIR": directory,
            "LANG": "C",
        ]
        self.daemonEnvironment = daemonEnvironment
        self.rewinds = rewinds
        let tcpPort = tcp ? try Self.freeLoopbackPort() : nil
        self.tcpPort = tcpPort
        watchdog = Locked(try Self.startDaemon(directory: directory, sinkName: sinkName, sampleRate: sampleRate, channels: channels,
                                               rewinds: rewinds, tcpPort: tcpPort, environment: daemonEnvironment))
        try waitUntilAnswering(timeout: timeout, cleanUp: true)
    }

    private static func startDaemon(directory: String, sinkName: String, sampleRate: Int, channels: Int, rewinds: Bool,
                                    tcpPort: Int?, environment: [String: String]) throws -> Watchdog {
        let tcp = tcpPort.map { "module-native-protocol-tcp auth-anonymous=1 listen=127.0.0.1 port=\($0)" } ?? ""
        return try Watchdog(
            """
            exec pulseaudio -n --daemonize=no --use-pid-file=no --system=no \
              --exit-idle-time=-1 --disallow-exit --realtime=no --high-priority=no \
              --log-target=stderr --log-level=warning \
              --load="module-null-sink sink_name=$1 rate=$2 channels=$3 norewinds=$5" \
              \(tcpPort == nil ? "" : "--load=\"$6\" ")\
              --load="module-native-protocol-unix auth-anonymous=1" 2>>"$4"
            """,
            [sinkName, String(sampleRate), String(channels), directory + "/pulseaudio.log", rewinds ? "0" : "1", tcp],
            environment: environment)
    }

    /// A loopback TCP port free now (bound to port 0 and released; the daemon binds it
    /// with SO_REUSEADDR right after).
    private static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TestFailure("no free loopback port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Kills the daemon (SIGKILL: a crash, as far as its clients can tell) and starts a new
    /// one on the same socket, with the same sink; returns once it answers. Sinks loaded
    /// with `loadNullSink` are gone, as after a real restart.
    public func restart(timeout: Double = 10) throws {
        let old = watchdog.value
        kill(old.childPID, SIGKILL)
        old.stop()
        // The old daemon's socket file stays behind; the new one replaces it.
        sinks.withLock { $0 = [:] }
        watchdog.withLock {
            $0 = (try? Self.startDaemon(directory: directory, sinkName: sinkName, sampleRate: sampleRate, channels: channels,
                                        rewinds: rewinds, tcpPort: tcpPort, environment: daemonEnvironment)) ?? old
        }
        guard watchdog.value !== old else { throw TestFailure("pulseaudio could not be started again") }
        try waitUntilAnswering(timeout: timeout, cleanUp: false)
    }

    private func waitUntilAnswering(timeout: Double, cleanUp: Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if FileManager.default.fileExists(atPath: socketPath),
                let info = try? runSync("pactl", ["info"], environment: environment, timeout: 5), info.status == 0
            {
                break
            }
            if Date() > deadline {
                let log = (try? String(contentsOfFile: directory + "/pulseaudio.log", encoding: .utf8)) ?? ""
                if cleanUp {
                    watchdog.value.stop()
                    TemporaryDirectories.remove(directory)
                }
                throw TestFailure("pulseaudio did not answer within \(timeout) s; log: \(log)")
            }
            usleep(2_000)
        }
    }

    deinit {
        watchdog.value.stop()
        TemporaryDirectories.remove(directory)
    }

    // MARK: The shared in-process server

    private static let sharedServer = Locked<PulseAudioServer?>(nil)

    /// The one server for audio played *inside* the test process (by the engine through ALSA).
    ///
    /// Started on first use, it then exports `PULSE_SERVER`, `PULSE_COOKIE` and
    /// `PULSE_CLIENTCONFIG` into the test process's environment with `setenv`, so ALSA's
    /// pulse plugin (and its `default` hook) find it. This must happen before the process
    /// first opens any ALSA device: ALSA evaluates the hook that makes `default` mean
    /// `pulse` once, when it loads its configuration. It lives until the process exits
    /// (its watchdog then kills it). Use it through `withAudio`, which also keeps in-process
    /// audio tests from overlapping: they all play into the same sink.
    private static let sharedKeepAlive = Locked<Child?>(nil)

    /// The shared server's configuration, from `EARSHOT_TEST_SERVER`: unset or
    /// `pulseaudio-48k-norewinds` for 48 kHz without rewinds (the harness's usual sink, what
    /// a desktop's virtual sinks look like), `pulseaudio-defaults` for PulseAudio at its
    /// defaults (44.1 kHz, rewinds on: what real sinks look like). `scripts/test` runs the
    /// in-process real-time suites once with each.
    public static var sharedConfiguration: (sampleRate: Int, rewinds: Bool) {
        // `pipewire`: only suites that need PulseAudio itself reach this.
        (TestSoundServerKind.selected.sinkRate, TestSoundServerKind.selected == .pulseAudioDefaults)
    }

    public static func shared() throws -> PulseAudioServer {
        // Two shared servers in one process would fight over PULSE_SERVER.
        if PipeWireServer.isSharedServer {
            throw TestFailure("EARSHOT_TEST_SERVER=pipewire: this suite needs PulseAudio itself; run it without, or use withSharedAudio")
        }
        let result: Result<PulseAudioServer, any Error> = sharedServer.withLock { server in
            if let server { return .success(server) }
            do {
                let configuration = sharedConfiguration
                let created = try PulseAudioServer(sampleRate: configuration.sampleRate, rewinds: configuration.rewinds)
                setenv("PULSE_SERVER", created.address, 1)
                setenv("PULSE_COOKIE", created.environment["PULSE_COOKIE"]!, 1)
                setenv("PULSE_CLIENTCONFIG", created.environment["PULSE_CLIENTCONFIG"]!, 1)
                unsetenv("PULSE_SINK")
                unsetenv("PULSE_SOURCE")
                // An idle null sink sleeps in 2 s blocks, so a stream that starts (the engine
                // stops its stream between sounds) could stall that long; a silent
                // low-latency stream keeps the sink awake for the whole test process. It is
                // an event stream, which the arbiter never counts as another app's audio.
                sharedKeepAlive.withLock {
                    $0 = try? Child("pacat", ["--playback", "--latency-msec=10", "--property=media.role=event", "--format=float32le", "--rate=\(created.sampleRate)",
                                              "--channels=\(created.channels)", "--raw", "/dev/zero"], environment: created.environment)
                }
                server = created
                return .success(created)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    // MARK: Control

    /// Runs `pactl ARGUMENTS` against this server and returns its output; throws if it fails.
    @discardableResult
    public func pactl(_ arguments: String...) throws -> String {
        try pactl(arguments)
    }

    @discardableResult
    public func pactl(_ arguments: [String]) throws -> String {
        let result = try runSync("pactl", arguments, environment: environment)
        guard result.status == 0 else {
            throw TestFailure("pactl \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.stderr)")
        }
        return result.output
    }

    /// Loads another null sink (rate and channels default to the main sink's) and returns
    /// its module index. Loading it is like plugging in an output; it does not become the
    /// default sink by itself (see `setDefaultSink`).
    public func loadNullSink(name: String, sampleRate: Int? = nil, channels: Int? = nil) throws -> Int {
        try Self.validate(name: name)
        let rate = sampleRate ?? self.sampleRate
        let count = channels ?? self.channels
        let output = try pactl(
            "load-module", "module-null-sink", "sink_name=\(name)", "rate=\(rate)", "channels=\(count)", "norewinds=1")
        guard let index = Int(output) else { throw TestFailure("load-module printed “\(output)”") }
        sinks.withLock { $0[index] = NullSink(name: name, sampleRate: rate, channels: count) }
        return index
    }

    /// Unloads a module (for a null sink: like unplugging that output; its streams move to
    /// the default sink, or the next one).
    public func unloadModule(_ index: Int) throws {
        try pactl("unload-module", String(index))
        _ = sinks.withLock { $0.removeValue(forKey: index) }
    }

    /// Makes `name` the default sink. PulseAudio moves existing streams that were following
    /// the default to it.
    public func setDefaultSink(_ name: String) throws {
        try pactl("set-default-sink", name)
    }

    /// The current default sink's name.
    public func defaultSink() throws -> String {
        try pactl("get-default-sink")
    }

    /// A sink as `pactl list short sinks` shows it.
    public struct Sink: Sendable, Equatable {
        public let index: Int
        public let name: String
        /// For example `float32le 2ch 48000Hz`.
        public let sampleSpec: String
        /// `RUNNING`, `IDLE` or `SUSPENDED`.
        public let state: String
    }

    /// The server's sinks.
    public func listSinks() throws -> [Sink] {
        try pactl("list", "short", "sinks").split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 5, let index = Int(fields[0]) else { return nil }
            return Sink(index: index, name: fields[1], sampleSpec: fields[3], state: fields[4])
        }
    }

    /// A playback stream as `pactl list short sink-inputs` shows it.
    public struct SinkInput: Sendable, Equatable {
        public let index: Int
        /// The index of the sink it plays to.
        public let sink: Int
        public let sampleSpec: String

        /// The streams of `pactl list short sink-inputs`' output.
        public static func parse(shortList: String) -> [SinkInput] {
            shortList.split(separator: "\n").compactMap { line in
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                guard fields.count >= 5, let index = Int(fields[0]), let sink = Int(fields[1]) else { return nil }
                return SinkInput(index: index, sink: sink, sampleSpec: fields[4])
            }
        }
    }

    /// The playback streams now connected.
    public func listSinkInputs() throws -> [SinkInput] {
        SinkInput.parse(shortList: try pactl("list", "short", "sink-inputs"))
    }

    /// The rate and channel count of a null sink this server created (the main one or one
    /// from `loadNullSink`), or of any sink, asked of the server.
    public func format(ofSink name: String) throws -> (sampleRate: Int, channels: Int) {
        if name == sinkName { return (sampleRate, channels) }
        if let sink = sinks.value.values.first(where: { $0.name == name }) {
            return (sink.sampleRate, sink.channels)
        }
        guard let sink = try listSinks().first(where: { $0.name == name }) else {
            throw TestFailure("no sink named \(name)")
        }
        // `s16le 2ch 48000Hz`
        let parts = sink.sampleSpec.split(separator: " ")
        guard parts.count == 3, let count = Int(parts[1].dropLast(2)), let rate = Int(parts[2].dropLast(2)) else {
            throw TestFailure("unexpected sample spec “\(sink.sampleSpec)”")
        }
        return (rate, count)
    }

    /// Unloads the null sinks loaded with `loadNullSink` and makes the main sink the default
    /// again. `withAudio` calls this after each test.
    public func reset() throws {
        for index in sinks.value.keys.sorted() { try unloadModule(index) }
        try setDefaultSink(sinkName)
    }

    /// Sink names go into module arguments, so keep them plain.
    private static func validate(name: String) throws {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
        guard !name.isEmpty, name.allSatisfy({ allowed.contains($0) }) else {
            throw TestFailure("sink name “\(name)” must be letters, digits, “_”, “-” or “.”")
        }
    }
}
