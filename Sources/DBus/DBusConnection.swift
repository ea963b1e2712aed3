internal import CDBus
import Platform
import Synchronization

/// A private connection to a message bus, driven by its own bus thread.
///
/// Method handlers, property accessors and signal handlers run on the bus thread, one
/// at a time; keep them short. Every other entry point may be called from any thread.
/// Closing (or releasing the last reference) flushes queued messages and disconnects.
public final class DBusConnection: Sendable {
    /// Which bus to connect to.
    public enum Bus: Sendable {
        /// The session bus of `DBUS_SESSION_BUS_ADDRESS`.
        case session
        /// A bus at a D-Bus address such as `unix:path=/tmp/bus`.
        case address(String)
    }

    let loop: BusLoop
    /// The bus this connection was made to, for another connection to the same bus.
    public let bus: Bus
    let registry = Mutex(Registry())

    struct Registry {
        var objects: [ObjectPath: [DBusInterface]] = [:]
        /// Paths whose method calls go, whole, to a handler (DBusConnection+Forwarding).
        var forwarders: [ObjectPath: @Sendable (DBusMessage) -> Void] = [:]
        var subscriptions: [UInt64: (rule: MatchRule, handler: @Sendable (DBusMessage) -> Void)] = [:]
        var nextSubscription: UInt64 = 1
        var disconnectHandlers: [@Sendable () -> Void] = []
        var connected = true
    }

    /// This connection's unique name on the bus, such as `:1.42`.
    public var uniqueName: String { loop.uniqueName }

    /// Connects, registers with the bus, and starts the bus thread.
    ///
    /// - Throws: ``DBusError`` with libdbus's error name when the bus cannot be reached,
    ///   for example `org.freedesktop.DBus.Error.FileNotFound` for a missing socket.
    public init(_ bus: Bus = .session) throws(DBusError) {
        self.bus = bus
        switch bus {
        case .session: loop = try BusLoop(address: nil)
        case .address(let address): loop = try BusLoop(address: address)
        }
        loop.messageHandler = { [weak self] message in self?.handle(message) ?? false }
        loop.disconnectHandler = { [weak self] in
            guard let self else { return }
            let handlers = self.registry.withLock { state -> [@Sendable () -> Void] in
                state.connected = false
                return state.disconnectHandlers
            }
            for handler in handlers { handler() }
        }
        loop.start()
    }

    deinit { loop.stop() }

    /// Whether the connection is still open.
    public var isConnected: Bool { registry.withLock { $0.connected } && !loop.isClosed }

    /// Flushes queued messages and closes the connection. Pending calls fail with
    /// `Disconnected`; later calls throw it.
    public func close() { loop.stop() }

