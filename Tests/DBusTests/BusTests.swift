import DBus
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import TestSupport

/// A service with one exported object, on its own private bus, and a client connection.
final class Fixture: Sendable {
    let bus: PrivateBus
    let server: DBusConnection
    let client: DBusConnection
    let object: DBusExportedObject
    let volume = Locked(0.5)
    static let interface = "org.earshot.Test"

    init() throws {
        bus = try PrivateBus()
        server = try DBusConnection(.address(bus.address))
        client = try DBusConnection(.address(bus.address))
        let volume = self.volume
        object = try server.export([
            DBusInterface(
                Fixture.interface,
                methods: [
                    DBusMethod("Echo", inputs: [.init("value", .variant)], outputs: [.init("value", .variant)]) { call in
                        call.arguments
                    },
                    DBusMethod("Add", inputs: [.init("a", .int32), .init("b", .int32)], outputs: [.init("sum", .int32)]) { call in
                        guard case .int32(let a) = call.arguments[0], case .int32(let b) = call.arguments[1] else { return [] }
                        let (sum, overflow) = a.addingReportingOverflow(b)
                        if overflow { throw DBusError.invalidArgs("\(a) + \(b) overflows int32") }
                        return [.int32(sum)]
                    },
                    DBusMethod("Sleep", inputs: [.init("ms", .uint32)]) { call in
                        if case .uint32(let ms) = call.arguments[0] { usleep(ms * 1000) }
                        return []
                    },
                    DBusMethod("Caller", outputs: [.init("sender", .string)]) { call in [.string(call.sender ?? "")] },
                ],
                properties: [
                    DBusProperty("Volume", .double, get: { .double(volume.withLock { $0 }) }, set: { value, _ in
                        guard let v = value.double, v.isFinite, v >= 0 else { throw DBusError.invalidArgs("Volume must be a finite number ≥ 0, not \(value)") }
                        volume.withLock { $0 = v }
                    }),
                    DBusProperty("Name", .string, changeSignal: .const, get: { .string("fixture") }),
                    DBusProperty("Position", .int64, changeSignal: .false, get: { .int64(42) }),
                ],
                signals: [DBusSignalDeclaration("Ping", arguments: [.init("n", .int32)])]
            ),
        ], at: "/org/earshot/Test")
    }

    func call(_ method: String, _ args: [DBusValue] = [], interface: String = Fixture.interface,
              path: ObjectPath = "/org/earshot/Test") async throws(DBusError) -> [DBusValue] {
        try await client.call(destination: server.uniqueName, path: path, interface: interface, method: method, args)
    }

    func properties(_ method: String, _ args: [DBusValue]) async throws(DBusError) -> [DBusValue] {
        try await call(method, args, interface: StandardInterface.properties)
    }
}


@Suite("DBus over a private bus")
struct BusTests {
    static let samples: [DBusValue] = [
        .byte(255), .boolean(true), .int16(-3), .uint16(65535), .int32(Int32.min), .uint32(UInt32.max),
        .int64(Int64.min), .uint64(UInt64.max), .double(-0.25), .string("héllo ✓"), .objectPath("/a/b_c"),
        .signature(try! DBusSignature("a{sv}(ii)")), .variant(.variant(.int32(7))),
        .array(.string, []), .strings(["a", "b"]), .array(.array(.byte), [.array(.byte, [1, 2].map(DBusValue.byte))]),
        .vardict(["k": .double(1), "m": .vardict(["x": .strings(["y"])])]),
        .dictionary(key: .uint32, value: .objectPath, [.init(.uint32(1), .objectPath("/x"))]),
        .structure([.string("s"), .structure([.int32(1), .array(.double, [.double(2)])])]),
    ]

