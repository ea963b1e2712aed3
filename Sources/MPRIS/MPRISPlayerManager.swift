package import DBus

/// A client of the other MPRIS players on the bus (as playerctl's player manager serves
/// its CLI and its daemon): lists them, follows their `PropertiesChanged`, reads their
/// state and sends them transport commands.
///
/// Every player is another process and untrusted: each call has the manager's timeout,
/// and each answer is checked against the MPRIS specification; a wrong one is a
/// ``MPRISClientError``, never a trap. The calls are asynchronous and nothing here waits on
/// the bus thread, so a player that never answers delays only its own caller.
package struct MPRISPlayerManager: Sendable {
    /// The prefix of every MPRIS player's well-known name.
    package static let namePrefix = "org.mpris.MediaPlayer2."

    /// The connection the calls go out on.
    package let connection: DBusConnection
    /// How long a call waits for a player (or the bus about it).
    package let timeout: Duration

    /// A client on `connection` whose calls wait at most `timeout`.
    package init(connection: DBusConnection, timeout: Duration) {
        self.connection = connection
        self.timeout = timeout
    }

    /// Whether `name` is an MPRIS player's well-known name.
    package static func isPlayerName(_ name: String) -> Bool { name.hasPrefix(namePrefix) }

    /// The MPRIS players' well-known names on the bus now (`ListNames`).
    package func playerNames() async throws(MPRISClientError) -> [String] {
        let reply: [DBusValue]
        do {
            reply = try await connection.call(destination: StandardInterface.bus, path: "/org/freedesktop/DBus",
                                              interface: StandardInterface.bus, method: "ListNames", [], timeout: timeout)
        } catch { throw .call(error) }
        guard reply.count == 1, let names = reply[0].stringArray else { throw .malformed("ListNames answered no list of names") }
        return names.filter(MPRISPlayerManager.isPlayerName)
    }

    /// Calls `handler` on the bus thread with each `PropertiesChanged` of a player's
    /// `org.mpris.MediaPlayer2.Player` that names `PlaybackStatus` or `CanPause`, and the
    /// unique name that sent it. Other changes (metadata, position) cost a decode each.
    package func followProperties(
        _ handler: @escaping @Sendable (_ sender: String, MPRISPlayerProperties) -> Void
    ) -> SignalSubscription {
        let rule = MatchRule(interface: StandardInterface.properties, member: "PropertiesChanged",
                             path: MPRISPlayer.objectPath, arg0: MPRISPlayer.playerInterface)
        return connection.subscribeNow(rule) { message in
            guard let sender = message.sender, let arguments = try? message.arguments(),
                  let changed = MPRISPlayerProperties.decodeChanged(arguments), !changed.isEmpty else { return }
            handler(sender, changed)
        }
    }

    /// The player's `PlaybackStatus` and `CanPause` (`GetAll`).
    package func properties(of player: String) async throws(MPRISClientError) -> MPRISPlayerProperties {
        try MPRISPlayerProperties.decodeGetAll(
            await call(player, StandardInterface.properties, "GetAll", [.string(MPRISPlayer.playerInterface)]))
    }

    /// The player's `PlaybackStatus` (`Get`).
    package func playbackStatus(of player: String) async throws(MPRISClientError) -> MPRISPlaybackStatus {
        try MPRISPlayerProperties.decodePlaybackStatus(
            await call(player, StandardInterface.properties, "Get", [.string(MPRISPlayer.playerInterface), .string("PlaybackStatus")]))
    }

    /// Sends `command` and returns once the player accepted it (`earshot remote`). The
    /// transport methods have no output: whatever an answer holds is not read.
    package func send(_ command: MPRISTransportCommand, to player: String) async throws(MPRISClientError) {
        try await withCheckedContinuation { done in send(command, to: player) { done.resume(returning: $0) } }.get()
    }

    /// Sends `command` now, ahead of whatever the connection sends after this returns (a
    /// reply to the call being handled included), and calls `completion` with the player's
    /// answer. A command decided while a call is handled is then on the bus before that
    /// call's reply: a process that hosts the arbiter and exits once its deactivation is
    /// answered has sent the `Play` that the deactivation decided (from a task, it could
    /// still be unsent at the exit, and the player it paused stayed paused).
    package func send(_ command: MPRISTransportCommand, to player: String,
                      completion: @escaping @Sendable (Result<Void, MPRISClientError>) -> Void) {
        let message: DBusMessage
        do {
            message = try DBusMessage.methodCall(destination: player, path: MPRISPlayer.objectPath, interface: MPRISPlayer.playerInterface,
                                                 method: command.method, arguments: command.arguments)
        } catch {
            completion(.failure(.call(error)))
            return
        }
        connection.send(message, timeout: timeout) { reply in completion(reply.map { _ in () }.mapError { .call($0) }) }
    }

    private func call(_ player: String, _ interface: String, _ method: String, _ arguments: [DBusValue]) async throws(MPRISClientError) -> [DBusValue] {
        do {
            return try await connection.call(destination: player, path: MPRISPlayer.objectPath, interface: interface,
                                             method: method, arguments, timeout: timeout)
        } catch { throw .call(error) }
    }
}
