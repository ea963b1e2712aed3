internal import CPulse
internal import PulseSupport
import Platform
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One input a recording can use: a source of the sound server (its active port when it has
/// ports), the analog of an `AVAudioSessionPortDescription` for inputs.
public struct AudioInputPort: Sendable, Hashable, CustomStringConvertible {
    /// The source's name, what ``AudioEngine``'s input choice takes (`alsa_input.usb-…`).
    public var name: String
    /// A human name: the active port's description ("Headset Microphone"), or the source's.
    public var portName: String
    /// The source's channel count.
    public var channels: Int
    /// Whether it is a sink's monitor (what is played, not a microphone).
    public var isMonitor: Bool

    /// An input port.
    public init(name: String, portName: String, channels: Int, isMonitor: Bool) {
        self.name = name
        self.portName = portName
        self.channels = channels
        self.isMonitor = isMonitor
    }

    /// “Headset Microphone [1 ch] (alsa_input.…)”.
    public var description: String { "\(portName) [\(channels) ch] (\(name))" }
}

/// The sound server's inputs and their changes: its sources and default source, followed
/// through libpulse's subscription (source and server events) on a `pa_threaded_mainloop`;
/// event-driven, no polling.
///
/// The inputs are the sources that are not monitors, plus the default source when it is a
/// monitor (someone chose to record what plays). The default input comes first.
///
/// When the server goes away, the inputs become empty (handlers see it) and the monitor
/// waits for the server's socket to be created again (inotify on its folder, read in the
/// same main loop), then reconnects and reads the inputs. A server just created may not
/// listen yet: an attempt right after the event that fails is repeated a few times, 50 ms
/// apart, and then waits for the next event. A server reached over TCP (`tcp:HOST:PORT`) has
/// no file to watch: after a loss the monitor tries again on a timer whose pause doubles
/// from 50 ms up to 2 s, for as long as the server is away (the timer exists only then).
///
/// `@unchecked Sendable`: libpulse is used under its mainloop's lock or in its callbacks;
/// the results are kept under a mutex.
public final class InputMonitor: @unchecked Sendable {
    private let box: Box
    private let closed = Atomic<Bool>(false)

    final class Box: @unchecked Sendable {
        let loop: PulseMainloop
        let server: String?
        /// The server's socket file, when it is one.
        let socketPath: String?
        /// While the server is away: the watch on the socket's folder (none while connected,
        /// so an idle monitor holds no inotify instance).
        var socket: SocketFileWatch?
        // Mainloop thread (or under its lock) only.
        var context: PulseContext?
        var lost: [PulseContext] = []
        var watching = false
        var watchEvent: OpaquePointer?
        var retries = 0
        /// A TCP server away: attempts run on a timer, this many microseconds apart next.
        var backoff: pa_usec_t = 0
        /// Set by ``InputMonitor/close()``: a timer still pending makes no new attempt.
        var closing = false
        var connected = false
        var defaultSource: String?
        var collecting: [AudioInputPort] = []
        var pending = 0
        let inputs = Mutex<[AudioInputPort]>([])
        let handlers = Mutex<[@Sendable ([AudioInputPort]) -> Void]>([])
        let ready = Atomic<Bool>(false)
        /// How many times the monitor connected again after a loss (for tests).
        let reconnections = Atomic<Int>(0)
        init(loop: PulseMainloop, server: String?) {
            self.loop = loop
            self.server = server
            socketPath = SocketFileWatch.pulseSocket(server: server)
        }
        /// The loop's `pa_mainloop_api`, for the socket watch.
        var api: UnsafeMutablePointer<pa_mainloop_api>? { pa_threaded_mainloop_get_api(loop.pointer) }
    }

    /// Connects to `server` (or libpulse's default) and reads the inputs once before returning.
    ///
    /// - Throws: ``RouteError`` when no server answers within `timeout` seconds.
    public init(server: String? = nil, timeout: Double = 3) throws(RouteError) {
        guard let loop = PulseMainloop(name: nil) else { throw RouteError.serverUnreachable(server: server ?? "default", reason: "pa_threaded_mainloop_new failed") }
        let box = Box(loop: loop, server: server)
        guard InputMonitor.connect(box) else {
            loop.stop()
            throw RouteError.serverUnreachable(server: server ?? "default", reason: "no sound server answered")
        }
        guard loop.start() else {
            box.context?.release()
            loop.stop()
            throw RouteError.serverUnreachable(server: server ?? "default", reason: "no sound server answered")
        }
        loop.lock()
        // A server that accepts and never answers: a deadline wakes the wait below.
        let deadline = box.context?.deadline(after: timeout)
        while !box.ready.load(ordering: .acquiring) {
            let state = box.context?.state ?? .failed
            if state.isOver || deadline?.passed == true {
                deadline?.cancel()
                box.context?.release()
                loop.unlock()
                loop.stop()
                throw RouteError.serverUnreachable(server: server ?? "default", reason: "no sound server answered")
            }
            loop.wait()
        }
        deadline?.cancel()
        loop.unlock()
        self.box = box
    }

    deinit { close() }

    /// Stops following the server.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        box.loop.lock()
        box.closing = true
        if let event = box.watchEvent { box.api?.pointee.io_free?(event) }
        box.watchEvent = nil
        box.watching = false
        box.socket = nil
        box.context?.release()
        box.context = nil
        for context in box.lost { context.release() }
        box.lost = []
        box.loop.unlock()
        box.loop.stop()
    }

    /// How many times the monitor connected again after losing the server.
    public var reconnections: Int { box.reconnections.load(ordering: .acquiring) }

    /// Mainloop thread (or before it runs): makes a context and starts connecting it.
    @discardableResult
    private static func connect(_ box: Box) -> Bool {
        let userdata = Unmanaged.passUnretained(box).toOpaque()
        guard let context = PulseContext(on: box.loop, name: "earshot inputs") else { return false }
        context.onStateChange { [unowned box] state in
            if state == .ready {
                box.connected = true
                box.retries = 0
                box.backoff = 0
                InputMonitor.unwatchSocket(box)
                pa_context_set_subscribe_callback(context.pointer, { context, _, _, userdata in
                    guard let context, let userdata else { return }
                    InputMonitor.query(context, Unmanaged<Box>.fromOpaque(userdata).takeUnretainedValue())
                }, userdata)
                let mask = pa_subscription_mask_t(rawValue: PA_SUBSCRIPTION_MASK_SOURCE.rawValue | PA_SUBSCRIPTION_MASK_SERVER.rawValue)
                if let operation = pa_context_subscribe(context.pointer, mask, nil, nil) { pa_operation_unref(operation) }
                box.pending = 0
                if box.ready.load(ordering: .acquiring) { box.reconnections.add(1, ordering: .releasing) }
                InputMonitor.query(context.pointer, box)
            } else if state.isOver, box.ready.load(ordering: .acquiring) {
                InputMonitor.lose(box)
            }
        }
        box.context = context
        if !context.connect(server: box.server) {
            // Unless the state callback already did, treat the context as lost here.
            if box.ready.load(ordering: .acquiring) {
                if box.context === context { lose(box) }
                return true
            }
            box.context = nil
            context.release()
            return false
        }
        return true
    }

    /// Mainloop thread: the connection failed or was lost. The inputs are gone; the context
    /// is kept until the next attempt (it cannot be freed inside its own callback).
    private static func lose(_ box: Box) {
        guard let context = box.context else { return }
        context.detach()
        box.lost.append(context)
        box.context = nil
        let wasConnected = box.connected
        box.connected = false
        if wasConnected {
            box.collecting = []
            box.defaultSource = nil
            finish(box)
        }
        // First loss: watch the socket's folder, then try once (the server may be back
        // already); later failures wait for the socket to be created.
        // (Attempts run from a timer: not inside the lost context's own callback.)
        var delay: pa_usec_t?
        if box.socketPath == nil {
            // A TCP server: at once after the loss, then after pauses from 50 ms up to 2 s.
            delay = box.backoff
            box.backoff = box.backoff == 0 ? 50_000 : min(box.backoff * 2, 2_000_000)
        } else if box.socket == nil {
            watchSocket(box)
            if box.watching { delay = 0 }
        } else if box.retries > 0 {
            // Right after an event a new server may not listen yet: a few more tries.
            box.retries -= 1
            delay = 50_000
        }
        if let delay {
            _ = box.loop.timer(after: Double(delay) / 1e6) { [unowned box] in InputMonitor.attempt(box) }
        }
    }

    /// Mainloop thread: one connection attempt, unless connected or connecting.
    private static func attempt(_ box: Box) {
        guard !box.closing, box.context == nil, box.watching || box.socketPath == nil else { return }
        for context in box.lost { context.release() }
        box.lost = []
        connect(box)
    }

    /// Mainloop thread: stops watching (connected again).
    private static func unwatchSocket(_ box: Box) {
        if let event = box.watchEvent { box.api?.pointee.io_free?(event) }
        box.watchEvent = nil
        box.watching = false
        box.socket = nil
    }

    /// Mainloop thread: watches the socket's folder, its events read in the main loop.
    private static func watchSocket(_ box: Box) {
        guard let path = box.socketPath, let socket = SocketFileWatch(path: path) else { return }
        box.socket = socket
        let userdata = Unmanaged.passUnretained(box).toOpaque()
        box.watchEvent = box.api?.pointee.io_new?(box.api, socket.descriptor, PA_IO_EVENT_INPUT, { _, _, _, _, userdata in
            guard let userdata else { return }
            let box = Unmanaged<Box>.fromOpaque(userdata).takeUnretainedValue()
            guard box.socket?.drainNamesSocket() == true, box.context == nil else { return }
            box.retries = 10
            InputMonitor.attempt(box)
        }, userdata)
        box.watching = box.watchEvent != nil
    }

    /// The inputs now, the default first.
    public var inputs: [AudioInputPort] { box.inputs.withLock { $0 } }

    /// Calls `handler` (on libpulse's thread; keep it short) with the inputs whenever they change.
    public func onChange(_ handler: @escaping @Sendable ([AudioInputPort]) -> Void) {
        box.handlers.withLock { $0.append(handler) }
    }

    /// Mainloop thread: asks for the default source, then the source list.
    private static func query(_ context: OpaquePointer, _ box: Box) {
        guard box.pending == 0 else { return }
        box.pending = 1
        let userdata = Unmanaged.passUnretained(box).toOpaque()
        let operation = pa_context_get_server_info(context, { context, info, userdata in
            guard let context, let userdata else { return }
            let box = Unmanaged<Box>.fromOpaque(userdata).takeUnretainedValue()
            box.defaultSource = info?.pointee.default_source_name.map { String(cString: $0) }
            box.collecting = []
            let list = pa_context_get_source_info_list(context, { _, info, eol, userdata in
                guard let userdata else { return }
                let box = Unmanaged<Box>.fromOpaque(userdata).takeUnretainedValue()
                if eol == 0, let info = info?.pointee {
                    let name = info.name.map { String(cString: $0) } ?? ""
                    let port = info.active_port.flatMap { $0.pointee.description.map { String(cString: $0) } }
                    let described = port ?? info.description.map { String(cString: $0) } ?? name
                    box.collecting.append(AudioInputPort(name: name, portName: described, channels: Int(info.channel_map.channels),
                                                         isMonitor: info.monitor_of_sink != UInt32.max))
                    return
                }
                InputMonitor.finish(box)
            }, userdata)
            if let list { pa_operation_unref(list) } else { InputMonitor.finish(box) }
        }, userdata)
        if let operation { pa_operation_unref(operation) } else { box.pending = 0 }
    }

    private static func finish(_ box: Box) {
        box.pending = 0
        let chosen = box.collecting.filter { !$0.isMonitor || $0.name == box.defaultSource }
            .sorted { ($0.name == box.defaultSource ? 0 : 1) < ($1.name == box.defaultSource ? 0 : 1) }
        let changed = box.inputs.withLock { inputs -> Bool in
            defer { inputs = chosen }
            return inputs != chosen
        }
        box.ready.store(true, ordering: .releasing)
        box.loop.signal()
        if changed {
            for handler in box.handlers.withLock({ $0 }) { handler(chosen) }
        }
    }
}
