import Foundation

/// A sound server a ``Capture`` can record from: PulseAudio (``PulseAudioServer``) or
/// PipeWire through pipewire-pulse (``PipeWireServer``).
public protocol CapturableServer: Sendable {
    /// For `parec` and `pactl`: the server's address and runtime folder.
    var environment: [String: String] { get }
    /// The server's main sink.
    var sinkName: String { get }
    /// The sample rate and channel count of a sink.
    func format(ofSink name: String) throws -> (sampleRate: Int, channels: Int)
    /// The latency `parec` asks for, in ms.
    var captureLatencyMilliseconds: Int { get }
    /// Called once `parec` is connected: wakes a sink that would otherwise hold back the
    /// capture's first samples.
    func wakeIdleSink(_ name: String) throws
    /// The graph xruns the server has logged since it started (``PipeWireServer``); 0 for a
    /// server that logs none.
    func graphXrunCount() -> Int
}

extension CapturableServer {
    public func graphXrunCount() -> Int { 0 }
}

/// Records what a sink plays, from its monitor, with `parec` (float32le at the sink's rate
/// and channel count), from `start()` until `stop()`.
///
/// ```swift
/// let capture = try Capture(server: server)
/// try await capture.start()
/// _ = try await run("aplay", ["-q", "-D", "default", path], environment: server.environment)
/// let audio = try await capture.stop()
/// ```
///
/// `start()` returns once `parec` is delivering samples, so nothing played after it returns
/// is missed. (An idle PulseAudio null sink renders in blocks of up to 2 s and only notices a
/// new recording's low latency when its current block ends, so the first samples could take
/// up to 2 s; `start()` suspends and resumes the sink, when nothing plays to it, which
/// restarts its clock. The lag is then about 20–40 ms; see `startupLag`.)
/// `stop()` first waits until the samples rendered before it was called have arrived.
///
/// On PipeWire the capture is `parec` too, with a 100 ms latency: pipewire-pulse keeps what
/// the monitor delivers in its own buffer until `parec` reads it, so a capture process
/// that runs late on a loaded machine loses nothing. (`pw-record`, used before, drops whole
/// buffers when it is late: under two busy threads it lost 54–85 ms of a 1.15 s tone in 2
/// of 5 runs, while a `parec` beside it held the tone whole. `parec` at its default
/// fragment size loses about a third of the audio there; see FIELD-NOTES.)
public final class Capture: Sendable {
    public let server: any CapturableServer
    /// The sink recorded, and its monitor source.
    public let sinkName: String
    public var sourceName: String { sinkName + ".monitor" }
    public let sampleRate: Int
    public let channels: Int

    private let directory: String
    private var rawPath: String { directory + "/capture.raw" }
    private var logPath: String { directory + "/parec.log" }
    private let state = Locked(State())

    private struct State: Sendable {
        var watchdog: Watchdog?
        var launched: ContinuousClock.Instant?
        var startupLag: Double?
        /// The earliest estimate of when the first recorded sample was played.
        var origin: ContinuousClock.Instant?
        var stopped = false
        /// The server's graph xruns before the capture started.
        var xrunsBefore = 0
    }

    /// A capture of `sink` (default: the server's main sink).
    public init(server: any CapturableServer, sink: String? = nil) throws {
        self.server = server
        let name = sink ?? server.sinkName
        self.sinkName = name
        (sampleRate, channels) = try server.format(ofSink: name)
        directory = try TemporaryDirectories.make("earshot-cap")
    }

    deinit {
        state.value.watchdog?.stop()
        TemporaryDirectories.remove(directory)
    }

    /// Seconds from launching `parec` until its first samples arrived (set by `start()`).
    public var startupLag: Double? { state.value.startupLag }

    /// Starts `parec` and returns once samples arrive; throws if none arrive in `timeout` s.
    ///
    /// The waiting runs on a thread of its own, so that a busy cooperative thread pool (other
    /// tests crunching numbers) neither delays the sink's restart nor inflates `startupLag`.
    public func start(timeout: Double = 5) async throws {
        try await onThread { try self.startSynchronously(timeout: timeout) }
    }

    private func startSynchronously(timeout: Double) throws {
        let clock = ContinuousClock()
        let launched = clock.now
        let watchdog = try Watchdog(
            """
            exec parec -v -d "$1" --format=float32le --rate="$2" --channels="$3" --raw \
              --latency-msec="$6" >"$4" 2>"$5"
            """,
            [sourceName, String(sampleRate), String(channels), rawPath, logPath, String(server.captureLatencyMilliseconds)],
            environment: server.environment)
        let alreadyStarted = state.withLock { state -> Bool in
            if state.watchdog != nil { return true }
            state.watchdog = watchdog
            state.launched = launched
            return false
        }
        if alreadyStarted {
            watchdog.stop()
            throw TestFailure("Capture.start() called twice")
        }
        var kicked = false
        let deadline = launched + .seconds(timeout)
        while true {
            let size = fileSize(rawPath)
            if size > 0 {
                let now = clock.now
                observe(bytes: size, at: now)
                let xruns = server.graphXrunCount()
                state.withLock { ($0.startupLag, $0.xrunsBefore) = (seconds(now - launched), xruns) }
                return
            }
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if !kicked && log.contains("Connected to device") {
                kicked = true
                try server.wakeIdleSink(sinkName)
            }
            let lowered = log.lowercased()
            if lowered.contains("fail") || lowered.contains("error") || !watchdog.isRunning || clock.now > deadline {
                watchdog.stop()
                throw TestFailure("parec on \(sourceName) delivered nothing within \(timeout) s: \(log)")
            }
            usleep(500)
        }
    }

