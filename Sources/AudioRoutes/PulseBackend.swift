internal import CPulse
internal import PulseSupport

#if canImport(Glibc)
import Glibc
#endif

/// The sound-server side: a subscription to the process's shared libpulse connection to the
/// server (``PulseSubscriber``), which works with PulseAudio and with PipeWire's pulse server
/// alike.
///
/// Threading: every libpulse call and every field below marked "main loop" happens on the
/// main-loop thread (in a libpulse callback) or with the main-loop lock held (`close`). That
/// is the invariant behind `@unchecked Sendable`. Results leave through `emit`, which only
/// enqueues them on the monitor's delivery queue: no user code ever runs under the pulse lock.
///
/// What it does on the main loop:
/// - follows sink, server and card events;
/// - coalesces events: the first one arms a 20 ms settle timer, further ones during it or
///   during the query are folded in; then it asks for the server info (the default sink)
///   and the sink list, and emits one `DeviceSnapshot`. Events that arrive while a query is
///   in flight make it query again before emitting (at most 5 times in a row);
/// - when the connection fails or is lost, emits that; the subscriber reconnects until
///   closed, and an attempt that is not ready within the connect timeout (a server that
///   accepts but never answers) counts as failed.
final class PulseBackend: @unchecked Sendable {
    enum Event: Sendable {
        case snapshot(DeviceSnapshot)
        /// A connection attempt failed (no server, refused, timed out).
        case connectFailed(RouteError)
        /// An established connection was lost (the server died).
        case disconnected(RouteError)
    }

    /// The server, for messages.
    let serverDescription: String
    private let emit: @Sendable (Event) -> Void

    // Main loop.
    /// Set once at the end of init.
    private var subscription: PulseSubscriber.Subscription?
    private var settleTimer: PulseTimer?
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

    init(server: String?, connectTimeout: Double, emit: @escaping @Sendable (Event) -> Void) throws(RouteError) {
        let description = server ?? Self.defaultServerDescription()
        if let server, server.allSatisfy(\.isWhitespace) || server.contains("\0") {
            throw .invalidServer(server)
        }
        self.serverDescription = description
        self.emit = emit
        let mask = PA_SUBSCRIPTION_MASK_SINK.rawValue | PA_SUBSCRIPTION_MASK_SERVER.rawValue | PA_SUBSCRIPTION_MASK_CARD.rawValue
        subscription = PulseSubscriber.subscribe(server: server, mask: mask, connectTimeout: connectTimeout) { [unowned self] event in
            self.subscriberEvent(event)
        }
        guard let subscription else { throw .setupFailed(server: description, reason: "cannot start libpulse's main loop") }
        subscription.start()  // the outcome arrives through `emit`
    }

    /// Stops following the server (the last user of the connection closes it). Idempotent.
    /// Not from the main-loop thread (nothing of ours runs there but libpulse callbacks,
    /// which never call it).
    func close() {
        subscription?.close { resetQuery() }
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

    private func subscriberEvent(_ event: PulseSubscriber.Event) {
        switch event {
        case .connected:
            startQuery()
        case .changed:
            requestRefresh()
        case .attemptFailed(.setup(let reason)):
            resetQuery()
            emit(.connectFailed(.setupFailed(server: serverDescription, reason: reason)))
        case .attemptFailed(.unreachable(let reason)):
            resetQuery()
            emit(.connectFailed(.serverUnreachable(server: serverDescription, reason: reason)))
        case .lost(let reason, let address):
            resetQuery()
            let location = address.map { serverDescription.contains($0) ? serverDescription : "\(serverDescription) (\($0))" }
                ?? serverDescription
            emit(.disconnected(.connectionLost(server: location, reason: reason)))
        }
    }

    /// Forgets the query under way (its context is gone).
    private func resetQuery() {
        disarm(&settleTimer)
        querying = false
        dirty = false
        deferrals = 0
        outstanding = 0
    }

    // MARK: Events and queries (main loop)

    private func requestRefresh() {
        if querying {
            dirty = true
        } else if settleTimer == nil {
            settleTimer = subscription?.mainloop.timer(after: Self.settleDelay) { [unowned self] in
                self.settleTimer = nil
                self.startQuery()
            }
        }
    }

    private func startQuery() {
        guard let subscription, let ctx = subscription.connectedContext?.pointer, !querying else { return }
        querying = true
        dirty = false
        queryFailed = false
        queryStart = .now
        serverName = ""
        defaultSink = nil
        sinks = []
        outstanding = 2
        if !subscription.track(pa_context_get_server_info(ctx, { _, info, userdata in
            PulseBackend.from(userdata).received(serverInfo: info)
        }, userdata)) {
            outstanding -= 1
            queryFailed = true
        }
        if !subscription.track(pa_context_get_sink_info_list(ctx, { _, info, eol, userdata in
            PulseBackend.from(userdata).received(sinkInfo: info, eol: eol)
        }, userdata)) {
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
            if subscription?.connectedContext?.state == .ready { requestRefresh() }
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

    private func disarm(_ timer: inout PulseTimer?) {
        timer?.cancel()
        timer = nil
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