    @Test("calls sent back to back are answered each in its place, an error reply failing only its own call")
    func callsBackToBack() async throws {
        let fixture = try Fixture()
        let messages = try [
            DBusMessage.methodCall(destination: fixture.server.uniqueName, path: "/org/earshot/Test", interface: Fixture.interface,
                                   method: "Sleep", arguments: [.uint32(50)]),
            DBusMessage.methodCall(destination: fixture.server.uniqueName, path: "/org/earshot/Test", interface: Fixture.interface,
                                   method: "Add", arguments: [.int32(Int32.max), .int32(1)]),
            DBusMessage.methodCall(destination: fixture.server.uniqueName, path: "/org/earshot/Test", interface: Fixture.interface,
                                   method: "Add", arguments: [.int32(2), .int32(3)]),
            DBusMessage.requestName("org.earshot.TestBackToBack"),
        ]
        let replies = await fixture.client.calls(messages)
        #expect(replies.count == 4)
        #expect((try? replies[0].get().arguments()) == [])
        if case .failure(let error) = replies[1] {
            #expect(error.name == DBusError.Name.invalidArgs, "\(error)")
        } else {
            Issue.record("the overflowing Add succeeded: \(replies[1])")
        }
        #expect((try? replies[2].get().arguments()) == [.int32(5)])
        #expect((try? NameRequestReply(replies[3].get())) == .primaryOwner)
        #expect(await fixture.client.calls([]).isEmpty)
    }

    @Test("every value type survives a round trip through dbus-daemon", arguments: samples)
    func echo(_ value: DBusValue) async throws {
        let fixture = try Fixture()
        let reply = try await fixture.call("Echo", [.variant(value)])
        #expect(reply == [.variant(value)])
    }

    @Test("handler errors and arguments reach the caller")
    func methodErrors() async throws {
        let fixture = try Fixture()
        #expect(try await fixture.call("Add", [.int32(2), .int32(40)]) == [.int32(42)])
        #expect(await dbusErrorName { _ = try await fixture.call("Add", [.int32(Int32.max), .int32(1)]) } == DBusError.Name.invalidArgs)
        #expect(await dbusErrorName { _ = try await fixture.call("Add", [.string("2"), .int32(1)]) } == DBusError.Name.invalidArgs)
        #expect(await dbusErrorName { _ = try await fixture.call("Add", []) } == DBusError.Name.invalidArgs)
        #expect(await dbusErrorName { _ = try await fixture.call("Nope") } == DBusError.Name.unknownMethod)
        #expect(await dbusErrorName { _ = try await fixture.call("Echo", [.variant(.int32(1))], interface: "org.earshot.Other") } == DBusError.Name.unknownInterface)
        #expect(await dbusErrorName { _ = try await fixture.call("Echo", [.variant(.int32(1))], path: "/elsewhere") } == DBusError.Name.unknownObject)
        #expect(try await fixture.call("Caller").first?.string == fixture.client.uniqueName)
    }

    @Test("properties: Get, GetAll, Set with access rules and type checks")
    func properties() async throws {
        let f = try Fixture()
        let i = DBusValue.string(Fixture.interface)
        #expect(try await f.properties("Get", [i, .string("Volume")]) == [.variant(.double(0.5))])
        let all = try await f.properties("GetAll", [i]).first?.stringKeyedDictionary
        #expect(all?["Volume"] == .double(0.5))
        #expect(all?["Name"] == .string("fixture"))
        #expect(all?["Position"] == .int64(42))
        _ = try await f.properties("Set", [i, .string("Volume"), .variant(.double(0.75))])
        #expect(f.volume.withLock { $0 } == 0.75)

        #expect(await dbusErrorName { _ = try await f.properties("Set", [i, .string("Volume"), .variant(.string("loud"))]) } == DBusError.Name.invalidArgs)
        #expect(await dbusErrorName { _ = try await f.properties("Set", [i, .string("Volume"), .variant(.double(.nan))]) } == DBusError.Name.invalidArgs)
        #expect(await dbusErrorName { _ = try await f.properties("Set", [i, .string("Name"), .variant(.string("x"))]) } == DBusError.Name.propertyReadOnly)
        #expect(await dbusErrorName { _ = try await f.properties("Get", [i, .string("Missing")]) } == DBusError.Name.unknownProperty)
        #expect(await dbusErrorName { _ = try await f.properties("Get", [.string("org.earshot.Nope"), .string("Volume")]) } == DBusError.Name.unknownInterface)
        #expect(await dbusErrorName { _ = try await f.properties("Get", [i]) } == DBusError.Name.invalidArgs)
        #expect(await dbusErrorName { _ = try await f.properties("Frobnicate", []) } == DBusError.Name.unknownMethod)
        #expect(f.volume.withLock { $0 } == 0.75, "rejected sets change nothing")
    }