    /// The audio played before this call, without stopping: waits until it has been
    /// recorded (at most `drain` seconds), as ``stop(drain:)`` does. What the file held at
    /// the call lags what was played by the capture's latency (its fragments, and on a
    /// loaded machine the scheduling of `parec`), so a tail read at once could end before
    /// a sound that had started. (`quickResumeByUser`'s silent tail, which this was first
    /// taken for, turned out to be the player itself: see `playerWillStart(_:askedAfter:)`.)
    public func snapshot(drain: Double = 1) async throws -> CapturedAudio {
        guard state.value.watchdog != nil, !state.value.stopped else {
            throw TestFailure("Capture.snapshot() without a running capture")
        }
        try await awaitRecorded(drain: drain)
        return try read()
    }

    /// Waits until what was played before this call has been recorded (at most `drain`
    /// seconds), stops `parec` and returns the recording.
    public func stop(drain: Double = 1) async throws -> CapturedAudio {
        guard let watchdog = state.value.watchdog, !state.value.stopped else {
            throw TestFailure("Capture.stop() without a running capture")
        }
        try await awaitRecorded(drain: drain)
        watchdog.stop()
        state.withLock { $0.stopped = true }
        return try read()
    }

    /// Waits until the file holds everything played until now and 30 ms more, at most
    /// `drain` seconds: the frames since the first sample was played (`origin`, a late
    /// bound, so this never asks for more than was played). The file's size alone is not
    /// enough where samples come in large fragments: on PipeWire (100 ms) a capture cut at
    /// the next fragment lost up to 140 ms at its end.
    private func awaitRecorded(drain: Double) async throws {
        let clock = ContinuousClock()
        let margin = sampleRate * 30 / 1000
        var target = fileSize(rawPath) + bytesPerFrame * margin
        if let origin = state.value.origin {
            let played = seconds(clock.now - origin)
            target = max(target, bytesPerFrame * (Int(played * Double(sampleRate)) + margin))
        }
        let deadline = clock.now + .seconds(drain)
        while clock.now < deadline {
            let size = fileSize(rawPath)
            observe(bytes: size, at: clock.now)
            if size >= target { break }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Records while `body` runs: `start()`, `body()`, `stop()`.
    public func record(_ body: () async throws -> Void) async throws -> CapturedAudio {
        try await start()
        do {
            try await body()
        } catch {
            state.value.watchdog?.stop()
            throw error
        }
        return try await stop()
    }

    // MARK: Details

    private var bytesPerFrame: Int { 4 * channels }

    private func read() throws -> CapturedAudio {
        let data = try Data(contentsOf: URL(fileURLWithPath: rawPath))
        let count = data.count / bytesPerFrame * channels
        var samples = [Float](repeating: 0, count: count)
        samples.withUnsafeMutableBytes { destination in
            _ = data.copyBytes(to: destination, from: 0..<(count * 4))
        }
        let state = state.value
        var audio = CapturedAudio(
            samples: samples, sampleRate: sampleRate, channels: channels, origin: state.origin,
            startupLag: state.startupLag)
        audio.graphXruns = server.graphXrunCount() - state.xrunsBefore
        return audio
    }

    /// Samples arrive after they were played, never before: `now - duration` is a late bound
    /// on when the first one was played, so the smallest seen is the best estimate.
    private func observe(bytes: Int, at now: ContinuousClock.Instant) {
        guard bytes > 0 else { return }
        let frames = bytes / bytesPerFrame
        let origin = now - .nanoseconds(Int64(frames) * 1_000_000_000 / Int64(sampleRate))
        state.withLock { state in
            if state.origin.map({ origin < $0 }) ?? true { state.origin = origin }
        }
    }
}

/// Runs blocking work on a new thread and waits for it without holding a cooperative thread.
func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try work() })
        }
    }
}

func fileSize(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : 0
}

func seconds(_ duration: Duration) -> Double {
    let (s, attoseconds) = duration.components
    return Double(s) + Double(attoseconds) / 1e18
}

extension PulseAudioServer: SharedAudioServer {
    public var captureLatencyMilliseconds: Int { 10 }

    /// Restarts an idle null sink's clock at the latency `parec` asked for (see ``Capture``).
    /// Not while something plays: that would put a gap in its audio.
    public func wakeIdleSink(_ name: String) throws {
        if let sink = try listSinks().first(where: { $0.name == name }), sink.state != "RUNNING" {
            try pactl("suspend-sink", name, "1")
            try pactl("suspend-sink", name, "0")
        }
    }
}

extension PipeWireServer: CapturableServer {
    public var captureLatencyMilliseconds: Int { 100 }

    /// The cycles PipeWire logged as missed ("client too slow!", one line per late node,
    /// the cycle's position on each), counted once per cycle.
    public func graphXrunCount() -> Int {
        guard let log = try? String(contentsOfFile: directory + "/pipewire.log", encoding: .utf8) else { return 0 }
        var cycles = Set<Substring>()
        for line in log.split(separator: "\n") where line.contains("client too slow!") {
            if let pos = line.range(of: " pos:") { cycles.insert(line[pos.upperBound...].prefix { $0 != " " }) }
        }
        return cycles.count
    }

    /// PipeWire's null sink follows the graph's clock: nothing to wake.
    public func wakeIdleSink(_ name: String) throws {}
}
