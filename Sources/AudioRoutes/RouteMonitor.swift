import Dispatch
import Synchronization

/// Watches the output route and reports its changes: the analog of
/// `AVAudioSession.currentRoute` and `routeChangeNotification`.
///
/// Where the route comes from:
/// - **A sound server** (PulseAudio, or PipeWire's pulse server) through libpulse: the
///   default sink and its active port, over the process's one connection to the server
///   (shared with its other watchers, on its own threaded main loop); a burst
///   of sink, server and card events is coalesced (20 ms) into one query of the server info
///   and the sink list, and the route is compared before and after (see `RouteTracker` for
///   the reason rules).
/// - **ALSA jack controls**, when no server answers: every card's `… Jack` controls, watched
///   on a thread (see `ALSAJackRoutes` for the route logic). While on ALSA, the server
///   connection is retried in the background; when it answers, the server takes over.
/// - **Nothing**: no server and no card. The route is empty and `backend` is `.none`; that
///   is a state, not an error.
///
/// When an established server connection is lost (the server died), the monitor reports
/// `oldDeviceUnavailable` to the ALSA route (empty without cards), keeps the reason in
/// `lastError`, and reconnects with backoff (0.1 s doubling to 5 s); when the server is back,
/// `newDeviceAvailable`.
///
/// `onChange` runs on the monitor's own serial queue, one change at a time, in order, and
/// never with a libpulse lock held; `currentRoute` already holds the new route when it runs.
/// No callback starts after `close()` returns (when `close()` is called from inside
/// `onChange`, the running one finishes and no other follows).
///
/// Reasons (Apple's meanings), from the route before and after each burst:
/// - the route moved to a sink that appeared in the same burst or at most `newDeviceWindow`
///   (1 s) earlier, or to a port that just became available (headphones plugged) →
///   `newDeviceAvailable`; so is the route coming back from empty (server restarted);
/// - the sink or port in use disappeared or became unavailable (default sink unloaded,
///   headphones unplugged, server died) → `oldDeviceUnavailable`, with the fallback route
///   (or the empty one);
/// - the default sink or active port switched to one that was already there →
///   `override`;
/// - same output, other description or channel count, or the server taking over from ALSA
///   jacks → `unknown`; `categoryChange` only through `reportCategoryChange()`.
///
/// A sink that is added without becoming the default changes nothing for the app, so, as on
/// iOS, it sends no notification. PulseAudio's module-switch-on-connect (and PipeWire's
/// equivalent policy) make a new device the default at once: that is `newDeviceAvailable`.
/// A sink loaded and made the default by hand more than `newDeviceWindow` later is a choice:
/// `override`.
public final class RouteMonitor: Sendable {
    /// Where the route comes from.
    public enum Backend: Sendable, Hashable, CustomStringConvertible {
        /// A sound server through libpulse, with the name it reports: `pulseaudio`, or
        /// `PulseAudio (on PipeWire 1.0.5)` for PipeWire's pulse server.
        case pulseAudio(String)
        /// ALSA jack controls (no server answered; at least one card).
        case alsaJacks
        /// Nothing to watch: no server and no card.
        case none

        public var description: String {
            switch self {
            case .pulseAudio(let name): "sound server “\(name)”"
            case .alsaJacks: "ALSA jack controls"
            case .none: "none"
            }
        }
    }

    private let core: RouteCore
    private let pulse: PulseBackend

    /// Connects to the default sound server (`PULSE_SERVER`, client.conf's default-server,
    /// or the user's runtime socket), falling back to ALSA jack controls.
    public convenience init(onChange: @escaping @Sendable (RouteChange) -> Void) throws(RouteError) {
        try self.init(server: nil, onChange: onChange)
    }

