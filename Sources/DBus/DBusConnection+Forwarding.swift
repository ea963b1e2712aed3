internal import CDBus

/// Forwarding whole messages: for an object that stands in for one exported by another
/// connection (the app's MPRIS entry, which relays to whichever process is its target).
/// The forwarder sees every method call to its path, of any interface (`Properties` and
/// `Introspectable` included), and answers each itself.
extension DBusConnection {
    /// Hands every method call to `path` to `handler` on the bus thread, unchecked; the
    /// handler must answer it (``DBusMessage/relayedReply(to:)`` of the callee's reply, or
    /// ``DBusMessage/makeErrorReply(_:)``) unless it expects no reply, and must not block.
    ///
    /// - Throws: ``DBusError`` `InvalidArgs` when an object or forwarder is already at `path`.
    public func forward(at path: ObjectPath, handler: @escaping @Sendable (DBusMessage) -> Void) throws(DBusError) {
        let added = registry.withLock { state -> Bool in
            guard state.objects[path] == nil, state.forwarders[path] == nil else { return false }
            state.forwarders[path] = handler
            return true
        }
        guard added else { throw .invalidArgs("an object is already exported at \(path)") }
    }

    /// Removes the forwarder at `path`; later calls there get `UnknownObject`.
    public func stopForwarding(at path: ObjectPath) {
        _ = registry.withLock { $0.forwarders.removeValue(forKey: path) }
    }
}

extension DBusMessage {
    /// A copy of this message (header and body) for `destination`, to send again; the bus
    /// gives it a new serial and sender.
    public func redirected(to destination: String?) throws(DBusError) -> DBusMessage {
        let copy = try copied()
        guard destination.withOptionalCString({ dbus_message_set_destination(copy.raw, $0) }) != 0 else {
            throw DBusError(DBusError.Name.noMemory, "libdbus could not set the destination")
        }
        return copy
    }

    /// This reply (a method return or an error, body and all) re-addressed as the answer
    /// to `call`, which another connection sent to this one's forwarder.
    public func relayedReply(to call: DBusMessage) throws(DBusError) -> DBusMessage {
        let copy = try redirected(to: call.sender)
        guard dbus_message_set_reply_serial(copy.raw, call.serial) != 0 else {
            throw DBusError(DBusError.Name.noMemory, "libdbus could not set the reply serial")
        }
        return copy
    }

    private func copied() throws(DBusError) -> DBusMessage {
        guard let raw = dbus_message_copy(raw) else {
            throw DBusError(DBusError.Name.noMemory, "libdbus could not copy a message")
        }
        let copy = DBusMessage(taking: raw)
        _ = dbus_message_set_sender(copy.raw, nil)
        return copy
    }
}

extension DBusConnection {
    /// Sends a method call and calls `onReply` once with its reply (on the bus thread),
    /// without awaiting: calls sent this way from the bus thread leave in the order they
    /// were sent, as a forwarder must keep its callers' order.
    public func send(_ message: DBusMessage, timeout: Duration = .seconds(25),
                     onReply: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void) {
        let millis = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let loop = self.loop
        let accepted = loop.perform { DBusConnection.sendWithReply(message, on: loop, millis: millis, onReply) }
        if !accepted { onReply(.failure(.disconnected())) }
    }
}
