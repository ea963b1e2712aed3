import DBus
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A screen saver on a private bus, as a desktop runs one: owns `name` (the freedesktop
/// or GNOME interface name), answers `GetActive` with its state, and sends
/// `ActiveChanged` when the state changes.
public final class ScreenSaverStandIn: Sendable {
    public let name: String
    public let path: ObjectPath
    public let connection: DBusConnection
    /// How many `GetActive` calls it has answered.
    public let questions = Locked(0)
    private let locked: Locked<Bool>
    private let object: DBusExportedObject

    /// - Parameters:
    ///   - signalBeforeAnswer: sends `ActiveChanged(value)` just before each answer (a
    ///     saver whose state changed while the question was on its way).
    ///   - delay: blocks this connection that long before answering, as a busy saver would.
    public init(_ bus: PrivateBus, name: String = "org.freedesktop.ScreenSaver", locked: Bool,
                signalBeforeAnswer: Bool? = nil, answerAfter delay: Duration = .zero) async throws {
        self.name = name
        path = try ObjectPath("/" + name.replacingOccurrences(of: ".", with: "/"))
        connection = try DBusConnection(.address(bus.address))
        let state = Locked(locked), questions = self.questions, connection = self.connection, path = self.path
        self.locked = state
        object = try connection.export([
            DBusInterface(name, methods: [
                DBusMethod("GetActive", outputs: [.init("active", .boolean)]) { _ in
                    if delay > .zero {
                        usleep(UInt32(delay.components.seconds * 1_000_000 + delay.components.attoseconds / 1_000_000_000_000))
                    }
                    if let signalBeforeAnswer {
                        try connection.send(DBusMessage.signal(path: path, interface: name, name: "ActiveChanged",
                                                               arguments: [.boolean(signalBeforeAnswer)]))
                    }
                    questions.withLock { $0 += 1 }
                    return [.boolean(state.value)]
                },
            ], signals: [DBusSignalDeclaration("ActiveChanged", arguments: [.init("active", .boolean)])]),
        ], at: path)
        guard try await connection.requestName(name) == .primaryOwner else {
            throw TestFailure("the stand-in screen saver could not own \(name)")
        }
    }

    /// Locks or unlocks the screen, telling everyone.
    public func set(locked: Bool) throws {
        self.locked.withLock { $0 = locked }
        try object.emit("ActiveChanged", interface: name, [.boolean(locked)])
    }

    deinit { connection.close() }
}
