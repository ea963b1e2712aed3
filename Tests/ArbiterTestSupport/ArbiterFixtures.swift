package import Arbiter
package import DBus
package import TestSupport

/// For the tests that need an arbiter of their own (ArbiterTests, and EarshotTests' session
/// tests against an in-process arbiter): a target of its own, so that neither imports the
/// other's modules.
/// One process's connection to the arbiter, recording the signals it receives.
package final class Client: Sendable {
    package let connection: DBusConnection
    package let signals = Locked<[(String, [DBusValue])]>([])
    package var id: String { connection.uniqueName }

    package init(_ bus: PrivateBus) async throws {
        connection = try DBusConnection(.address(bus.address))
        let signals = self.signals
        _ = try await connection.subscribe(MatchRule(interface: ArbiterName.interface), addMatch: false) { message in
            signals.withLock { $0.append((message.member ?? "", (try? message.arguments()) ?? [])) }
        }
    }

    @discardableResult
    package func call(_ method: String, _ args: [DBusValue] = []) async throws -> [DBusValue] {
        try await connection.call(destination: ArbiterName.bus, path: ArbiterName.path, interface: ArbiterName.interface, method: method, args)
    }

    @discardableResult
    package func register(_ app: String, category: String = "playback", options: [String] = [], active: Bool = false,
                  producing: Bool = false, remote: Bool = false) async throws -> [String: DBusValue] {
        try await call("Register", Self.registerArguments(app, category: category, options: options, active: active,
                                                          producing: producing, remote: remote)).first?.stringKeyedDictionary ?? [:]
    }

    /// `Register`'s arguments for `app` in that state.
    package static func registerArguments(_ app: String, category: String = "playback", options: [String] = [], active: Bool = false,
                                  producing: Bool = false, remote: Bool = false) -> [DBusValue] {
        let state: [String: DBusValue] = ["category": .string(category), "options": .strings(options), "active": .boolean(active),
                                          "producingSound": .boolean(producing), "remoteCommands": .boolean(remote)]
        return [.string(app), .vardict(state)]
    }

    package func received(_ member: String) -> [[DBusValue]] { signals.value.filter { $0.0 == member }.map(\.1) }
}

/// A private bus with an arbiter owning the name.
package final class ArbiterFixture: Sendable {
    package let bus: PrivateBus
    package let host: DBusConnection
    package let arbiter: Arbiter

    /// An arbiter on the system clock, or on `clock` (a test's, moved by hand).
    package init(clock: (any ArbiterClock)? = nil, configure: (inout Arbiter.Configuration) -> Void = { _ in }) async throws {
        bus = try PrivateBus()
        host = try DBusConnection(.address(bus.address))
        var configuration = Arbiter.Configuration()
        // No sound server unless a test names one: libpulse's default is the machine's own
        // server, whose other streams (a test run beside this one once) are not this test's.
        configuration.soundServer = .none
        configure(&configuration)
        arbiter = try Arbiter(connection: host, configuration: configuration, clock: clock ?? SystemArbiterClock())
        // The match rules go out without waiting; a round trip makes sure they are in place.
        _ = try await host.nameOwner(StandardInterface.bus)
        let reply = try await host.requestName(ArbiterName.bus)
        guard reply == .primaryOwner else { throw TestFailure("the arbiter's name on a private bus: \(reply)") }
    }

    package func target() async throws -> String? {
        try await host.call(destination: ArbiterName.bus, path: ArbiterName.path, interface: StandardInterface.properties,
                            method: "Get", [.string(ArbiterName.interface), .string("Target")]).first?.string
    }
}
