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
/// through the process's shared subscription to the server (source and server events,
/// ``PulseSubscriber``); event-driven, no polling.
///
/// The inputs are the sources that are not monitors, plus the default source when it is a
/// monitor (someone chose to record what plays). The default input comes first.
///
/// When the server goes away, the inputs become empty (handlers see it) and the
/// ``PulseSubscriber`` waits for the server's socket to be created again, then reconnects and
/// the monitor reads the inputs.
///
/// `@unchecked Sendable`: libpulse is used under its mainloop's lock or in its callbacks;
/// the results are kept under a mutex.
public final class InputMonitor: @unchecked Sendable {
    private let box: Box

    final class Box: @unchecked Sendable {
        // Mainloop thread (or under its lock) only.
        /// Set once by ``InputMonitor/init(server:timeout:)``, before it starts.
        var subscription: PulseSubscriber.Subscription!
        /// The first connection failed or was lost before the inputs were read.
        var failedBeforeReady = false
        var defaultSource: String?
        var collecting: [AudioInputPort] = []
        var pending = 0
        let inputs = Mutex<[AudioInputPort]>([])
        let handlers = Mutex<[@Sendable ([AudioInputPort]) -> Void]>([])
        let ready = Atomic<Bool>(false)
        /// How many times the monitor connected again after a loss (for tests).
        let reconnections = Atomic<Int>(0)
    }

    /// Connects to `server` (or libpulse's default) and reads the inputs once before returning.
    ///
    /// - Throws: ``RouteError`` when no server answers within `timeout` seconds.
    public init(server: String? = nil, timeout: Double = 3) throws(RouteError) {
        let box = Box()
        let mask = PA_SUBSCRIPTION_MASK_SOURCE.rawValue | PA_SUBSCRIPTION_MASK_SERVER.rawValue
        guard let subscription = PulseSubscriber.subscribe(server: server, mask: mask, handler: { [unowned box] event in
            InputMonitor.handle(event, box)
        }) else { throw RouteError.serverUnreachable(server: server ?? "default", reason: "cannot start libpulse's main loop") }
        box.subscription = subscription
        subscription.start()
        let loop = subscription.mainloop
        loop.lock()
        // A server that accepts and never answers: a deadline wakes the wait below.
        var passed = false
        let deadline = loop.timer(after: timeout) {
            passed = true
            loop.signal()
        }
        while !box.ready.load(ordering: .acquiring) {
            if box.failedBeforeReady || passed {
                deadline.cancel()
                loop.unlock()
                subscription.close()
                throw RouteError.serverUnreachable(server: server ?? "default", reason: "no sound server answered")
            }
            loop.wait()
        }
        deadline.cancel()
        loop.unlock()
        self.box = box
    }

    deinit { close() }

    /// Stops following the server.
    public func close() {
        box.subscription.close()
    }

    /// How many times the monitor connected again after losing the server.
    public var reconnections: Int { box.reconnections.load(ordering: .acquiring) }

    /// Mainloop thread: what the subscriber says. Any server event reads the inputs again; a
    /// loss empties them.
    private static func handle(_ event: PulseSubscriber.Event, _ box: Box) {
        let ready = box.ready.load(ordering: .acquiring)
        switch event {
        case .connected(let context):
            box.pending = 0
            if ready { box.reconnections.add(1, ordering: .releasing) }
            query(context.pointer, box)
        case .changed:
            guard let context = box.subscription.connectedContext else { return }
            query(context.pointer, box)
        case .lost where ready:
            box.collecting = []
            box.defaultSource = nil
            finish(box)
        case .attemptFailed, .lost:
            if !ready {
                box.failedBeforeReady = true
                box.subscription.mainloop.signal()
            }
        }
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
        let operation = box.subscription.track(pa_context_get_server_info(context, { context, info, userdata in
            guard let context, let userdata else { return }
            let box = Unmanaged<Box>.fromOpaque(userdata).takeUnretainedValue()
            box.defaultSource = info?.pointee.default_source_name.map { String(cString: $0) }
            box.collecting = []
            let listed = box.subscription.track(pa_context_get_source_info_list(context, { _, info, eol, userdata in
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
            }, userdata))
            if !listed { InputMonitor.finish(box) }
        }, userdata))
        if !operation { box.pending = 0 }
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
        box.subscription.mainloop.signal()
        if changed {
            for handler in box.handlers.withLock({ $0 }) { handler(chosen) }
        }
    }
}
