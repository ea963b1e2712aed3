/// Replying to a method call later, off the handler: for a handler that must first ask
/// another process (the bus, say) and cannot wait on the bus thread.
extension DBusMethodCall {
    /// The name of ``replyLater``; never sent on the bus.
    static let replyLaterName = "org.earshot.DBus.Internal.ReplyLater"

    /// Thrown by a method handler that will answer with ``reply(_:on:)`` or
    /// ``reply(error:on:)`` itself: the dispatcher then sends no reply.
    public static var replyLater: DBusError {
        DBusError(replyLaterName, "the handler replies later")
    }

    /// Sends the method's return with `outputs` (which must match the declared outputs).
    public func reply(_ outputs: [DBusValue], on connection: DBusConnection) {
        guard !message.noReplyExpected else { return }
        if let reply = try? message.makeReply(outputs) {
            try? connection.send(reply)
        } else {
            reply(error: .failed("the reply could not be built"), on: connection)
        }
    }

    /// Sends `error` as the call's error reply.
    public func reply(error: DBusError, on connection: DBusConnection) {
        guard !message.noReplyExpected, let reply = message.makeErrorReply(error) else { return }
        try? connection.send(reply)
    }
}
