internal import CPulse
import Platform

/// One libpulse connection that follows a sound server's events and connects again whenever
/// the server is not there or goes away: what a client that watches the server (its sinks,
/// sources or streams) needs beside its own queries.
///
/// It makes the ``PulseContext`` (never spawning a server), subscribes to `mask` once the
/// context is ready, and tells its user through one handler, on the loop's thread: connected
/// (with the context, for the user's first reading), each server event, each failed attempt,
/// and the loss of an established connection. After a failure or a loss it tries again
/// (``Reconnect``): after a pause that doubles, or when the server's socket is created
/// again. An attempt not ready within the connect timeout (a server that accepts and never
/// answers) counts as failed.
///
/// `@unchecked Sendable`: used on the loop's thread or with the loop's lock held only.
package final class PulseSubscriber: @unchecked Sendable {
    /// Why an attempt to connect failed.
    package enum Failure: Sendable, Equatable {
        /// libpulse could not make a context.
        case setup(String)
        /// No server answered, it refused, or it did not answer in time: the reason.
        case unreachable(String)
    }

    /// What the subscriber tells its user.
    package enum Event {
        /// Connected and subscribed: the user reads what it follows through the context.
        case connected(PulseContext)
        /// A server event of the subscribed facilities: libpulse's event type (facility and
        /// kind) and the index of the object it is about.
        case changed(type: UInt32, index: UInt32)
        /// An attempt failed; another follows after the backoff.
        case attemptFailed(Failure)
        /// The established connection was lost (libpulse's reason, and the address of the
        /// server it had reached); another attempt follows after the backoff.
        case lost(reason: String, server: String?)
    }

    /// When it tries again after a failure or a loss.
    package enum Reconnect: Sendable {
        /// After a pause of `first` seconds after a success, doubling up to `maximum`.
        case backoff(first: Double, maximum: Double)
        /// When the server's socket file is created again (inotify on its folder, read in
        /// the loop), so that an idle subscriber holds no timer while the server is away:
        /// once at once after a loss, then after each creation (a server just created may
        /// not listen yet: a few more tries, 50 ms apart). A server without a socket file
        /// (`tcp:HOST:PORT`) has nothing to watch: at once, then after pauses from 50 ms
        /// doubling up to 2 s, for as long as it is away.
        case whenSocketAppears
    }

    private let mainloop: PulseMainloop
    private let name: String
    private let server: String?
    private let mask: UInt32
    private let reconnect: Reconnect
    private let firstDelay: Double
    /// The server's socket file, when it has one (``Reconnect/whenSocketAppears``).
    private let socketPath: String?
    private let connectTimeout: Double?
    private let handler: (Event) -> Void

    // The loop's thread, or its lock held.
    private var context: PulseContext?
    private var connected = false
    private var connectedServer: String?
    private var closed = false
    private var retryTimer: PulseTimer?
    private var connectTimer: PulseTimer?
    private var retryDelay: Double
    /// While the server is away (``Reconnect/whenSocketAppears``): the watch on its
    /// socket's folder and its event in the loop; the tries left after a creation.
    private var socket: SocketFileWatch?
    private var socketEvent: OpaquePointer?
    private var retries = 0

    /// A subscriber to `mask` (a `pa_subscription_mask_t`'s bits) of `server` (a libpulse
    /// server string; nil for libpulse's default), on `mainloop`, whose contexts are called
    /// `name`. It does nothing before ``start()``.
    package init(on mainloop: PulseMainloop, name: String, server: String?, mask: UInt32, reconnect: Reconnect,
                 connectTimeout: Double? = nil, handler: @escaping (Event) -> Void) {
        self.mainloop = mainloop
        self.name = name
        self.server = server
        self.mask = mask
        self.reconnect = reconnect
        self.connectTimeout = connectTimeout
        self.handler = handler
        if case .backoff(let first, _) = reconnect {
            firstDelay = first
            socketPath = nil
        } else {
            firstDelay = 0
            socketPath = SocketFileWatch.pulseSocket(server: server)
        }
        retryDelay = firstDelay
    }

    /// The context while connected; nil while connecting or away.
    package var connectedContext: PulseContext? { connected ? context : nil }

    /// Makes the first attempt. With the loop's lock held (or on its thread).
    package func start() { connect() }

    /// Drops the connection and makes no more attempts; nothing more is reported. With the
    /// loop's lock held (or on its thread); once closed it stays closed.
    package func close() {
        closed = true
        retryTimer?.cancel()
        retryTimer = nil
        unwatchSocket()
        drop()
    }

    private func connect() {
        guard !closed, context == nil else { return }
        retryTimer?.cancel()
        retryTimer = nil
        guard let made = PulseContext(on: mainloop, name: name) else {
            failAttempt(.setup("pa_context_new failed"))
            return
        }
        context = made
        made.onStateChange { [unowned self] state in self.stateChanged(made, state) }
        pa_context_set_subscribe_callback(made.pointer, { _, type, index, userdata in
            Unmanaged<PulseSubscriber>.fromOpaque(userdata!).takeUnretainedValue().handler(.changed(type: type.rawValue, index: index))
        }, Unmanaged.passUnretained(self).toOpaque())
        guard made.connect(server: server) else {
            // A failure found at once (no such socket) may have gone through the state
            // callback already, which dropped the context and reported it.
            guard context === made else { return }
            let reason = made.lastError
            drop()
            failAttempt(.unreachable(reason))
            return
        }
        if let connectTimeout {
            connectTimer = mainloop.timer(after: connectTimeout) { [unowned self] in self.connectTimedOut(after: connectTimeout) }
        }
    }

    private func stateChanged(_ changed: PulseContext, _ state: PulseContext.State) {
        guard changed === context else { return }
        if state == .ready {
            connectTimer?.cancel()
            connectTimer = nil
            connected = true
            retryDelay = firstDelay
            retries = 0
            unwatchSocket()
            connectedServer = changed.serverAddress
            if let operation = pa_context_subscribe(changed.pointer, pa_subscription_mask_t(rawValue: mask), nil, nil) {
                pa_operation_unref(operation)
            }
            handler(.connected(changed))
        } else if state.isOver {
            let reason = changed.lastError
            let (wasConnected, address) = (connected, connectedServer)
            drop()
            if wasConnected {
                handler(.lost(reason: reason, server: address))
                scheduleRetry()
            } else {
                failAttempt(.unreachable(reason))
            }
        }
    }

    private func connectTimedOut(after seconds: Double) {
        connectTimer = nil
        guard context != nil, !connected else { return }
        drop()
        failAttempt(.unreachable("no answer within \(seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)) s"))
    }

    private func failAttempt(_ failure: Failure) {
        handler(.attemptFailed(failure))
        scheduleRetry()
    }

    private func scheduleRetry() {
        guard !closed, retryTimer == nil else { return }
        let delay: Double
        switch reconnect {
        case .backoff(_, let maximum):
            delay = retryDelay
            retryDelay = min(retryDelay * 2, maximum)
        case .whenSocketAppears where socketPath == nil:
            delay = retryDelay
            retryDelay = retryDelay == 0 ? 0.05 : min(retryDelay * 2, 2)
        case .whenSocketAppears where socket == nil:
            // The first failure: watch the folder, then try once (the server may be back).
            watchSocket()
            guard socketEvent != nil else { return }
            delay = 0
        case .whenSocketAppears:
            guard retries > 0 else { return }  // until the socket is created again
            retries -= 1
            delay = 0.05
        }
        // From a timer, also at once: not inside the lost context's own callback.
        retryTimer = mainloop.timer(after: delay) { [unowned self] in
            self.retryTimer = nil
            self.connect()
        }
    }

    private func watchSocket() {
        guard let socketPath, let watch = SocketFileWatch(path: socketPath) else { return }
        socket = watch
        socketEvent = mainloop.api.pointee.io_new?(mainloop.api, watch.descriptor, PA_IO_EVENT_INPUT, { _, _, _, _, userdata in
            Unmanaged<PulseSubscriber>.fromOpaque(userdata!).takeUnretainedValue().socketFolderChanged()
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func socketFolderChanged() {
        guard socket?.drainNamesSocket() == true, context == nil, !closed else { return }
        retries = 10
        connect()
    }

    /// Stops watching the socket (connected again, or closed): an idle subscriber holds no
    /// inotify instance.
    private func unwatchSocket() {
        if let socketEvent { mainloop.api.pointee.io_free?(socketEvent) }
        socketEvent = nil
        socket = nil
    }

    /// Forgets the context (its callbacks first, so that disconnecting reports nothing).
    private func drop() {
        connectTimer?.cancel()
        connectTimer = nil
        connected = false
        connectedServer = nil
        context?.release()
        context = nil
    }
}