    @Test("PropertiesChanged carries values and invalidations")
    func propertiesChanged() async throws {
        let f = try Fixture()
        let received = Locked<[[DBusValue]]>([])
        let subscription = try await f.client.subscribe(MatchRule(interface: StandardInterface.properties, member: "PropertiesChanged")) { message in
            received.withLock { $0.append((try? message.arguments()) ?? []) }
        }
        try f.object.emitPropertiesChanged(interface: Fixture.interface, changed: ["Volume": .double(1)], invalidated: ["Name"])
        try await eventually("PropertiesChanged") { received.withLock { !$0.isEmpty } }
        let args = received.withLock { $0[0] }
        #expect(args == [.string(Fixture.interface), .vardict(["Volume": .double(1)]), .strings(["Name"])])
        subscription.cancel()
    }

    @Test("introspection lists the declarations, annotations and child nodes")
    func introspection() async throws {
        let f = try Fixture()
        let xml = try #require(try await f.call("Introspect", interface: StandardInterface.introspectable).first?.string)
        let document = try XMLDocument(xmlString: xml)
        let interface = try #require(try document.nodes(forXPath: "/node/interface[@name='org.earshot.Test']").first as? XMLElement)
        let methods = try interface.nodes(forXPath: "method/@name").compactMap { $0.stringValue }
        #expect(Set(methods) == ["Echo", "Add", "Sleep", "Caller"])
        let addIn = try interface.nodes(forXPath: "method[@name='Add']/arg[@direction='in']/@type").compactMap { $0.stringValue }
        #expect(addIn == ["i", "i"])
        #expect(try interface.nodes(forXPath: "property[@name='Volume']/@access").first?.stringValue == "readwrite")
        #expect(try interface.nodes(forXPath: "property[@name='Position']/annotation/@value").first?.stringValue == "false")
        #expect(try interface.nodes(forXPath: "signal[@name='Ping']/arg/@type").first?.stringValue == "i")
        for standard in [StandardInterface.properties, StandardInterface.introspectable, StandardInterface.peer] {
            #expect(try !document.nodes(forXPath: "/node/interface[@name='\(standard)']").isEmpty)
        }
        let parent = try #require(try await f.call("Introspect", interface: StandardInterface.introspectable, path: "/org").first?.string)
        #expect(try XMLDocument(xmlString: parent).nodes(forXPath: "/node/node/@name").compactMap { $0.stringValue } == ["earshot"])
    }

