import DBus
import Foundation
import Testing
import TestSupport

/// The MPRIS object and interface names.
enum MPRIS {
    static let path: ObjectPath = "/org/mpris/MediaPlayer2"
    static let root = "org.mpris.MediaPlayer2"
    static let player = "org.mpris.MediaPlayer2.Player"
    static let namePrefix = "org.mpris.MediaPlayer2."
}

/// One `earshot publish` process on a bus (its own private bus unless one is given),
/// with a client connection to talk to it.
final class Publisher: Sendable {
    let bus: PrivateBus
    let process: Child
    /// The name given to `--name`.
    let app: String
    /// The bus name it requested, `org.mpris.MediaPlayer2.…`, as it printed it.
    let busName: String
    /// Its unique connection name, as it printed it.
    let uniqueName: String
    /// Whether it printed that it owns the name (rather than queued for it).
    let startedAsOwner: Bool
    let client: DBusConnection

    /// The standard three titles, for tests that walk them.
    static let titles = ["One", "Two", "Three"]

    /// Starts `earshot publish --name APP` with the given titles and options and waits
    /// for its `published … as :1.N (…)` line. `app` defaults to the calling test's
    /// name, so that every test publishes under a name of its own.
    init(
        app: String = #function, titles: [String] = Publisher.titles, _ options: [String] = [],
        on bus: PrivateBus? = nil
    ) async throws {
        let app = Publisher.appName(from: app)
        self.bus = try bus ?? PrivateBus()
        self.app = app
        let arguments = ["publish", "--name", app] + titles.flatMap { ["--title", $0] } + options
        process = try Child(Paths.earshot, arguments, environment: self.bus.environment)
        try await process.waitForOutput("\n")
        let first = process.stdout.split(separator: "\n").first.map(String.init) ?? ""
        guard let match = first.wholeMatch(of: /published (\S+) as (:\S+) \((owner|queued behind its owner)\)/) else {
            throw TestFailure("unexpected first line from earshot publish: “\(first)”; stderr: \(process.stderr)")
        }
        busName = String(match.1)
        uniqueName = String(match.2)
        startedAsOwner = match.3 == "owner"
        client = try DBusConnection(.address(self.bus.address))
    }

    /// A valid MPRIS app name from a test function's name: `statusAndMetadata()` →
    /// `statusAndMetadata`.
    static func appName(from function: String) -> String {
        let name = function.prefix { $0 != "(" }.filter { $0.isASCII && ($0.isLetter || $0.isNumber) }
        return name.isEmpty || name.first!.isNumber ? "e2e" + name : String(name)
    }

    /// The name playerctl knows the player by: the bus name without the MPRIS prefix.
    var playerName: String { String(busName.dropFirst(MPRIS.namePrefix.count)) }

    /// The id of track `index`, as the MPRIS layer makes it.
    func trackID(_ index: Int) -> String { "/org/earshot/\(app)/Track/\(index)" }

    // MARK: What it printed

    /// The command lines it printed after the `published` line.
    var commands: [String] { Array(process.settledStdout.split(separator: "\n").dropFirst().map(String.init)) }

    /// Waits until it prints `line` (a whole line).
    func waitForLine(_ line: String, timeout: Double = 5) async throws {
        try await eventually("earshot to print “\(line)”; it printed \(commands)", timeout: timeout) {
            commands.contains(line)
        }
    }

    // MARK: Command-line clients

    /// Runs `playerctl -p PLAYER ARGS…` on this bus and returns its output, failing the
    /// test when playerctl fails.
    @discardableResult
    func playerctlOutput(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let result = try await run("playerctl", ["-p", playerName] + arguments, environment: bus.environment)
        #expect(result.status == 0, "playerctl \(arguments.joined(separator: " ")): \(result.stderr)", sourceLocation: sourceLocation)
        return result.output
    }

    /// `gdbus call` of `interface.method` on the MPRIS object.
    func gdbus(_ method: String, interface: String = MPRIS.player, _ arguments: [String] = []) async throws -> CommandResult {
        try await run("gdbus", ["call", "--session", "--dest", busName, "--object-path", MPRIS.path.rawValue,
                                "--method", "\(interface).\(method)"] + arguments, environment: bus.environment)
    }

    /// `dbus-send --print-reply=literal` of `interface.method` on the MPRIS object (or another).
    func dbusSend(_ method: String, interface: String, path: ObjectPath = MPRIS.path, _ arguments: [String] = []) async throws -> CommandResult {
        try await run("dbus-send", ["--session", "--print-reply=literal", "--dest=\(busName)", path.rawValue,
                                    "\(interface).\(method)"] + arguments, environment: bus.environment)
    }

    // MARK: D-Bus calls through the DBus module

    @discardableResult
    func call(_ method: String, _ arguments: [DBusValue] = [], interface: String = MPRIS.player,
              path: ObjectPath = MPRIS.path) async throws(DBusError) -> [DBusValue] {
        try await client.call(destination: busName, path: path, interface: interface, method: method, arguments)
    }

