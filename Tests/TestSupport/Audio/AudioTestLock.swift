import Foundation

/// Serializes tests that play audio inside the test process.
///
/// Code under test that opens ALSA in-process reaches the one shared server
/// (`PulseAudioServer.shared()`), so every such test plays into the same sink and records
/// the same monitor: two of them at once would hear each other. Swift Testing runs tests in
/// parallel, so they take this lock, through `withAudio`. A FIFO of waiters; not reentrant
/// by itself (`withAudio` handles nesting with a task-local flag).
public actor AudioTestLock {
    public static let shared = AudioTestLock()

    /// Whether the current task already holds the lock (set by `withAudio`).
    @TaskLocal static var isHeld = false

    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    public init() {}

    /// Waits until the lock is free and takes it.
    public func acquire() async {
        if !busy {
            busy = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Hands the lock to the next waiter, or frees it.
    public func release() {
        if waiters.isEmpty {
            busy = false
        } else {
            waiters.removeFirst().resume()
        }
    }
}

/// Runs an in-process audio test: starts the shared server if needed (before the body can
/// touch ALSA), waits for the other in-process audio tests to finish, waits (up to
/// `idleTimeout` seconds) until no playback stream from an earlier test is still connected,
/// runs `body`, then unloads sinks the body loaded and makes the main sink the default again.
///
/// ```swift
/// @Test func playsASine() async throws {
///     try await withAudio { server in
///         let capture = try Capture(server: server)
///         try await capture.start()
///         // … engine.play(…) through ALSA "default" …
///         let audio = try await capture.stop()
///         #expect(abs(audio.dominantFrequency(channel: 0)! - 1000) < 2)
///     }
/// }
/// ```
///
/// Nested calls in the same task run the inner body directly.
public func withAudio<T>(
    isolation: isolated (any Actor)? = #isolation,
    idleTimeout: Double = 2,
    _ body: (PulseAudioServer) async throws -> T
) async throws -> T {
    try await withAudioLock(on: PulseAudioServer.shared(), idleTimeout: idleTimeout, body)
}

/// The shared in-process server as suites that play and capture only (no PulseAudio
/// modules, no restarts) see it: PulseAudio, or PipeWire with `EARSHOT_TEST_SERVER=pipewire`.
public protocol SharedAudioServer: CapturableServer {
    /// The server's address, as `PULSE_SERVER` takes it.
    var address: String { get }
    /// The main sink's rate.
    var sampleRate: Int { get }
    /// The main sink's channels.
    var channels: Int { get }
    /// The playback streams now connected.
    func listSinkInputs() throws -> [PulseAudioServer.SinkInput]
    /// Undoes what a test changed on the server (its sinks, the default sink).
    func reset() throws
    /// Runs `pactl ARGUMENTS` against the server and returns its output; throws if it fails.
    @discardableResult
    func pactl(_ arguments: String...) throws -> String
}

/// ``withAudio(isolation:idleTimeout:_:)`` on the server `EARSHOT_TEST_SERVER` names:
/// PulseAudio (`pulseaudio-48k-norewinds`, the default, or `pulseaudio-defaults`) or
/// PipeWire (`pipewire`). `scripts/test` runs the app-level real-time suites once on each.
public func withSharedAudio<T>(
    isolation: isolated (any Actor)? = #isolation,
    idleTimeout: Double = 2,
    _ body: (any SharedAudioServer) async throws -> T
) async throws -> T {
    if PipeWireServer.isSharedServer {
        return try await withAudioLock(on: PipeWireServer.shared(), idleTimeout: idleTimeout, body)
    }
    return try await withAudioLock(on: PulseAudioServer.shared(), idleTimeout: idleTimeout, body)
}

private func withAudioLock<Server: SharedAudioServer, T>(
    isolation: isolated (any Actor)? = #isolation,
    on server: Server, idleTimeout: Double, _ body: (Server) async throws -> T
) async throws -> T {
    if AudioTestLock.isHeld { return try await body(server) }
    await AudioTestLock.shared.acquire()
    do {
        let deadline = Date().addingTimeInterval(idleTimeout)
        while try !server.listSinkInputs().isEmpty && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let result = try await AudioTestLock.$isHeld.withValue(true) { try await body(server) }
        try server.reset()
        await AudioTestLock.shared.release()
        return result
    } catch {
        try? server.reset()
        await AudioTestLock.shared.release()
        throw error
    }
}
