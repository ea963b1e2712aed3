// What a backend saw (a snapshot) and the reason rules that turn two snapshots into a route
// change. Pure values: the rules are unit-tested with synthetic snapshots, including the
// jack cases that a machine without a sound card cannot produce.

/// A port's availability, as PulseAudio reports it (`pa_port_available`), or as an ALSA jack
/// (plugged → `.yes`, unplugged → `.no`).
enum PortAvailability: Sendable, Hashable {
    case unknown, no, yes
}

/// One port of an output device.
struct PortSnapshot: Sendable, Hashable {
    var name: String
    var description: String
    var availability: PortAvailability
    var type: AudioPort.PortType
}

/// One output device: a sink, or an ALSA card.
struct SinkSnapshot: Sendable, Hashable {
    var name: String
    var description: String
    var channels: Int
    /// The type when the device has no ports.
    var type: AudioPort.PortType
    var ports: [PortSnapshot]
    var activePort: String?
}

/// Everything a backend knows at one moment.
struct DeviceSnapshot: Sendable {
    var backend: RouteMonitor.Backend
    var defaultSink: String?
    var sinks: [SinkSnapshot]
    /// When the backend looked (the start of the query round).
    var time: ContinuousClock.Instant

    static func empty(at time: ContinuousClock.Instant = .now) -> DeviceSnapshot {
        DeviceSnapshot(backend: .none, defaultSink: nil, sinks: [], time: time)
    }

    /// The output in use and the route it makes.
    var resolved: (key: RouteKey?, route: AudioRoute) {
        guard let defaultSink, let sink = sinks.first(where: { $0.name == defaultSink }) else {
            return (nil, .empty)
        }
        if let active = sink.activePort, let port = sink.ports.first(where: { $0.name == active }) {
            // An active port that is unplugged plays to nobody: the route is empty until the
            // server (or the jack logic) moves to another port, or it is plugged again.
            guard port.availability != .no else { return (nil, .empty) }
            let output = AudioPort(
                name: sink.name + ":" + port.name, portName: port.description, type: port.type,
                channels: sink.channels)
            return (RouteKey(sink: sink.name, port: port.name), AudioRoute(outputs: [output]))
        }
        let output = AudioPort(name: sink.name, portName: sink.description, type: sink.type, channels: sink.channels)
        return (RouteKey(sink: sink.name, port: nil), AudioRoute(outputs: [output]))
    }

    func sink(named name: String) -> SinkSnapshot? { sinks.first { $0.name == name } }
}

/// The sink and port a route plays to.
struct RouteKey: Sendable, Hashable {
    var sink: String
    var port: String?
}

/// Turns a stream of snapshots into route changes, with Apple's reasons.
///
/// The rules, comparing the route before and after one coalesced burst of events:
/// - No change of route → no event (a sink added that does not become the default, a
///   volume change, a port change on another sink).
/// - The new route is empty → `oldDeviceUnavailable` (the default sink removed with nothing
///   to fall back to, the server gone, the active port unplugged).
/// - The old route was empty → `newDeviceAvailable` (a device came, or came back).
/// - The sink or port in use disappeared or became unavailable → `oldDeviceUnavailable`
///   (unloading the default sink: the server falls back to another one; unplugging the
///   headphones: the server switches to the speaker).
/// - The new sink or port appeared, or became available, in this burst or within
///   `newDeviceWindow` before it became the route → `newDeviceAvailable` (plugging in; a new
///   sink made the default by module-switch-on-connect, or by whoever loaded it, at once).
/// - Otherwise the route moved to something that was already there → `override` (the user
///   or an app chose another sink or port).
/// - Both routes non-empty but from different backends (the server came up while ALSA
///   jacks were watched) → `unknown`.
/// - Same sink and port, something else about it changed (description, channels) →
///   `unknown`.
struct RouteTracker: Sendable {
    let newDeviceWindow: Duration
    private(set) var snapshot: DeviceSnapshot?
    private(set) var route: AudioRoute = .empty
    private var key: RouteKey?
    /// When each sink appeared (absent: it was there when tracking began, or long ago).
    private var sinkAppeared: [String: ContinuousClock.Instant] = [:]
    /// When each port ("sink:port") became available (absent: it has been for long, or is not).
    private var portAppeared: [String: ContinuousClock.Instant] = [:]

