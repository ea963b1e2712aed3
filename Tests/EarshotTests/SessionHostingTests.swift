import Arbiter
import ArbiterTestSupport
import AudioEngine
import DBus
@testable import Earshot
import SessionPolicy
import Testing
import TestSupport

/// Issue 9: a session whose process gets the arbiter's name but cannot serve the arbiter
/// (`Arbiter(connection:)` fails) does not keep the name, which would leave every
/// session's calls unanswered.
@Suite("AudioSession hosting the arbiter")
struct SessionHostingTests {
    @Test("a session that cannot serve the arbiter when its name comes to it gives the name up")
    func sessionThatCannotHostReleasesTheName() async throws {
        let f = try await ArbiterFixture()
        let session = SessionModelTests.silentSession(f, "host")
        // Queued for the arbiter's name behind the fixture's host (on the connection the
        // session keeps for that), registered with its arbiter.
        try await session.connect()
        let connection = try #require(session.arbiterConnection)
        #expect(try await f.host.nameQueue(ArbiterName.bus) == [f.host.uniqueName, connection.uniqueName])
        // An object at the arbiter's path on that connection: the arbiter cannot be
        // exported there when the name arrives.
        try connection.export([DBusInterface("org.example.Occupant")], at: ArbiterName.path)

        let watcher = try DBusConnection(.address(f.bus.address))
        let owners = Locked<[String?]>([])
        let subscription = try await watcher.watchNameOwner(ArbiterName.bus) { change in owners.withLock { $0.append(change.newOwner) } }
        defer { subscription.cancel() }
        _ = try await watcher.nameOwner(StandardInterface.bus)  // a round trip: the match rule is in place

        f.arbiter.stop()
        #expect(try await f.host.releaseName(ArbiterName.bus) == .released)
        try await eventually("the name to come to the session and be given up", timeout: 5) {
            owners.value.contains(connection.uniqueName) && owners.value.last == .some(nil)
        }
        #expect(try await watcher.nameOwner(ArbiterName.bus) == nil, "the name is owned by a process that serves nothing")
        #expect(!session.isHostingArbiter)
    }
}
