public import DBus
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Holds a ``ScreenSaverStandIn``'s answers until a test opens it: a busy saver, with the
/// test deciding when it answers rather than a delay a loaded machine could outrun.
public final class ScreenSaverAnswerGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    public init() {}

    /// Lets every answer held, and every later one, go.
    public func open() {
        for _ in 0..<64 { semaphore.signal() }
    }

    /// The saver's bus thread, before an answer: waits until opened (10 s at most, so that a
    /// test that never opens it fails rather than hangs).
    func wait() {
        _ = semaphore.wait(timeout: .now() + 10)
    }
}

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
    ///   - gate: blocks this connection before each answer until the test opens it, as a busy
    ///     saver would.
    public init(_ bus: PrivateBus, name: String = "org.freedesktop.ScreenSaver", locked: Bool,
                signalBeforeAnswer: Bool? = nil, answerGate gate: ScreenSaverAnswerGate? = nil) async throws {
        self.name = name
        path = try ObjectPath("/" + name.replacingOccurrences(of: ".", with: "/"))
        connection = try DBusConnection(.address(bus.address))
        let state = Locked(locked), questions = self.questions, connection = self.connection, path = self.path
        self.locked = state
        object = try connection.export([
            DBusInterface(name, methods: [
                DBusMethod("GetActive", outputs: [.init("active", .boolean)]) { _ in
                    gate?.wait()
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