    func get(_ property: String, interface: String = MPRIS.player) async throws -> DBusValue {
        let reply = try await call("Get", [.string(interface), .string(property)], interface: StandardInterface.properties)
        return try #require(reply.first).unwrapped
    }

    func getAll(_ interface: String = MPRIS.player) async throws -> [String: DBusValue] {
        let reply = try await call("GetAll", [.string(interface)], interface: StandardInterface.properties)
        return try #require(reply.first?.stringKeyedDictionary)
    }

    func set(_ property: String, _ value: DBusValue, interface: String = MPRIS.player) async throws(DBusError) {
        try await call("Set", [.string(interface), .string(property), .variant(value)], interface: StandardInterface.properties)
    }

    /// The current metadata, values unwrapped.
    func metadata() async throws -> [String: DBusValue] {
        try #require(try await get("Metadata").stringKeyedDictionary)
    }

    func title() async throws -> String? { try await metadata()["xesam:title"]?.string }

    /// `Position`, in seconds.
    func position() async throws -> Double {
        Double(try #require(try await get("Position").int64)) / 1e6
    }

    /// Checks that the process still runs and answers both a Peer ping and a property read.
    func expectResponsive(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(process.isRunning, "earshot publish exited: \(process.stderr)", sourceLocation: sourceLocation)
        try await call("Ping", interface: StandardInterface.peer)
        #expect(try await get("Identity", interface: MPRIS.root) == .string("Earshot"), sourceLocation: sourceLocation)
    }

    // MARK: Signals

    /// Starts recording this publisher's PropertiesChanged and Seeked signals.
    func recordSignals() async throws -> SignalLog {
        let log = SignalLog()
        _ = try await client.subscribe(MatchRule(sender: uniqueName, interface: StandardInterface.properties,
                                                 member: "PropertiesChanged", path: MPRIS.path)) { message in
            guard message.signature == "sa{sv}as", let args = try? message.arguments(), let interface = args[0].string,
                  let changed = args[1].stringKeyedDictionary, let invalidated = args[2].stringArray else {
                log.malformed.withLock { $0 += 1 }
                return
            }
            let change = PropertiesChange(interface: interface, changed: changed, invalidated: invalidated, received: .now)
            log.changes.withLock { $0.append(change) }
        }
        _ = try await client.subscribe(MatchRule(sender: uniqueName, interface: MPRIS.player, member: "Seeked", path: MPRIS.path)) { message in
            guard message.signature == "x", case .int64(let position)? = (try? message.arguments())?.first else {
                log.malformed.withLock { $0 += 1 }
                return
            }
            log.seeks.withLock { $0.append(position) }
        }
        return log
    }
}

/// One PropertiesChanged signal, values unwrapped.
struct PropertiesChange: Sendable, CustomStringConvertible {
    let interface: String
    let changed: [String: DBusValue]
    let invalidated: [String]
    let received: ContinuousClock.Instant
    var description: String { "\(interface) \(changed) invalidated \(invalidated)" }
}

/// The signals a publisher emitted since ``Publisher/recordSignals()``.
final class SignalLog: Sendable {
    let changes = Locked<[PropertiesChange]>([])
    /// Seeked positions, in microseconds.
    let seeks = Locked<[Int64]>([])
    /// Signals whose arguments did not have the declared types.
    let malformed = Locked(0)

    var allChanges: [PropertiesChange] { changes.value }

    /// The values a Player property took, in the order they were signalled.
    func values(of property: String) -> [DBusValue] {
        allChanges.filter { $0.interface == MPRIS.player }.compactMap { $0.changed[property] }
    }

    /// The titles signalled in Metadata changes, in order.
    var titles: [String] {
        values(of: "Metadata").map { $0.stringKeyedDictionary?["xesam:title"]?.string ?? "(none)" }
    }

    /// The index of the first PropertiesChanged where `property` has `value`.
    func firstIndex(_ property: String, _ value: DBusValue) -> Int? {
        allChanges.firstIndex { $0.interface == MPRIS.player && $0.changed[property] == value }
    }

    /// Waits for a PropertiesChanged on `interface` that carries `property` (with `value`
    /// when given) and returns it.
    @discardableResult
    func waitForChange(_ property: String, _ value: DBusValue? = nil, interface: String = MPRIS.player) async throws -> PropertiesChange {
        try await eventually("PropertiesChanged with \(property)\(value.map { " = \($0)" } ?? ""); got \(allChanges)") {
            self.find(property, value, interface: interface) != nil
        }
        return try #require(find(property, value, interface: interface))
    }

    private func find(_ property: String, _ value: DBusValue?, interface: String) -> PropertiesChange? {
        allChanges.first { $0.interface == interface && $0.changed[property] != nil && (value == nil || $0.changed[property] == value) }
    }
}


/// Seconds from a playerctl position or volume line such as `12.000000`.
func seconds(_ text: String) throws -> Double {
    try #require(Double(text.trimmingCharacters(in: .whitespacesAndNewlines)), "not a number: “\(text)”")
}