    /// Waits until every message queued so far has been written to the bus.
    public func flush() async {
        let loop = self.loop
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = loop.perform {
                dbus_connection_flush(loop.connection)
                continuation.resume()
            }
            if !accepted { continuation.resume() }
        }
    }

    /// Runs `handler` on the bus thread when the connection closes or the bus goes away.
    public func onDisconnect(_ handler: @escaping @Sendable () -> Void) {
        registry.withLock { $0.disconnectHandlers.append(handler) }
    }

    // MARK: Sending

    /// Queues a message; returns without waiting for it to be written.
    public func send(_ message: DBusMessage) throws(DBusError) {
        let loop = self.loop
        let accepted = loop.perform {
            _ = dbus_connection_send(loop.connection, message.raw, nil)
        }
        guard accepted else { throw .disconnected() }
    }

    /// Sends a method call and waits for the reply.
    ///
    /// - Returns: the method-return message.
    /// - Throws: the ``DBusError`` of an error reply; `NoReply` after `timeout`;
    ///   `Disconnected` when the connection is closed.
    public func call(_ message: DBusMessage, timeout: Duration = .seconds(25)) async throws(DBusError) -> DBusMessage {
        try await calls([message], timeout: timeout)[0].get()
    }

    /// Sends method calls back to back, in order, without waiting for a reply between them,
    /// then waits for every reply. The bus delivers one connection's messages in the order
    /// they were sent, so each callee sees them in this order, one round trip after the
    /// first instead of one after the other.
    ///
    /// - Returns: each call's reply or error (`NoReply` after `timeout`, `Disconnected`
    ///   when the connection is closed), in the order of `messages`.
    public func calls(_ messages: [DBusMessage], timeout: Duration = .seconds(25)) async -> [Result<DBusMessage, DBusError>] {
        guard !messages.isEmpty else { return [] }
        let millis = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let loop = self.loop
        return await withCheckedContinuation { (continuation: CheckedContinuation<[Result<DBusMessage, DBusError>], Never>) in
            let replies = ReplyCollector(count: messages.count, continuation)
            let accepted = loop.perform {
                for (index, message) in messages.enumerated() {
                    DBusConnection.sendWithReply(message, on: loop, millis: millis) { replies.store($0, at: index) }
                }
            }
            if !accepted { continuation.resume(returning: messages.map { _ in .failure(.disconnected()) }) }
        }
    }

    /// Sends `message` and calls `onReply` once with its reply; on the bus thread only.
    static func sendWithReply(_ message: DBusMessage, on loop: BusLoop, millis: Int32,
                                      _ onReply: @escaping (Result<DBusMessage, DBusError>) -> Void) {
        var pending: OpaquePointer?
        guard dbus_connection_send_with_reply(loop.connection, message.raw, &pending, millis) != 0, let pending else {
            onReply(.failure(.disconnected()))
            return
        }
        let box = Unmanaged.passRetained(ReplyBox(onReply)).toOpaque()
        let set = dbus_pending_call_set_notify(pending, { pending, data in
            let box = Unmanaged<ReplyBox>.fromOpaque(data!).takeUnretainedValue()
            box.complete(with: dbus_pending_call_steal_reply(pending))
        }, box, { data in Unmanaged<ReplyBox>.fromOpaque(data!).release() })
        if set == 0 {
            Unmanaged<ReplyBox>.fromOpaque(box).release()
            onReply(.failure(DBusError(DBusError.Name.noMemory, "cannot wait for the reply")))
        } else if dbus_pending_call_get_completed(pending) != 0 {
            Unmanaged<ReplyBox>.fromOpaque(box).takeUnretainedValue().complete(with: dbus_pending_call_steal_reply(pending))
        }
        dbus_pending_call_unref(pending)
    }

    /// Calls a method and returns its output arguments.
    public func call(
        destination: String, path: ObjectPath, interface: String, method: String,
        _ arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> [DBusValue] {
        let message = try DBusMessage.methodCall(
            destination: destination, path: path, interface: interface, method: method, arguments: arguments)
        return try await call(message, timeout: timeout).arguments()
    }

    /// Runs `work` on the bus thread after `delay`; used to batch outgoing signals.
    /// Returns a token for ``cancelScheduled(_:)``.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> UInt64 {
        loop.schedule(afterNanos: delay.wholeNanoseconds, work)
    }

    public func cancelScheduled(_ token: UInt64) { loop.cancelTimer(token) }

    // MARK: Exporting

    /// Exports interfaces at `path`. Introspection, `Properties` and `Peer` come with them.
    ///
    /// - Throws: ``DBusError`` `InvalidArgs` for an invalid interface or member name,
    ///   a duplicate interface, or an object already exported at `path`.
    @discardableResult
    public func export(_ interfaces: [DBusInterface], at path: ObjectPath) throws(DBusError) -> DBusExportedObject {
        var seen = Set<String>()
        for interface in interfaces {
            try InterfaceName.validate(interface.name)
            guard seen.insert(interface.name).inserted else { throw .invalidArgs("interface \(interface.name) is listed twice") }
            for name in interface.methods.map(\.name) + interface.properties.map(\.name) + interface.signals.map(\.name) {
                try MemberName.validate(name)
            }
        }
        let added = registry.withLock { state -> Bool in
            guard state.objects[path] == nil else { return false }
            state.objects[path] = interfaces
            return true
        }
        guard added else { throw .invalidArgs("an object is already exported at \(path)") }
        return DBusExportedObject(path: path, connection: self, interfaces: interfaces)
    }

    func unexport(_ path: ObjectPath) {
        _ = registry.withLock { $0.objects.removeValue(forKey: path) }
    }

    // MARK: Signals

    /// Delivers signals matching `rule` to `handler` on the bus thread. Unless
    /// `addMatch` is false (for signals the bus sends to this connection anyway,
    /// such as `NameAcquired`), the rule is added to the bus first.
    public func subscribe(
        _ rule: MatchRule, addMatch: Bool = true, handler: @escaping @Sendable (DBusMessage) -> Void
    ) async throws(DBusError) -> SignalSubscription {
        let id = registry.withLock { state -> UInt64 in
            let id = state.nextSubscription
            state.nextSubscription += 1
            state.subscriptions[id] = (rule, handler)
            return id
        }
        if addMatch {
            do {
                _ = try await call(destination: StandardInterface.bus, path: "/org/freedesktop/DBus",
                                   interface: StandardInterface.bus, method: "AddMatch", [.string(rule.text)])
            } catch {
                _ = registry.withLock { $0.subscriptions.removeValue(forKey: id) }
                throw error
            }
        }
        return SignalSubscription(connection: self, id: id, rule: rule, addedMatch: addMatch)
    }

    /// Like ``subscribe(_:addMatch:handler:)`` but without waiting: the handler is in
    /// place when this returns and `AddMatch` is on its way. For code that cannot await,
    /// such as a handler running on the bus thread.
    public func subscribeNow(_ rule: MatchRule, handler: @escaping @Sendable (DBusMessage) -> Void) -> SignalSubscription {
        let id = registry.withLock { state -> UInt64 in
            let id = state.nextSubscription
            state.nextSubscription += 1
            state.subscriptions[id] = (rule, handler)
            return id
        }
        if let message = try? DBusMessage.methodCall(
            destination: StandardInterface.bus, path: "/org/freedesktop/DBus", interface: StandardInterface.bus,
            method: "AddMatch", arguments: [.string(rule.text)]) {
            message.setNoReply()
            try? send(message)
        }
        return SignalSubscription(connection: self, id: id, rule: rule, addedMatch: true)
    }

    func unsubscribe(_ subscription: SignalSubscription) {
        let removed = registry.withLock { $0.subscriptions.removeValue(forKey: subscription.id) } != nil
        guard removed, subscription.addedMatch,
              let message = try? DBusMessage.methodCall(
                destination: StandardInterface.bus, path: "/org/freedesktop/DBus", interface: StandardInterface.bus,
                method: "RemoveMatch", arguments: [.string(subscription.rule.text)]) else { return }
        message.setNoReply()
        try? send(message)
    }

    // MARK: Incoming

    /// Routes one incoming message; runs on the bus thread.
    private func handle(_ message: DBusMessage) -> Bool {
        switch message.kind {
        case .signal:
            if message.interface == "org.freedesktop.DBus.Local", message.member == "Disconnected" {
                loop.stop()
                return true
            }
            let handlers = registry.withLock { state in
                state.subscriptions.values.filter { $0.rule.matches(message) }.map(\.handler)
            }
            for handler in handlers { handler(message) }
            return !handlers.isEmpty
        case .methodCall:
            let reply = dispatch(message)
            if !message.noReplyExpected, let reply {
                dbus_connection_send(loop.connection, reply.raw, nil)
            }
            return true
        default:
            return false
        }
    }
}

