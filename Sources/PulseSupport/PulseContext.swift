internal import CPulse
#if canImport(Glibc)
import Glibc
#endif

/// A libpulse context (one connection to a sound server) on a ``PulseMainloop``: made,
/// connected (never spawning a server), followed through its state, and released. What a
/// client does over it (streams, introspection, subscriptions) it does with ``pointer``.
///
/// The client keeps the object until ``release()`` (libpulse's callbacks reach it unretained).
///
/// `@unchecked Sendable`: used on the loop's thread or with the loop's lock held only.
package final class PulseContext: @unchecked Sendable {
    /// The context's state, as far as a client tells them apart.
    package enum State: Sendable, Equatable {
        /// Not connected yet, or connecting.
        case connecting
        /// Connected: calls can be made.
        case ready
        /// The connection failed or was lost.
        case failed
        /// Disconnected on purpose.
        case terminated

        /// Whether it is over (failed or terminated).
        package var isOver: Bool { self == .failed || self == .terminated }
    }

    /// The `pa_context`.
    package let pointer: OpaquePointer
    /// The loop it runs on.
    package let mainloop: PulseMainloop
    private var stateHandler: ((State) -> Void)?
    private var released = false

    /// A context named `name` on `mainloop`, with `properties` (a `pa_proplist`, which the
    /// caller keeps and frees; nil for none); nil when libpulse cannot make one. On the
    /// loop's thread, with its lock held, or before the loop starts.
    package init?(on mainloop: PulseMainloop, name: String, properties: OpaquePointer? = nil) {
        let made = properties.map { pa_context_new_with_proplist(mainloop.api, name, $0) } ?? pa_context_new(mainloop.api, name)
        guard let made else { return nil }
        pointer = made
        self.mainloop = mainloop
        pa_context_set_state_callback(made, { _, userdata in
            Unmanaged<PulseContext>.fromOpaque(userdata!).takeUnretainedValue().stateChanged()
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Calls `handler` on the loop's thread at each change of state (after which threads in
    /// ``PulseMainloop/wait()`` are woken). Set before ``connect(server:)``.
    package func onStateChange(_ handler: @escaping (State) -> Void) { stateHandler = handler }

    /// Starts connecting to `server` (a libpulse server string; nil for libpulse's default:
    /// `PULSE_SERVER`, then the user's runtime folder), never spawning one. False when it
    /// failed at once (``lastError`` says why; the state handler may have run already).
    package func connect(server: String?) -> Bool {
        let result = server.map { pa_context_connect(pointer, $0, PA_CONTEXT_NOAUTOSPAWN, nil) }
            ?? pa_context_connect(pointer, nil, PA_CONTEXT_NOAUTOSPAWN, nil)
        return result >= 0
    }

    /// Connects to `server` (as ``connect(server:)``) and starts the loop's thread, before
    /// which the context was made and its state handler set. Where either fails, the context
    /// is released and the loop stopped, and the error says why in libpulse's words: the
    /// caller has nothing left to undo. Not on the loop's thread (it does not run yet).
    package func start(server: String?) throws(StartFailure) {
        let failure: String
        if !connect(server: server) {
            failure = lastError
        } else if !mainloop.start() {
            failure = "cannot start libpulse's thread"
        } else {
            return
        }
        release()
        mainloop.stop()
        throw StartFailure(reason: failure)
    }

    /// Why ``start(server:)`` failed: libpulse's text for it.
    package struct StartFailure: Error, Sendable {
        /// What went wrong (`Connection refused`).
        package let reason: String
    }

    /// The state now.
    package var state: State { Self.state(of: pointer) }

    /// libpulse's text for the context's last error.
    package var lastError: String { Self.errorText(of: pointer) }

    /// The address of the server it connected to (`unix:/run/user/1000/pulse/native`).
    package var serverAddress: String? { pa_context_get_server(pointer).map { String(cString: $0) } }

    /// libpulse's text for `context`'s last error ("unknown error" without one).
    package static func errorText(of context: OpaquePointer?) -> String {
        guard let context else { return "unknown error" }
        return pa_strerror(pa_context_errno(context)).map { String(cString: $0) } ?? "unknown error"
    }

    /// The state of `context`.
    package static func state(of context: OpaquePointer) -> State {
        switch pa_context_get_state(context) {
        case PA_CONTEXT_READY: .ready
        case PA_CONTEXT_FAILED: .failed
        case PA_CONTEXT_TERMINATED: .terminated
        default: .connecting
        }
    }

    /// How waiting for the connection ended.
    package enum Readiness: Sendable, Equatable {
        /// Connected.
        case ready
        /// The server refused or went away: libpulse's reason.
        case failed(String)
        /// `deadline` passed first.
        case timedOut
    }

    /// With the loop's lock held (not on its thread): waits until the context is ready,
    /// failed, or `deadline` passed.
    package func waitUntilReady(_ deadline: PulseDeadline) -> Readiness {
        while true {
            switch state {
            case .ready: return .ready
            case .failed, .terminated: return .failed(lastError)
            case .connecting: if deadline.passed { return .timedOut }
            }
            mainloop.wait()
        }
    }

    /// A deadline `seconds` from now on the monotonic clock: once passed it wakes the
    /// threads in ``PulseMainloop/wait()``. With the loop's lock held or on its thread.
    package func deadline(after seconds: Double) -> PulseDeadline {
        PulseDeadline(context: self, seconds: seconds)
    }

    /// Forgets the handlers (state and subscription) without disconnecting: nothing of the
    /// client's runs for this context any more. On the loop's thread or with its lock held.
    package func detach() {
        stateHandler = nil
        pa_context_set_state_callback(pointer, nil, nil)
        pa_context_set_subscribe_callback(pointer, nil, nil)
    }

    /// Detaches, disconnects and lets the context go, once; its streams were released
    /// before. On the loop's thread or with its lock held.
    package func release() {
        guard !released else { return }
        released = true
        detach()
        pa_context_disconnect(pointer)
        pa_context_unref(pointer)
    }

    private func stateChanged() {
        stateHandler?(state)
        mainloop.signal()
    }

    /// Calls `fire` on the loop's thread after `seconds` of libpulse's monotonic clock,
    /// unless cancelled first. On the loop's thread or with its lock held.
    package func timer(after seconds: Double, _ fire: @escaping () -> Void) -> PulseTimer {
        PulseTimer(context: pointer, api: mainloop.api, at: pa_rtclock_now() + pa_usec_t(max(0, seconds) * 1e6), fire)
    }
}

/// A time limit for waits on a ``PulseMainloop``: when it passes it sets ``passed`` and wakes
/// the waiting threads. ``cancel()`` it once the wait is over (a deadline let go uncancelled
/// still fires once, harmlessly).
///
/// `@unchecked Sendable`: touched on the loop's thread or with its lock held only.
package final class PulseDeadline: @unchecked Sendable {
    /// Whether the time is up.
    package private(set) var passed = false
    private var timer: PulseTimer?

    fileprivate init(context: PulseContext, seconds: Double) {
        let mainloop = context.mainloop
        timer = context.timer(after: seconds) { [weak self] in
            self?.passed = true
            mainloop.signal()
        }
    }

    /// Frees the timer (with the lock held).
    package func cancel() {
        timer?.cancel()
        timer = nil
    }
}

extension PulseContext {
    /// “pulseaudio 16.1” or “PulseAudio (on PipeWire 0.3.65) 15.0.0”, asked of the server; nil
    /// when it does not answer before `timedOut` says so or the context fails. With the
    /// lock of `mainloop` (a `pa_threaded_mainloop`) held, once `context` is ready (the wait
    /// releases the lock).
    package static func serverName(_ context: OpaquePointer, mainloop: OpaquePointer, timedOut: () -> Bool) -> String? {
        let query = Answer<String>(mainloop: mainloop)
        let operation = pa_context_get_server_info(context, { _, info, userdata in
            guard let userdata else { return }
            let query = Unmanaged<Answer<String>>.fromOpaque(userdata).takeUnretainedValue()
            if let info = info?.pointee {
                let name = info.server_name.map { String(cString: $0) } ?? "unknown server"
                let version = info.server_version.map { String(cString: $0) } ?? "?"
                query.value = "\(name) \(version)"
            }
            pa_threaded_mainloop_signal(query.mainloop, 0)
        }, Unmanaged.passUnretained(query).toOpaque())
        return wait(for: operation, answering: query, context: context, timedOut: timedOut)
    }

    /// The default sink's sample format, asked of the server; nil when it does not answer
    /// before `timedOut` says so, or has no default sink. With the lock of `mainloop` held,
    /// once `context` is ready (the wait releases the lock).
    package static func defaultSinkFormat(_ context: OpaquePointer, mainloop: OpaquePointer, timedOut: () -> Bool) -> SinkFormat? {
        let query = Answer<SinkFormat>(mainloop: mainloop)
        let operation = pa_context_get_sink_info_by_name(context, "@DEFAULT_SINK@", { _, info, _, userdata in
            guard let userdata else { return }
            let query = Unmanaged<Answer<SinkFormat>>.fromOpaque(userdata).takeUnretainedValue()
            // Called once with the sink, then once more at the end of the list (info nil).
            if let spec = info?.pointee.sample_spec {
                query.value = SinkFormat(bits: PulseContext.bits(of: spec.format), sampleRate: Int(spec.rate))
            }
            pa_threaded_mainloop_signal(query.mainloop, 0)
        }, Unmanaged.passUnretained(query).toOpaque())
        return wait(for: operation, answering: query, context: context, timedOut: timedOut)
    }

    private static func bits(of format: pa_sample_format_t) -> Int? {
        switch format {
        case PA_SAMPLE_U8, PA_SAMPLE_ALAW, PA_SAMPLE_ULAW: 8
        case PA_SAMPLE_S16LE, PA_SAMPLE_S16BE: 16
        case PA_SAMPLE_S24LE, PA_SAMPLE_S24BE, PA_SAMPLE_S24_32LE, PA_SAMPLE_S24_32BE, PA_SAMPLE_FLOAT32LE, PA_SAMPLE_FLOAT32BE: 24
        case PA_SAMPLE_S32LE, PA_SAMPLE_S32BE: 32
        default: nil
        }
    }

    /// An introspection call's answer, written by its callback under the mainloop's lock and
    /// read after the wait.
    private final class Answer<Value> {
        let mainloop: OpaquePointer
        var value: Value?
        init(mainloop: OpaquePointer) { self.mainloop = mainloop }
    }

    /// With the mainloop's lock held: waits (releasing it) until `operation` is done,
    /// `timedOut` says so or `context` fails, and gives what the callback wrote.
    private static func wait<Value>(for operation: OpaquePointer?, answering query: Answer<Value>,
                                    context: OpaquePointer, timedOut: () -> Bool) -> Value? {
        guard let operation else { return nil }
        while pa_operation_get_state(operation) == PA_OPERATION_RUNNING, !timedOut(), pa_context_get_state(context) == PA_CONTEXT_READY {
            pa_threaded_mainloop_wait(query.mainloop)
        }
        // Not answered: the callback must not run later, on a query gone by then.
        if pa_operation_get_state(operation) == PA_OPERATION_RUNNING { pa_operation_cancel(operation) }
        pa_operation_unref(operation)
        return withExtendedLifetime(query) { query.value }
    }

    /// The server's name and version (see the static form), within `deadline`.
    package func serverName(within deadline: PulseDeadline) -> String? {
        Self.serverName(pointer, mainloop: mainloop.pointer) { deadline.passed }
    }
}