    init(newDeviceWindow: Duration = .seconds(1)) {
        self.newDeviceWindow = newDeviceWindow
    }

    /// Takes the next snapshot; returns the change it makes, or nil when the route is the
    /// same (or this is the first snapshot, the baseline).
    mutating func update(_ next: DeviceSnapshot) -> RouteChange? {
        let (nextKey, nextRoute) = next.resolved
        guard let previous = snapshot else {
            snapshot = next
            route = nextRoute
            key = nextKey
            return nil
        }
        record(from: previous, to: next)
        let previousRoute = route
        let previousKey = key
        snapshot = next
        route = nextRoute
        key = nextKey
        guard nextRoute != previousRoute else { return nil }
        let reason = classify(previous: previous, previousKey: previousKey, next: next, nextKey: nextKey)
        return RouteChange(reason: reason, previousRoute: previousRoute, currentRoute: nextRoute)
    }

    /// Updates when sinks appeared and ports became available.
    private mutating func record(from previous: DeviceSnapshot, to next: DeviceSnapshot) {
        let before = Dictionary(previous.sinks.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let names = Set(next.sinks.map(\.name))
        sinkAppeared = sinkAppeared.filter { names.contains($0.key) }
        var ports: Set<String> = []
        for sink in next.sinks {
            let old = before[sink.name]
            if old == nil { sinkAppeared[sink.name] = next.time }
            for port in sink.ports {
                let id = sink.name + ":" + port.name
                ports.insert(id)
                let wasAvailable = old?.ports.first(where: { $0.name == port.name }).map { $0.availability != .no }
                if port.availability == .no {
                    portAppeared[id] = nil
                } else if wasAvailable != true {
                    portAppeared[id] = next.time
                }
            }
        }
        portAppeared = portAppeared.filter { ports.contains($0.key) }
        // Forget what is older than the window, so that the maps stay small.
        let horizon = next.time - newDeviceWindow
        sinkAppeared = sinkAppeared.filter { $0.value >= horizon }
        portAppeared = portAppeared.filter { $0.value >= horizon }
    }

    private func isNew(sink: String, at time: ContinuousClock.Instant) -> Bool {
        guard let appeared = sinkAppeared[sink] else { return false }
        return time - appeared <= newDeviceWindow
    }

    private func isNew(port: String, of sink: String, at time: ContinuousClock.Instant) -> Bool {
        guard let appeared = portAppeared[sink + ":" + port] else { return false }
        return time - appeared <= newDeviceWindow
    }

    private func classify(
        previous: DeviceSnapshot, previousKey: RouteKey?, next: DeviceSnapshot, nextKey: RouteKey?
    ) -> RouteChangeReason {
        guard let nextKey else { return .oldDeviceUnavailable }
        guard let previousKey else { return .newDeviceAvailable }
        // The sound server came (or went) while a card was reachable: the same hardware,
        // seen another way.
        if previous.backend.isServer != next.backend.isServer { return .unknown }

        // Is what we played to gone, or unplugged?
        if let sink = next.sink(named: previousKey.sink) {
            if let portName = previousKey.port {
                let port = sink.ports.first { $0.name == portName }
                if port == nil || port?.availability == .no { return .oldDeviceUnavailable }
            }
        } else {
            return .oldDeviceUnavailable
        }

        if previousKey.sink == nextKey.sink && previousKey.port == nextKey.port {
            return .routeConfigurationChange
        }
        // Did we move to something that just arrived?
        if previousKey.sink != nextKey.sink && isNew(sink: nextKey.sink, at: next.time) {
            return .newDeviceAvailable
        }
        if let port = nextKey.port, isNew(port: port, of: nextKey.sink, at: next.time) {
            return .newDeviceAvailable
        }
        return .override
    }
}

extension RouteMonitor.Backend {
    var isServer: Bool {
        if case .pulseAudio = self { true } else { false }
    }
}
