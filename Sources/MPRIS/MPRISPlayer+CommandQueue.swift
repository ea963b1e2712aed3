import DBus

/// Calls that carry out a remote command run on the player's command queue, never on the
/// bus thread: a command handler may open files or the audio device, and the bus thread
/// also serves every other object on the connection (the embedded audio-session arbiter
/// among them), whose callers must not wait behind it.
///
/// The semantics chosen: the bus thread parses and checks the call's signature, then
/// hands the call to the queue and returns without replying; the queue runs calls one at
/// a time in the order they arrived (a burst of `Next` takes effect in order), checks the
/// call's preconditions (the `Can*` values) against the state published by the commands
/// before it, carries the command out, and only then replies (with the command's named
/// error if it failed). A caller that waits for the reply therefore sees the effect; a
/// caller that does not wait (`--no-reply`) still gets its calls applied in order.
/// Property reads never enter the queue: they are answered at once from the published
/// state.
extension MPRISPlayer {
    /// Runs `body` on the command queue and replies to `call` when it returns (an error
    /// reply for the ``DBusError`` it throws); throws ``DBusMethodCall/replyLater`` so that
    /// the dispatcher sends nothing now.
    func onCommandQueue(
        _ call: DBusMethodCall, _ body: @escaping @Sendable (MPRISPlayer) throws(DBusError) -> Void
    ) throws(DBusError) -> Never {
        let connection = self.connection
        commandQueue.async { [weak self] in
            do throws(DBusError) {
                // A player released in the meantime carries nothing out: the call is a no-op.
                if let self { try body(self) }
                call.reply([], on: connection)
            } catch {
                call.reply(error: error, on: connection)
            }
        }
        throw DBusMethodCall.replyLater
    }

    /// A method whose body runs on the command queue (see above) and returns nothing.
    func queued(
        _ name: String, inputs: [DBusArgument] = [],
        _ body: @escaping @Sendable (MPRISPlayer, DBusMethodCall) throws(DBusError) -> Void
    ) -> DBusMethod {
        DBusMethod(name, inputs: inputs) { [weak self] call in
            guard let self else { return [] }
            try self.onCommandQueue(call) { player throws(DBusError) in try body(player, call) }
        }
    }

    /// A method that is answered as soon as its turn on the command queue comes, before
    /// `body` runs: for `Quit`, whose effect (the process ends) no reply could follow. A
    /// caller that waits for the reply would otherwise see the player leave the bus without
    /// replying (`NoReply`). Calls before it still take effect first.
    func queuedReplyingFirst(_ name: String, _ body: @escaping @Sendable (MPRISPlayer) -> Void) -> DBusMethod {
        DBusMethod(name) { [weak self] call in
            guard let self else { return [] }
            let connection = self.connection
            commandQueue.async { [weak self] in
                call.reply([], on: connection)
                if let self { body(self) }
            }
            throw DBusMethodCall.replyLater
        }
    }
}