/// A signal subscription; ``cancel()`` removes it and its bus match rule.
public struct SignalSubscription: Sendable {
    let connection: DBusConnection
    let id: UInt64
    let rule: MatchRule
    let addedMatch: Bool

    public func cancel() { connection.unsubscribe(self) }
}

/// Carries a call's reply handler through libdbus's pending-call user data.
///
/// `@unchecked Sendable`: made on the bus thread, then touched only there (the reply
/// callback and libdbus's free function, which `deinit` runs from); `onReply` is cleared
/// on first use, so it is called once.
private final class ReplyBox: @unchecked Sendable {
    private var onReply: ((Result<DBusMessage, DBusError>) -> Void)?
    init(_ onReply: @escaping (Result<DBusMessage, DBusError>) -> Void) { self.onReply = onReply }

    /// libdbus frees a pending call without notifying when the connection is finalized
    /// with the call still open; the waiter then learns the connection is gone.
    deinit { onReply?(.failure(DBusError.disconnected("the connection closed before the reply arrived"))) }

    /// Hands the reply over once; runs on the bus thread only.
    func complete(with raw: OpaquePointer?) {
        guard let onReply else {
            if let raw { dbus_message_unref(raw) }
            return
        }
        self.onReply = nil
        guard let raw else {
            onReply(.failure(DBusError(DBusError.Name.noReply, "the call completed without a reply")))
            return
        }
        let reply = DBusMessage(taking: raw)
        if let error = reply.error {
            onReply(.failure(error))
        } else {
            onReply(.success(reply))
        }
    }
}

/// Gathers the replies of ``DBusConnection/calls(_:timeout:)`` and resumes its waiter when
/// the last one is in.
///
/// `@unchecked Sendable`: made on the calling thread before the bus thread sees it, then
/// touched only on the bus thread (every `store` comes from a reply callback or the send
/// loop there), so `results` needs no lock.
private final class ReplyCollector: @unchecked Sendable {
    private var results: [Result<DBusMessage, DBusError>?]
    private var missing: Int
    private let continuation: CheckedContinuation<[Result<DBusMessage, DBusError>], Never>

    init(count: Int, _ continuation: CheckedContinuation<[Result<DBusMessage, DBusError>], Never>) {
        results = Array(repeating: nil, count: count)
        missing = count
        self.continuation = continuation
    }

    func store(_ result: Result<DBusMessage, DBusError>, at index: Int) {
        guard results[index] == nil else { return }
        results[index] = result
        missing -= 1
        if missing == 0 { continuation.resume(returning: results.map { $0! }) }
    }
}