    /// Connects to `server` (a pulse server string such as `unix:/run/user/1000/pulse/native`
    /// or `tcp:host:4713`; nil for the default) and reads the current route before returning.
    /// It blocks the calling thread for that: a few milliseconds with a local server, at
    /// most `connectTimeout` when a server accepts and never answers.
    ///
    /// - Parameters:
    ///   - fallbackToALSA: when no server answers, watch ALSA jack controls (or nothing)
    ///     instead of throwing. When false, an unreachable server throws
    ///     `RouteError.serverUnreachable`, and a lost connection empties the route.
    ///   - newDeviceWindow: how recently a sink must have appeared (or a port become
    ///     available) for a route moving to it to count as `newDeviceAvailable` rather than
    ///     `override`.
    ///   - connectTimeout: how long a connection attempt may take.
    /// - Throws: `RouteError` when libpulse cannot be set up, the server string is empty, or
    ///   (without fallback) the server does not answer.
    public init(
        server: String?,
        fallbackToALSA: Bool = true,
        newDeviceWindow: Duration = .seconds(1),
        connectTimeout: Duration = .seconds(3),
        onChange: @escaping @Sendable (RouteChange) -> Void
    ) throws(RouteError) {
        let timeout = Self.seconds(connectTimeout)
        let core = RouteCore(fallbackToALSA: fallbackToALSA, newDeviceWindow: newDeviceWindow, onChange: onChange)
        let pulse = try PulseBackend(server: server, connectTimeout: timeout) { [core] event in
            core.queue.async { core.handle(event) }
        }
        self.core = core
        self.pulse = pulse
        guard core.waitUntilReady(timeout: timeout + 2) else {
            throw core.initFailure
                ?? .setupFailed(server: pulse.serverDescription, reason: "no route within \(Int(timeout + 2)) s")
        }
    }

    deinit { close() }

    /// The outputs audio goes to now.
    public var currentRoute: AudioRoute { core.currentRoute }

    /// Where the route comes from now.
    public var backend: Backend { core.backend }

    /// Why the sound server is not the backend, when it is not, naming the server and the
    /// reason: the lost connection (kept while reconnection attempts fail), or the last failed
    /// connection attempt when it never connected. Nil while connected.
    public var lastError: RouteError? { core.lastError }

    /// Emits a `categoryChange` with the current route as both previous and current route
    /// (for the session layer, when the app's category changes), in order with the other
    /// changes.
    public func reportCategoryChange() {
        core.reportCategoryChange()
    }

    /// Disconnects and stops watching. Idempotent; returns promptly even if the server
    /// hangs or died.
    public func close() {
        core.close(pulse: pulse)
    }

    /// The names of the sinks (or cards) the monitor knows of, for tests.
    var knownOutputDevices: [String] { core.knownOutputDevices }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return max(0.1, Double(seconds) + Double(attoseconds) / 1e18)
    }
}

/// The monitor's state and its delivery queue. Everything that changes the route runs on
/// `queue`; the state behind the mutex is what other threads read.
final class RouteCore: Sendable {
    let queue = DispatchQueue(label: "earshot.routes.delivery")
    private let fallbackToALSA: Bool
    private let onChange: @Sendable (RouteChange) -> Void
    private let ready = DispatchSemaphore(value: 0)
    private let state: Mutex<State>
    private let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    private struct State: Sendable {
        var tracker: RouteTracker
        var backend: RouteMonitor.Backend = .none
        var lastError: RouteError?
        var initialized = false
        var initFailure: RouteError?
        var closed = false
        var pulseUp = false
        var alsa: ALSAJackWatcher?
        var alsaGeneration = 0
    }

    init(fallbackToALSA: Bool, newDeviceWindow: Duration, onChange: @escaping @Sendable (RouteChange) -> Void) {
        self.fallbackToALSA = fallbackToALSA
        self.onChange = onChange
        state = Mutex(State(tracker: RouteTracker(newDeviceWindow: newDeviceWindow)))
        queue.setSpecific(key: queueKey, value: ObjectIdentifier(self))
    }

