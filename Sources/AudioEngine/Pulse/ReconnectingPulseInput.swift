import Platform
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A record stream on the sound server that outlives the server's restart: when the
/// connection is lost while capturing, it waits (on a thread of its own, without polling)
/// for the server's socket to be created again, opens a new stream on the same source (or
/// the default one) into the same ``CaptureBuffer``, and tells ``onResumed(_:)`` how long the
/// server was away. The capture clock goes on from the new stream's first fragment, so a
/// recording's file continues with no filler for the gap. When the server is not back within
/// `reconnectTimeout` seconds (or its socket is a file that cannot be watched), the buffer
/// fails as a plain ``PulseInput``'s would.
///
/// A server just started may not accept yet when its socket appears: an attempt that fails
/// right after the event is repeated up to 10 times, 50 ms apart, before waiting again.
///
/// A server reached over TCP (`tcp:HOST:PORT`) has no file to watch: while it is away the
/// thread tries again after a pause that doubles from 50 ms up to 1 s, until the server
/// answers or `reconnectTimeout` runs out. That is the only timer, and it exists only while
/// disconnected; ``close()`` wakes it at once.
///
/// `@unchecked Sendable`: the current stream is behind a mutex; `kind` is set in `init` only.
final class ReconnectingPulseInput: CaptureInput, @unchecked Sendable {
    private let address: String?
    private let device: String?
    private let identity: AudioEngine.StreamIdentity
    private let buffer: CaptureBuffer
    private let fragmentFrames: Int
    private let reconnectTimeout: Double
    /// The server's socket file, when it is one (a TCP server is tried again on a backoff).
    private let socketPath: String?
    /// Posted by ``close()``: wakes the reconnecting thread from a pause between attempts.
    private let closing = Semaphore()
    /// While reconnecting: the watch on the socket's folder (made then, so that an idle
    /// input holds no inotify instance).
    private let watch = Mutex<SocketFileWatch?>(nil)
    private let current = Mutex<PulseInput?>(nil)
    private let closed = Atomic<Bool>(false)
    private let resumed = Mutex<[@Sendable (Double) -> Void]>([])
    private(set) var kind: AudioEngine.InputKind
    /// Set by ``resume()``: streams opened from then on deliver at once.
    private let started = Atomic<Bool>(false)

    /// Opens the first stream, as ``PulseInput/init(server:device:identity:buffer:fragmentFrames:connectTimeout:onLost:)``.
    init(server address: String?, device: String?, identity: AudioEngine.StreamIdentity, buffer: CaptureBuffer,
         fragmentFrames: Int, reconnectTimeout: Double) throws(AudioEngineError) {
        self.address = address
        self.device = device
        self.identity = identity
        self.buffer = buffer
        self.fragmentFrames = fragmentFrames
        self.reconnectTimeout = reconnectTimeout.isFinite ? max(0, reconnectTimeout) : 0
        socketPath = SocketFileWatch.pulseSocket(server: address)
        kind = .alsa(device: "")
        let first = try open(connectTimeout: 3)
        kind = first.kind
        current.withLock { $0 = first }
    }

    deinit { close() }

    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        closing.signal()
        watch.withLock { $0 }?.cancel()
        current.withLock { input in
            defer { input = nil }
            return input
        }?.close()
    }

    func onResumed(_ handler: @escaping @Sendable (Double) -> Void) {
        resumed.withLock { $0.append(handler) }
    }

    /// Starts the stream (opened corked until then).
    func resume() {
        started.store(true, ordering: .releasing)
        current.withLock { $0 }?.resume()
    }

    private func open(connectTimeout: Double) throws(AudioEngineError) -> PulseInput {
        try PulseInput(server: address, device: device, identity: identity, buffer: buffer, fragmentFrames: fragmentFrames,
                       connectTimeout: connectTimeout, corked: !started.load(ordering: .acquiring),
                       onLost: { [weak self] reason in self?.lost(reason) })
    }

    /// libpulse's thread: the server went away. The old stream is closed from another thread
    /// (a main loop cannot be stopped from its own thread).
    private func lost(_ reason: String) {
        guard !closed.load(ordering: .acquiring) else { return }
        let since = MonotonicClock.seconds()
        do {
            try startThreadIfPossible(name: "earshot-reconn") { [self] in reconnect(reason: reason, since: since) }
        } catch {
            buffer.fail(reason)
        }
    }

    private func reconnect(reason: String, since: Double) {
        current.withLock { input in
            defer { input = nil }
            return input
        }?.close()
        let deadline = since + reconnectTimeout
        var quickRetries = 0
        var backoff = 0.05
        var waiting: SocketFileWatch?
        var why = ""
        defer { watch.withLock { $0 = nil } }
        while !closed.load(ordering: .acquiring) {
            let left = deadline - MonotonicClock.seconds()
            guard left > 0 else {
                why = " and did not come back within \(Self.seconds(reconnectTimeout))"
                break
            }
            if let input = try? open(connectTimeout: min(left, 2)) {
                let kept = current.withLock { slot -> Bool in
                    guard !closed.load(ordering: .acquiring) else { return false }
                    slot = input
                    return true
                }
                guard kept else {
                    input.close()
                    return
                }
                if started.load(ordering: .acquiring) { input.resume() }
                let gap = MonotonicClock.seconds() - since
                for handler in resumed.withLock({ $0 }) { handler(gap) }
                return
            }
            if quickRetries > 0 {
                quickRetries -= 1
                if closing.wait(seconds: 0.05) { return }
                continue
            }
            if socketPath == nil {
                // A TCP server: nothing to watch; try again after a pause (1 s at most).
                let pause = min(backoff, max(0, deadline - MonotonicClock.seconds()))
                backoff = min(backoff * 2, 1)
                if closing.wait(seconds: pause) { return }
                continue
            }
            guard let current = waiting else {
                // First failure: watch the socket's folder, then try once more (the server
                // may have come back before the watch was in place).
                guard let path = socketPath, let made = SocketFileWatch(path: path) else {
                    why = " (its socket \(socketPath ?? "") cannot be watched for its return)"
                    break
                }
                waiting = made
                watch.withLock { $0 = made }
                if closed.load(ordering: .acquiring) { return }
                continue
            }
            switch current.wait(seconds: deadline - MonotonicClock.seconds()) {
            case .created: quickRetries = 10
            case .cancelled: return
            case .timedOut: continue
            }
        }
        guard !closed.load(ordering: .acquiring) else { return }
        buffer.fail(reason + why)
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
