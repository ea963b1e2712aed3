@testable import Arbiter
import ArbiterTestSupport
import DBus
import SessionPolicy
import Testing
import TestSupport

/// `Target` is broadcast when the policy decides the target changed (its `targetChanged`
/// decision), and only then, after a first broadcast that states it whatever it is.
@Suite("Arbiter: the Target broadcast follows the policy's decisions")
struct ArbiterTargetTests {
    @Test("the Target values broadcast are the first one, then exactly the policy's targetChanged decisions, in order")
    func targetBroadcastsAreThePolicysDecisions() async throws {
        let f = try await ArbiterFixture()
        // Every event the arbiter applies, replayed on a policy of its own: its decisions
        // are what the arbiter must broadcast.
        let replay = Locked(SessionPolicy(configuration: f.arbiter.policy.configuration))
        let decided = Locked<[String]>([])
        f.arbiter.eventObserver.withLock { observer in
            observer = { event in
                let decisions = replay.withLock { $0.apply(event) }
                for case let .targetChanged(target) in decisions { decided.withLock { $0.append(target?.busName ?? "") } }
            }
        }
        let broadcast = Locked<[String]>([])
        let watcher = try DBusConnection(.address(f.bus.address))
        defer { watcher.close() }
        _ = try await watcher.subscribe(MatchRule(interface: StandardInterface.properties, member: "PropertiesChanged", path: ArbiterName.path)) { message in
            guard let changed = (try? message.arguments())?.dropFirst().first?.stringKeyedDictionary,
                  let target = changed[ArbiterProtocol.Property.target.rawValue]?.string else { return }
            broadcast.withLock { $0.append(target) }
        }

        let a = try await Client(f.bus)
        let b = try await Client(f.bus)
        try await a.register("a", options: ["mixWithOthers"], active: true, producing: true, remote: true)  // mixable: no target
        try await a.call("SetCategory", [.string("playback"), .strings([]), .string("default")])  // eligible, sounding → a
        try await a.call("ReportSound", [.boolean(true)])                  // the same: nothing
        try await b.register("b", remote: true)                            // silent: nothing
        try await b.call("ReportSound", [.boolean(true)])                  // sounded last (and interrupts a) → b
        try await a.call("SetActive", [.boolean(true), .boolean(false)])   // interrupts b, silent: nothing
        try await a.call("ReportSound", [.boolean(true)])                  // → a
        try await a.call("Unregister")                                     // → b
        try await b.call("SetRemoteCommandsEnabled", [.boolean(false)])    // → none
        _ = try await watcher.nameOwner(StandardInterface.bus)

        let expected = ["", a.id, b.id, a.id, b.id, ""]
        try await eventually("the broadcasts") { broadcast.value.count >= expected.count }
        #expect(decided.value == Array(expected.dropFirst()), "the policy's decisions")
        #expect(broadcast.value == expected, "the first broadcast states the target, then one per decision")
    }
}