    var currentRoute: AudioRoute { state.withLock { $0.tracker.route } }
    var backend: RouteMonitor.Backend { state.withLock { $0.backend } }
    var lastError: RouteError? { state.withLock { $0.lastError } }
    var initFailure: RouteError? { state.withLock { $0.initFailure } }
    var knownOutputDevices: [String] { state.withLock { $0.tracker.snapshot?.sinks.map(\.name) ?? [] } }

    /// Waits until the first route is known (or the first attempt failed without fallback).
    func waitUntilReady(timeout: Double) -> Bool {
        _ = ready.wait(timeout: .now() + timeout)
        return state.withLock { $0.initialized }
    }

    // MARK: On the queue

    func handle(_ event: PulseBackend.Event) {
        switch event {
        case .snapshot(let snapshot):
            let watcher = state.withLock { state -> ALSAJackWatcher? in
                state.pulseUp = true
                state.lastError = nil
                defer { state.alsa = nil }
                return state.alsa
            }
            watcher?.stop()
            apply(snapshot)
        case .connectFailed(let error):
            let initialized = state.withLock { state in
                // A lost connection stays the reason while reconnection attempts fail.
                if case .connectionLost = state.lastError {} else { state.lastError = error }
                return state.initialized
            }
            if !initialized { fallBack(error) }
        case .disconnected(let error):
            state.withLock { state in
                state.lastError = error
                state.pulseUp = false
            }
            fallBack(error)
        }
    }

    /// No server: watch ALSA jacks (or nothing), or without fallback, fail or empty the route.
    private func fallBack(_ error: RouteError) {
        guard fallbackToALSA else {
            let initialized = state.withLock { state in
                if !state.initialized { state.initFailure = error }
                return state.initialized
            }
            if initialized { apply(.empty()) } else { ready.signal() }
            return
        }
        let (generation, old) = state.withLock { state in
            state.alsaGeneration += 1
            defer { state.alsa = nil }
            return (state.alsaGeneration, state.alsa)
        }
        old?.stop()
        let watcher = ALSAJackWatcher { [weak self] snapshot in
            guard let self else { return }
            self.queue.async { self.handleALSA(snapshot, generation: generation) }
        }
        let first = watcher.start()
        let kept = state.withLock { state in
            guard !state.closed, !state.pulseUp, state.alsaGeneration == generation else { return false }
            state.alsa = watcher
            return true
        }
        guard kept else {
            watcher.stop()
            return
        }
        apply(first)
    }

    private func handleALSA(_ snapshot: DeviceSnapshot, generation: Int) {
        let current = state.withLock { $0.alsa != nil && $0.alsaGeneration == generation }
        if current { apply(snapshot) }
    }

    private func apply(_ snapshot: DeviceSnapshot) {
        let change = state.withLock { state -> RouteChange? in
            guard !state.closed else { return nil }
            let change = state.tracker.update(snapshot)
            state.backend = snapshot.backend
            if !state.initialized {
                state.initialized = true
                ready.signal()
            }
            return change
        }
        if let change { deliver(change) }
    }

    private func deliver(_ change: RouteChange) {
        guard !state.withLock({ $0.closed }) else { return }
        onChange(change)
    }

    // MARK: From any thread

    func reportCategoryChange() {
        queue.async { [self] in
            let route = currentRoute
            deliver(RouteChange(reason: .categoryChange, previousRoute: route, currentRoute: route))
        }
    }

    func close(pulse: PulseBackend) {
        let watcher = state.withLock { state -> ALSAJackWatcher? in
            state.closed = true
            state.backend = .none
            defer { state.alsa = nil }
            return state.alsa
        }
        pulse.close()
        watcher?.stop()
        // Let a callback that is running finish, unless we are inside it.
        if DispatchQueue.getSpecific(key: queueKey) != ObjectIdentifier(self) {
            queue.sync {}
        }
    }
}
