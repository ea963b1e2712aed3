internal import CPulse
import Platform
import Synchronization

/// The one libpulse connection a process keeps to a sound server to follow its events,
/// shared by everything in the process that watches that server (its sinks, sources or
/// streams): each user holds a ``Subscription`` with its own event mask and handler.
///
/// There is one per server address, made with its own ``PulseMainloop`` for the first user
/// and closed when the last one goes. It makes the ``PulseContext`` (never spawning a
/// server), subscribes to the union of its users' masks once the context is ready, and tells
/// each user, on the loop's thread: connected (with the context, for the user's first
/// reading; a user that comes later is told on its own), each server event of its
/// facilities, each failed attempt, and the loss of an established connection. After a
/// failure or a loss it tries again: where the server has a socket file, once at once and
/// then whenever the socket is created again (inotify on its folder, read in the loop), so
/// that it holds no timer while the server is away (a server just created may not listen
/// yet: a few more tries, 50 ms apart); without a socket file to watch (`tcp:HOST:PORT`),
/// or while a server accepts and does not answer, after pauses from 50 ms doubling up to
/// 2 s. An attempt not ready within the shortest connect timeout of its users counts as
/// failed.
///
/// `@unchecked Sendable`: used on the loop's thread or with the loop's lock held only, but
/// for ``holders``, under the lock of the process's table of subscribers.
package final class PulseSubscriber: @unchecked Sendable {
    /// Why an attempt to connect failed.
    package enum Failure: Sendable, Equatable {
        /// libpulse could not make a context.
        case setup(String)
        /// No server answered, it refused, or it did not answer in time: the reason.
        case unreachable(String)
    }

    /// What the subscriber tells its users.
    package enum Event {
        /// Connected and subscribed: the user reads what it follows through the context.
        case connected(PulseContext)
        /// A server event of the user's facilities: libpulse's event type (facility and
        /// kind) and the index of the object it is about.
        case changed(type: UInt32, index: UInt32)
        /// An attempt failed; another follows.
        case attemptFailed(Failure)
        /// The established connection was lost (libpulse's reason, and the address of the
        /// server it had reached); another attempt follows.
        case lost(reason: String, server: String?)
    }

    /// The process's subscribers, by server address ("" for libpulse's default).
    private static let shared = Mutex<[String: PulseSubscriber]>([:])

    private let mainloop: PulseMainloop
    private let server: String?
    /// The server's socket file, when it has one.
    private let socketPath: String?
    /// The subscriptions made and not closed (under ``shared``'s lock).
    private var holders = 0

    // The loop's thread, or its lock held.
    private var users: [Subscription] = []
    private var subscribedMask: UInt32 = 0
    private var context: PulseContext?
    private var connected = false
    private var connectedServer: String?
    private var closed = false
    private var retryTimer: PulseTimer?
    private var connectTimer: PulseTimer?
    private var retryDelay = 0.0
    /// While the server is away: the watch on its socket's folder and its event in the loop;
    /// the tries left after a creation.
    private var socket: SocketFileWatch?
    private var socketEvent: OpaquePointer?
    private var retries = 0

    private init(mainloop: PulseMainloop, server: String?) {
        self.mainloop = mainloop
        self.server = server
        socketPath = SocketFileWatch.pulseSocket(server: server)
    }

    /// A subscription to `mask` (a `pa_subscription_mask_t`'s bits) of `server` (a libpulse
    /// server string; nil for libpulse's default) through the process's subscriber to it,
    /// made (and its loop's thread started) when it has none; nil when libpulse cannot make
    /// or start a loop. `connectTimeout`: how long an attempt may take at most (the shortest
    /// of the users' counts; nil: no limit of this user's). It tells `handler` nothing before
    /// ``Subscription/start()``; ``Subscription/close(_:)`` it. Not on the loop's thread.
    package static func subscribe(server: String?, mask: UInt32, connectTimeout: Double? = nil,
                                  handler: @escaping (Event) -> Void) -> Subscription? {
        shared.withLock { table -> Subscription? in
            let key = server ?? ""
            let subscriber: PulseSubscriber
            if let existing = table[key] {
                subscriber = existing
            } else {
                guard let loop = PulseMainloop(name: "earshot-watch") else { return nil }
                guard loop.start() else {
                    loop.stop()
                    return nil
                }
                subscriber = PulseSubscriber(mainloop: loop, server: server)
                table[key] = subscriber
            }
            subscriber.holders += 1
            return Subscription(subscriber, mask: mask, connectTimeout: connectTimeout, handler: handler)
        }
    }

    /// Lets one holder go; the last one closes the connection and stops the loop.
    private func release() {
        let last = Self.shared.withLock { table in
            holders -= 1
            guard holders == 0 else { return false }
            table[server ?? ""] = nil
            return true
        }
        guard last else { return }
        mainloop.withLock {
            closed = true
            retryTimer?.cancel()
            retryTimer = nil
            unwatchSocket()
            drop()
        }
        mainloop.stop()
    }

    /// One user of a ``PulseSubscriber``: its mask, its handler, and the operations it has in
    /// flight on the shared context (cancelled when it closes, so that no callback of its
    /// runs after).
    ///
    /// `@unchecked Sendable`: used on the loop's thread or with the loop's lock held only,
    /// but for ``start()`` and ``close(_:)``, which take the lock.
    package final class Subscription: @unchecked Sendable {
        /// The shared connection's loop: the user's timers run on it, and a thread that
        /// calls libpulse on the user's behalf holds its lock.
        package let mainloop: PulseMainloop
        private let subscriber: PulseSubscriber
        fileprivate let mask: UInt32
        fileprivate let connectTimeout: Double?
        fileprivate let handler: (Event) -> Void
        private let closed = Atomic<Bool>(false)
        // The loop's thread, or its lock held.
        fileprivate var active = false
        private var operations: [(operation: OpaquePointer, kept: AnyObject?)] = []

        fileprivate init(_ subscriber: PulseSubscriber, mask: UInt32, connectTimeout: Double?, handler: @escaping (Event) -> Void) {
            self.subscriber = subscriber
            mainloop = subscriber.mainloop
            self.mask = mask
            self.connectTimeout = connectTimeout
            self.handler = handler
        }

        /// The shared context while connected (and this subscription started and not
        /// closed); nil while connecting or away.
        package var connectedContext: PulseContext? { active ? subscriber.connectedContext : nil }

        /// Starts telling the handler: connected at once (from the loop) when the connection
        /// is up, else the outcome of the attempt under way, or of one made now. Without the
        /// loop's lock.
        package func start() {
            mainloop.withLock { subscriber.join(self) }
        }

        /// Keeps `operation` (a libpulse call's, made on ``connectedContext``, and `kept`,
        /// what its callback's userdata points to) until it is done, and cancels it if this
        /// subscription closes first; false when it is nil (the call failed). On the loop's
        /// thread or with its lock held.
        @discardableResult
        package func track(_ operation: OpaquePointer?, keeping kept: AnyObject? = nil) -> Bool {
            operations.removeAll { entry in
                guard pa_operation_get_state(entry.operation) != PA_OPERATION_RUNNING else { return false }
                pa_operation_unref(entry.operation)
                return true
            }
            guard let operation else { return false }
            operations.append((operation, kept))
            return true
        }

        /// Tells the handler nothing more, cancels this user's operations, runs `cleanup`
        /// (with the loop's lock held: the user's own timers), and lets the connection go
        /// (the last user closes it). Idempotent; without the loop's lock and not on its
        /// thread.
        package func close(_ cleanup: () -> Void = {}) {
            guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
            precondition(!mainloop.isLoopThread, "PulseSubscriber.Subscription.close on the loop's thread")
            mainloop.withLock {
                subscriber.leave(self)
                for entry in operations {
                    if pa_operation_get_state(entry.operation) == PA_OPERATION_RUNNING { pa_operation_cancel(entry.operation) }
                    pa_operation_unref(entry.operation)
                }
                operations = []
                cleanup()
            }
            subscriber.release()
        }
    }

    /// The context while connected; nil while connecting or away.
    private var connectedContext: PulseContext? { connected ? context : nil }

    private func join(_ user: Subscription) {
        user.active = true
        users.append(user)
        if connected {
            subscribe()
            // From the loop's thread, as every event: not on the thread that starts.
            _ = mainloop.timer(after: 0) { [weak self, weak user] in
                guard let self, let user, user.active, let context = self.connectedContext else { return }
                user.handler(.connected(context))
            }
        } else if context == nil {
            connect()  // away: try at once, so that the new user hears how it went
        }
    }

    private func leave(_ user: Subscription) {
        user.active = false
        users.removeAll { $0 === user }
        subscribe()
    }

    /// Subscribes the connected context to the union of the users' masks, when it changed.
    private func subscribe() {
        guard let context = connectedContext else { return }
        let mask = users.reduce(0) { $0 | $1.mask }
        guard mask != subscribedMask else { return }
        subscribedMask = mask
        if let operation = pa_context_subscribe(context.pointer, pa_subscription_mask_t(rawValue: mask), nil, nil) {
            pa_operation_unref(operation)
        }
    }

    private func tell(_ event: Event) {
        for user in users where user.active { user.handler(event) }
    }

    private func changed(type: UInt32, index: UInt32) {
        // A facility's bit in a mask is 1 << the facility (pa_subscription_match_flags).
        let bit = UInt32(1) << (type & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue)
        for user in users where user.active && user.mask & bit != 0 {
            user.handler(.changed(type: type, index: index))
        }
    }

    private func connect() {
        guard !closed, context == nil else { return }
        retryTimer?.cancel()
        retryTimer = nil
        guard let made = PulseContext(on: mainloop, name: "Earshot") else {
            failAttempt(.setup("pa_context_new failed"))
            return
        }
        context = made
        made.onStateChange { [unowned self] state in self.stateChanged(made, state) }
        pa_context_set_subscribe_callback(made.pointer, { _, type, index, userdata in
            Unmanaged<PulseSubscriber>.fromOpaque(userdata!).takeUnretainedValue().changed(type: type.rawValue, index: index)
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
        if let connectTimeout = users.compactMap(\.connectTimeout).min() {
            connectTimer = mainloop.timer(after: connectTimeout) { [unowned self] in self.connectTimedOut(after: connectTimeout) }
        }
    }

    private func stateChanged(_ changed: PulseContext, _ state: PulseContext.State) {
        guard changed === context else { return }
        if state == .ready {
            connectTimer?.cancel()
            connectTimer = nil
            connected = true
            retryDelay = 0
            retries = 0
            unwatchSocket()
            connectedServer = changed.serverAddress
            subscribedMask = 0
            subscribe()
            tell(.connected(changed))
        } else if state.isOver {
            let reason = changed.lastError
            let (wasConnected, address) = (connected, connectedServer)
            drop()
            if wasConnected {
                tell(.lost(reason: reason, server: address))
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
        failAttempt(.unreachable("no answer within \(seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)) s"),
                    timedOut: true)
    }

    private func failAttempt(_ failure: Failure, timedOut: Bool = false) {
        tell(.attemptFailed(failure))
        scheduleRetry(timedOut: timedOut)
    }

    private func scheduleRetry(timedOut: Bool = false) {
        guard !closed, retryTimer == nil else { return }
        let delay: Double
        if socket == nil, !timedOut, watchSocket() {
            // The first failure: watch the folder, then try once (the server may be back).
            delay = 0
        } else if socket == nil || timedOut {
            // Nothing to watch, or a server that accepts and does not answer.
            delay = retryDelay
            retryDelay = retryDelay == 0 ? 0.05 : min(retryDelay * 2, 2)
        } else if retries > 0 {
            retries -= 1
            delay = 0.05
        } else {
            return  // until the socket is created again
        }
        // From a timer, also at once: not inside the lost context's own callback.
        retryTimer = mainloop.timer(after: delay) { [unowned self] in
            self.retryTimer = nil
            self.connect()
        }
    }

    /// Watches the socket's folder; false when there is no socket file or it cannot.
    private func watchSocket() -> Bool {
        guard let socketPath, let watch = SocketFileWatch(path: socketPath) else { return false }
        socketEvent = mainloop.api.pointee.io_new?(mainloop.api, watch.descriptor, PA_IO_EVENT_INPUT, { _, _, _, _, userdata in
            Unmanaged<PulseSubscriber>.fromOpaque(userdata!).takeUnretainedValue().socketFolderChanged()
        }, Unmanaged.passUnretained(self).toOpaque())
        guard socketEvent != nil else { return false }
        socket = watch
        return true
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
