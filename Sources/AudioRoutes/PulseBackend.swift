internal import CPulse
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The sound-server side: a libpulse context on its own `pa_threaded_mainloop`, which works
/// with PulseAudio and with PipeWire's pulse server alike.
///
/// Threading: every libpulse call and every field below marked "main loop" happens on the
/// main-loop thread (in a libpulse callback) or with the main-loop lock held (`start`,
/// `close`). That is the invariant behind `@unchecked Sendable`. Results leave through
/// `emit`, which only enqueues them on the monitor's delivery queue: no user code ever runs
/// under the pulse lock.
///
/// What it does on the main loop:
/// - connects (no autospawn) and, when connected, subscribes to sink, server and card
///   events;
/// - coalesces events: the first one arms a 20 ms settle timer, further ones during it or
///   during the query are folded in; then it asks for the server info (the default sink)
///   and the sink list, and emits one `DeviceSnapshot`. Events that arrive while a query is
///   in flight make it query again before emitting (at most 5 times in a row);
/// - when the connection fails or is lost, emits that, drops the context and reconnects
///   with backoff (0.1 s doubling to 5 s) until closed;
/// - a connection attempt that is not ready within the connect timeout (a server that
///   accepts but never answers) counts as failed.
final class PulseBackend: @unchecked Sendable {
    enum Event: Sendable {
        case snapshot(DeviceSnapshot)
        /// A connection attempt failed (no server, refused, timed out).
        case connectFailed(RouteError)
        /// An established connection was lost (the server died).
        case disconnected(RouteError)
    }

    private let server: String?
    /// The server, for messages.
    let serverDescription: String
    private let connectTimeout: Double
    private let emit: @Sendable (Event) -> Void
    private let mainloop: OpaquePointer
    private let api: UnsafeMutablePointer<pa_mainloop_api>
    private let stopped = Atomic<Bool>(false)

    // Main loop.
    private var context: OpaquePointer?
    private var isConnected = false
    private var isClosed = false
    private var connectedServer: String?
    private var settleTimer: OpaquePointer?
    private var retryTimer: OpaquePointer?
    private var connectTimer: OpaquePointer?
    private var retryDelay = 0.1
    private var querying = false
    private var dirty = false
    private var deferrals = 0
    private var outstanding = 0
    private var queryFailed = false
    private var queryStart = ContinuousClock.now
    private var serverName = ""
    private var defaultSink: String?
    private var sinks: [SinkSnapshot] = []

    static let settleDelay = 0.02
    static let maxRetryDelay = 5.0

    init(server: String?, connectTimeout: Double, emit: @escaping @Sendable (Event) -> Void) throws(RouteError) {
        let description = server ?? Self.defaultServerDescription()
        if let server, server.allSatisfy(\.isWhitespace) || server.contains("\0") {
            throw .invalidServer(server)
        }
        guard let mainloop = pa_threaded_mainloop_new() else {
            throw .setupFailed(server: description, reason: "pa_threaded_mainloop_new failed")
        }
        guard let api = pa_threaded_mainloop_get_api(mainloop) else {
            pa_threaded_mainloop_free(mainloop)
            throw .setupFailed(server: description, reason: "pa_threaded_mainloop_get_api failed")
        }
        self.server = server
        self.serverDescription = description
        self.connectTimeout = connectTimeout
        self.emit = emit
        self.mainloop = mainloop
        self.api = api
    }

    /// Starts the main-loop thread and the first connection attempt; its outcome arrives
    /// through `emit`.
    func start() throws(RouteError) {
        pa_threaded_mainloop_set_name(mainloop, "earshot-routes")
        guard pa_threaded_mainloop_start(mainloop) >= 0 else {
            throw .setupFailed(server: serverDescription, reason: "cannot start the libpulse main-loop thread")
        }
        pa_threaded_mainloop_lock(mainloop)
        connect()
        pa_threaded_mainloop_unlock(mainloop)
    }