    @Test("gdbus sees the same object: Peer.Ping, introspection, and a call")
    func gdbus() async throws {
        let f = try Fixture()
        let env = f.bus.environment
        let ping = try await run("gdbus", ["call", "--session", "--dest", f.server.uniqueName, "--object-path", "/org/earshot/Test",
                                           "--method", "org.freedesktop.DBus.Peer.Ping"], environment: env)
        #expect(ping.status == 0, "\(ping.stderr)")
        let add = try await run("gdbus", ["call", "--session", "--dest", f.server.uniqueName, "--object-path", "/org/earshot/Test",
                                          "--method", "org.earshot.Test.Add", "20", "22"], environment: env)
        #expect(add.output == "(42,)")
        let bad = try await run("gdbus", ["call", "--session", "--dest", f.server.uniqueName, "--object-path", "/org/earshot/Test",
                                          "--method", "org.earshot.Test.Add", "20"], environment: env)
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("InvalidArgs"))
    }

    @Test("signals emitted from many threads at once all arrive")
    func crossThreadSignals() async throws {
        let f = try Fixture()
        let count = Locked(0)
        _ = try await f.client.subscribe(MatchRule(interface: Fixture.interface, member: "Ping")) { _ in count.withLock { $0 += 1 } }
        await withTaskGroup(of: Void.self) { group in
            for n in 0..<200 {
                group.addTask { try? f.object.emit("Ping", interface: Fixture.interface, [.int32(Int32(n))]) }
            }
        }
        try await eventually("200 signals") { count.withLock { $0 } == 200 }
        #expect(throws: DBusError.self) { try f.object.emit("Ping", interface: Fixture.interface, [.string("wrong")]) }
        #expect(throws: DBusError.self) { try f.object.emit("Undeclared", interface: Fixture.interface) }
    }

    @Test("an error reply's text from another process is kept up to maximumErrorText scalars, the cut said")
    func longErrorTextIsCut() async throws {
        let bus = try PrivateBus()
        let server = try DBusConnection(.address(bus.address))
        let client = try DBusConnection(.address(bus.address))
        let long = String(repeating: "é", count: 100_000)
        let object = try server.export([
            DBusInterface("org.earshot.Test", methods: [
                DBusMethod("Fail") { _ in throw DBusError(DBusError.Name.failed, long) },
                DBusMethod("FailShort") { _ in throw DBusError(DBusError.Name.failed, "short and whole") },
            ]),
        ], at: "/test")
        defer { object.unexport() }
        func message(_ method: String) async -> String? {
            do {
                _ = try await client.call(destination: server.uniqueName, path: "/test", interface: "org.earshot.Test", method: method)
                return nil
            } catch { return error.message }
        }
        let cut = try #require(await message("Fail"))
        let kept = cut.hasPrefix(String(repeating: "é", count: DBusMessage.maximumErrorText) + "… (cut: 200000 bytes in all)")
        let length = cut.unicodeScalars.count
        #expect(kept, "the text kept begins \(cut.prefix(40)), ends \(cut.suffix(40))")
        #expect(length < DBusMessage.maximumErrorText + 40, "\(length) scalars kept")
        #expect(await message("FailShort") == "short and whole")
    }

    @Test("a call times out with NoReply and the connection keeps working")
    func timeout() async throws {
        let f = try Fixture()
        // The service takes 3 s to answer. Getting NoReply at all proves the 100 ms timeout
        // fired: had it not, the late reply would have made the call succeed. (Wall-clock
        // bounds here measured the test runner's thread pool under load, not the timeout.)
        let message = try DBusMessage.methodCall(destination: f.server.uniqueName, path: "/org/earshot/Test",
                                                 interface: Fixture.interface, method: "Sleep", arguments: [.uint32(3000)])
        #expect(await dbusErrorName { _ = try await f.client.call(message, timeout: .milliseconds(100)) } == DBusError.Name.noReply)
        // The client still works (the service answers once its 3 s sleep ends).
        try await eventually("the service to answer again", timeout: 10) {
            (try? await f.call("Add", [.int32(1), .int32(1)])) == [.int32(2)]
        }
    }

    @Test("name queue: flags, NameAcquired/NameLost, replacement, and return on disconnect")
    func names() async throws {
        let f = try Fixture()
        let third = try DBusConnection(.address(f.bus.address))
        let name = "org.earshot.Queue"
        let events = Locked<[String]>([])
        _ = try await f.server.watchOwnNames { n, acquired in if n == name { events.withLock { $0.append(acquired ? "acquired" : "lost") } } }
        let owners = Locked<[String?]>([])
        _ = try await f.client.watchNameOwner(name) { change in owners.withLock { $0.append(change.newOwner) } }

        #expect(try await f.server.requestName(name, flags: [.allowReplacement]) == .primaryOwner)
        #expect(try await f.server.requestName(name, flags: [.allowReplacement]) == .alreadyOwner)
        #expect(try await third.requestName(name, flags: [.doNotQueue]) == .exists)
        #expect(try await third.requestName(name, flags: [.allowReplacement]) == .inQueue)
        #expect(try await f.client.requestName(name, flags: [.allowReplacement, .replaceExisting]) == .primaryOwner)
        #expect(try await f.client.nameOwner(name) == f.client.uniqueName)
        // The replaced owner goes to the head of the queue.
        #expect(try await f.client.nameQueue(name) == [f.client.uniqueName, f.server.uniqueName, third.uniqueName])
        try await eventually("NameLost") { events.withLock { $0 } == ["acquired", "lost"] }

        f.client.close()
        try await eventually("the name returns to the previous owner") { try await third.nameOwner(name) == f.server.uniqueName }
        try await eventually("NameAcquired again") { events.withLock { $0 } == ["acquired", "lost", "acquired"] }
        #expect(owners.withLock { $0 }.first == f.server.uniqueName)
        #expect(try await f.server.releaseName(name) == .released)
        #expect(try await third.nameOwner(name) == third.uniqueName)
        await #expect(throws: DBusError.self) { try await third.requestName(":1.5") }
        await #expect(throws: DBusError.self) { try await third.requestName("no dots") }
        // Released without waiting: the next in the queue owns it, and a bad name is refused
        // before it reaches the bus.
        try third.releaseNameWithoutReply(name)
        try await eventually("the release without a reply to take effect") { try await third.nameOwner(name) != third.uniqueName }
        #expect(throws: DBusError.self) { try third.releaseNameWithoutReply("no dots") }
    }

    @Test("a closed connection throws Disconnected instead of hanging")
    func closed() async throws {
        let f = try Fixture()
        f.client.close()
        try await eventually("close") { !f.client.isConnected }
        #expect(await dbusErrorName { _ = try await f.call("Add", [.int32(1), .int32(1)]) } == DBusError.Name.disconnected)
    }

    @Test("dropping a connection ends its bus thread, also with subscriptions and exports")
    func noLeaks() async throws {
        let bus = try PrivateBus()
        @Sendable func threads() throws -> Int { try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count }
        // Warm up the runtime's own threads first.
        _ = try DBusConnection(.address(bus.address))
        try await Task.sleep(for: .milliseconds(100))
        let before = try threads()
        for _ in 0..<20 {
            let connection = try DBusConnection(.address(bus.address))
            _ = try await connection.watchOwnNames { _, _ in }
            _ = try await connection.watchNameOwner("org.earshot.X") { _ in }
            try connection.export([DBusInterface("org.earshot.T")], at: "/t")
            _ = try await connection.requestName("org.earshot.Leak")
        }
        try await eventually("bus threads to end", timeout: 5) { try threads() <= before + 2 }
    }

    /// glibc reuses an ended thread's descriptor, and so its `pthread_t`, for the next thread
    /// it starts with the same stack size. A closed connection kept its bus thread's id, so such
    /// a thread passed for the bus thread, and work it asked for ran at once on the released
    /// libdbus connection (a crash in `earshot play`, glibc's `__pthread_tpp_change_priority`
    /// assertion, once tasks ran on threads started after its bus was gone).
    @Test("a closed connection refuses work asked from threads started after its bus thread ended")
    func closedConnectionRefusesLaterThreads() async throws {
        let bus = try PrivateBus()
        let connection = try DBusConnection(.address(bus.address))
        connection.close()
        try await eventually("close") { !connection.isConnected }
        try await Task.sleep(for: .milliseconds(100))  // the bus thread returns and ends
        final class Attempt: @unchecked Sendable {  // written by one thread, read after its join
            let connection: DBusConnection
            var refused = false
            init(_ connection: DBusConnection) { self.connection = connection }
        }
        var refusals = 0
        for _ in 0..<20 {
            let attempt = Attempt(connection)
            var thread = pthread_t()
            let context = Unmanaged.passRetained(attempt).toOpaque()
            // Default attributes, as the bus thread's: the size whose stacks glibc reuses.
            let started = pthread_create(&thread, nil, { argument in
                let attempt = Unmanaged<Attempt>.fromOpaque(argument!).takeRetainedValue()
                do {
                    let ping = try DBusMessage.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                          interface: "org.freedesktop.DBus.Peer", method: "Ping")
                    ping.setNoReply()
                    try attempt.connection.send(ping)
                } catch {
                    attempt.refused = true
                }
                return nil
            }, context)
            try #require(started == 0)
            pthread_join(thread, nil)
            if attempt.refused { refusals += 1 }
        }
        #expect(refusals == 20, "a send on the closed connection was taken \(20 - refusals) times of 20")
    }

    @Test("a missing bus is a clear error")
    func missingBus() {
        #expect(throws: DBusError.self) { try DBusConnection(.address("unix:path=/nonexistent/bus")) }
    }
}
