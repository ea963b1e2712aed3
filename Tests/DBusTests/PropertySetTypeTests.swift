import DBus
import Testing
import TestSupport

/// `Properties.Set` takes its value in exactly one variant (signature `ssv`): a value
/// wrapped once more, or of another type, is `InvalidArgs` and changes nothing.
@Suite("Properties.Set demands the declared type")
struct PropertySetTypeTests {
    static let refused: [DBusValue] = [
        .variant(.double(0.25)),
        .variant(.variant(.double(0.25))),
        .variant(.variant(.variant(.double(0.25)))),
        .int32(1),
        .string("0.25"),
        .array(.double, [.double(0.25)]),
        .structure([.double(0.25)]),
    ]

    @Test("a value that is not one variant around a double is refused", arguments: refused)
    func refusedValue(_ inner: DBusValue) async throws {
        let f = try Fixture()
        let error = await dbusErrorName {
            _ = try await f.properties("Set", [.string(Fixture.interface), .string("Volume"), .variant(inner)])
        }
        #expect(error == DBusError.Name.invalidArgs)
        #expect(f.volume.withLock { $0 } == 0.5, "a refused Set changed the value")
    }

    @Test("the error names the declared and the given signature")
    func message() async throws {
        let f = try Fixture()
        do {
            _ = try await f.properties("Set", [.string(Fixture.interface), .string("Volume"), .variant(.variant(.double(1)))])
            Issue.record("a nested variant was accepted")
        } catch {
            #expect(error.message.contains("“d”") && error.message.contains("“v”"), "\(error.message)")
        }
    }

    @Test("one variant around the declared type is accepted")
    func accepted() async throws {
        let f = try Fixture()
        _ = try await f.properties("Set", [.string(Fixture.interface), .string("Volume"), .variant(.double(0.25))])
        #expect(f.volume.withLock { $0 } == 0.25)
    }
}