    /// Disconnects, stops and frees the main loop. Idempotent. Not from the main-loop thread
    /// (nothing of ours runs there but libpulse callbacks, which never call it).
    func close() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        precondition(pa_threaded_mainloop_in_thread(mainloop) == 0, "PulseBackend.close on its own thread")
        pa_threaded_mainloop_lock(mainloop)
        isClosed = true
        disarm(&retryTimer)
        dropContext()
        pa_threaded_mainloop_unlock(mainloop)
        pa_threaded_mainloop_stop(mainloop)
        pa_threaded_mainloop_free(mainloop)
    }

    deinit { close() }

    static func defaultServerDescription() -> String {
        if let env = getenv("PULSE_SERVER"), env.pointee != 0 { return String(cString: env) }
        return "the default server"
    }

    // MARK: Connection (main loop)

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func from(_ userdata: UnsafeMutableRawPointer?) -> PulseBackend {
        Unmanaged<PulseBackend>.fromOpaque(userdata!).takeUnretainedValue()
    }

    private func connect() {
        guard !isClosed, context == nil else { return }
        guard let ctx = pa_context_new(api, "Earshot route monitor") else {
            failAttempt(.setupFailed(server: serverDescription, reason: "pa_context_new failed"))
            return
        }
        context = ctx
        pa_context_set_state_callback(ctx, { ctx, userdata in
            PulseBackend.from(userdata).stateChanged(ctx)
        }, userdata)
        pa_context_set_subscribe_callback(ctx, { _, type, _, userdata in
            PulseBackend.from(userdata).serverEvent(type)
        }, userdata)
        let flags = PA_CONTEXT_NOAUTOSPAWN
        let rc: Int32
        if let server {
            rc = server.withCString { pa_context_connect(ctx, $0, flags, nil) }
        } else {
            rc = pa_context_connect(ctx, nil, flags, nil)
        }
        guard rc >= 0 else {
            // A failure found at once (no such socket) already went through the state
            // callback, which dropped the context (and freed it): nothing more to do.
            guard context == ctx else { return }
            let reason = Self.reason(ctx)
            dropContext()
            failAttempt(.serverUnreachable(server: serverDescription, reason: reason))
            return
        }
        connectTimer = arm(after: connectTimeout) { _, _, _, userdata in
            PulseBackend.from(userdata).connectTimedOut()
        }
    }

    private func stateChanged(_ ctx: OpaquePointer?) {
        guard let ctx, ctx == context else { return }
        let state = pa_context_get_state(ctx)
        if state == PA_CONTEXT_READY {
            disarm(&connectTimer)
            isConnected = true
            retryDelay = 0.1
            connectedServer = pa_context_get_server(ctx).map { String(cString: $0) }
            let mask = pa_subscription_mask_t(
                rawValue: PA_SUBSCRIPTION_MASK_SINK.rawValue | PA_SUBSCRIPTION_MASK_SERVER.rawValue
                    | PA_SUBSCRIPTION_MASK_CARD.rawValue)
            if let operation = pa_context_subscribe(ctx, mask, nil, nil) { pa_operation_unref(operation) }
            startQuery()
        } else if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED {
            let reason = Self.reason(ctx)
            let wasConnected = isConnected
            let location =
                connectedServer.map { serverDescription.contains($0) ? serverDescription : "\(serverDescription) (\($0))" }
                ?? serverDescription
            dropContext()
            if wasConnected {
                emit(.disconnected(.connectionLost(server: location, reason: reason)))
                scheduleRetry()
            } else {
                failAttempt(.serverUnreachable(server: serverDescription, reason: reason))
            }
        }
    }

    private func connectTimedOut() {
        connectTimer.map { api.pointee.time_free($0) }
        connectTimer = nil
        guard context != nil, !isConnected else { return }
        dropContext()
        failAttempt(.serverUnreachable(
            server: serverDescription, reason: "no answer within \(Self.format(connectTimeout)) s"))
    }

    private func failAttempt(_ error: RouteError) {
        emit(.connectFailed(error))
        scheduleRetry()
    }

    private func scheduleRetry() {
        guard !isClosed else { return }
        disarm(&retryTimer)
        retryTimer = arm(after: retryDelay) { _, _, _, userdata in
            let backend = PulseBackend.from(userdata)
            backend.retryTimer.map { backend.api.pointee.time_free($0) }
            backend.retryTimer = nil
            backend.connect()
        }
        retryDelay = min(retryDelay * 2, Self.maxRetryDelay)
    }

    /// Forgets the context (callbacks first, so that disconnecting reports nothing).
    private func dropContext() {
        disarm(&connectTimer)
        disarm(&settleTimer)
        querying = false
        dirty = false
        deferrals = 0
        outstanding = 0
        isConnected = false
        connectedServer = nil
        guard let ctx = context else { return }
        context = nil
        pa_context_set_state_callback(ctx, nil, nil)
        pa_context_set_subscribe_callback(ctx, nil, nil)
        pa_context_disconnect(ctx)
        pa_context_unref(ctx)
    }

    // MARK: Events and queries (main loop)

    private func serverEvent(_ type: pa_subscription_event_type_t) {
        let facility = type.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue
        guard facility == PA_SUBSCRIPTION_EVENT_SINK.rawValue || facility == PA_SUBSCRIPTION_EVENT_SERVER.rawValue
            || facility == PA_SUBSCRIPTION_EVENT_CARD.rawValue
        else { return }
        requestRefresh()
    }

    private func requestRefresh() {
        if querying {
            dirty = true
        } else if settleTimer == nil {
            settleTimer = arm(after: Self.settleDelay) { _, _, _, userdata in
                let backend = PulseBackend.from(userdata)
                backend.settleTimer.map { backend.api.pointee.time_free($0) }
                backend.settleTimer = nil
                backend.startQuery()
            }
        }
    }

    private func startQuery() {
        guard let ctx = context, isConnected, !querying else { return }
        querying = true
        dirty = false
        queryFailed = false
        queryStart = .now
        serverName = ""
        defaultSink = nil
        sinks = []
        outstanding = 2
        if let operation = pa_context_get_server_info(ctx, { _, info, userdata in
            PulseBackend.from(userdata).received(serverInfo: info)
        }, userdata) {
            pa_operation_unref(operation)
        } else {
            outstanding -= 1
            queryFailed = true
        }
        if let operation = pa_context_get_sink_info_list(ctx, { _, info, eol, userdata in
            PulseBackend.from(userdata).received(sinkInfo: info, eol: eol)
        }, userdata) {
            pa_operation_unref(operation)
        } else {
            outstanding -= 1
            queryFailed = true
        }
        finishQueryIfDone()
    }

    private func received(serverInfo info: UnsafePointer<pa_server_info>?) {
        guard querying else { return }
        if let info {
            serverName = info.pointee.server_name.map { String(cString: $0) } ?? "unknown"
            defaultSink = info.pointee.default_sink_name.map { String(cString: $0) }
        } else {
            queryFailed = true
        }
        outstanding -= 1
        finishQueryIfDone()
    }

    private func received(sinkInfo info: UnsafePointer<pa_sink_info>?, eol: Int32) {
        guard querying else { return }
        if eol != 0 {
            if eol < 0 { queryFailed = true }
            outstanding -= 1
            finishQueryIfDone()
        } else if let info {
            sinks.append(Self.sink(info.pointee))
        }
    }

    private func finishQueryIfDone() {
        guard querying, outstanding == 0 else { return }
        querying = false
        if queryFailed {
            // The context is probably going away; its state callback follows. If it is not,
            // ask again.
            if let ctx = context, pa_context_get_state(ctx) == PA_CONTEXT_READY { requestRefresh() }
            return
        }
        if dirty && deferrals < 5 {
            deferrals += 1
            dirty = false
            requestRefresh()
            return
        }
        deferrals = 0
        dirty = false
        emit(.snapshot(DeviceSnapshot(
            backend: .pulseAudio(serverName), defaultSink: defaultSink, sinks: sinks, time: queryStart)))
    }

    // MARK: Helpers

    private func arm(after seconds: Double, _ callback: pa_time_event_cb_t) -> OpaquePointer? {
        var tv = timeval()
        pa_gettimeofday(&tv)
        pa_timeval_add(&tv, pa_usec_t(max(0, seconds) * 1_000_000))
        return api.pointee.time_new(api, &tv, callback, userdata)
    }

    private func disarm(_ timer: inout OpaquePointer?) {
        if let event = timer { api.pointee.time_free(event) }
        timer = nil
    }

    private static func reason(_ ctx: OpaquePointer) -> String {
        pa_strerror(pa_context_errno(ctx)).map { String(cString: $0) } ?? "unknown error"
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }

    /// A sink's snapshot, with the types of it and its ports.
    static func sink(_ info: pa_sink_info) -> SinkSnapshot {
        let name = info.name.map { String(cString: $0) } ?? ""
        let driver = info.driver.map { String(cString: $0) }
        let properties = Self.properties(info.proplist)
        var ports: [PortSnapshot] = []
        if let list = info.ports {
            for index in 0..<Int(info.n_ports) {
                guard let port = list[index]?.pointee else { continue }
                let portName = port.name.map { String(cString: $0) } ?? ""
                let availability: PortAvailability =
                    switch UInt32(bitPattern: port.available) {
                    case PA_PORT_AVAILABLE_NO.rawValue: .no
                    case PA_PORT_AVAILABLE_YES.rawValue: .yes
                    default: .unknown
                    }
                ports.append(PortSnapshot(
                    name: portName,
                    description: port.description.map { String(cString: $0) } ?? portName,
                    availability: availability,
                    type: .pulse(properties: properties, driver: driver, portName: portName, portType: port.type)))
            }
        }
        return SinkSnapshot(
            name: name,
            description: info.description.map { String(cString: $0) } ?? name,
            channels: Int(info.channel_map.channels != 0 ? info.channel_map.channels : info.sample_spec.channels),
            type: .pulse(properties: properties, driver: driver, portName: nil, portType: nil),
            ports: ports,
            activePort: info.active_port.flatMap { $0.pointee.name.map { String(cString: $0) } })
    }

    private static func properties(_ list: OpaquePointer?) -> [String: String] {
        guard let list else { return [:] }
        var result: [String: String] = [:]
        var state: UnsafeMutableRawPointer?
        while let key = pa_proplist_iterate(list, &state) {
            if let value = pa_proplist_gets(list, key) {
                result[String(cString: key)] = String(cString: value)
            }
        }
        return result
    }
}
