import Foundation
import PulseSupport
import Testing
import TestSupport

/// What one user of the shared subscriber heard: "connected", "sink", "source", "lost", "failed".
private final class Heard: Sendable {
    private let events = Locked<[String]>([])

    func record(_ event: PulseSubscriber.Event) {
        let name: String
        switch event {
        case .connected: name = "connected"
        // The facility is the event type's low 4 bits: 0 a sink, 1 a source.
        case .changed(let type, _): name = type & 0xF == 0 ? "sink" : type & 0xF == 1 ? "source" : "other"
        case .lost: name = "lost"
        case .attemptFailed: name = "failed"
        }
        events.withLock { $0.append(name) }
    }

    var all: [String] { events.value }
    func count(_ name: String) -> Int { all.filter { $0 == name }.count }
}

/// The subscribers of a process share one connection per server.
@Suite("one libpulse connection for every subscriber in a process", .tags(.inProcessAudio))
struct SharedPulseSubscriberTests {
    /// `pa_subscription_mask_t`'s bits for sinks and sources.
    static let sinks: UInt32 = 0x1, sources: UInt32 = 0x2

    /// The server's clients that this process holds.
    static func ownClients(_ server: PulseAudioServer) throws -> Int {
        try server.pactl("list", "clients").components(separatedBy: "\n")
            .filter { $0.contains("application.process.id = \"\(getpid())\"") }.count
    }

    @Test("two users share one connection, each hears its own facilities, one closing leaves the other working, through a restart")
    func twoUsersShareOneConnection() async throws {
        let server = try PulseAudioServer(sinkName: "shared_main")
        let sinkUser = Heard(), sourceUser = Heard()
        let first = try #require(PulseSubscriber.subscribe(server: server.address, mask: Self.sinks) { sinkUser.record($0) })
        let second = try #require(PulseSubscriber.subscribe(server: server.address, mask: Self.sources) { sourceUser.record($0) })
        first.start()
        try await eventually("the first user connected") { sinkUser.count("connected") == 1 }
        second.start()
        try await eventually("the second user told it is connected") { sourceUser.count("connected") == 1 }
        #expect(first.mainloop === second.mainloop)
        #expect(try Self.ownClients(server) == 1)

        // A null sink comes with its monitor source: each user hears its own facility only.
        _ = try server.loadNullSink(name: "shared_second")
        try await eventually("both users heard the new sink") { sinkUser.count("sink") > 0 && sourceUser.count("source") > 0 }
        #expect(sinkUser.count("source") == 0)
        #expect(sourceUser.count("sink") == 0)

        first.close()
        let heardBefore = sourceUser.count("source")
        _ = try server.loadNullSink(name: "shared_third")
        try await eventually("the second user still hears its events") { sourceUser.count("source") > heardBefore }
        #expect(sinkUser.count("connected") == 1)
        #expect(try Self.ownClients(server) == 1)

        try server.restart()
        try await eventually("the second user connected again after the restart", timeout: 5) {
            sourceUser.count("lost") == 1 && sourceUser.count("connected") == 2
        }
        #expect(try Self.ownClients(server) == 1)
        #expect(!sinkUser.all.contains("lost"))

        second.close()
        try await eventually("the last user gone, so is the connection") { (try? Self.ownClients(server)) == 0 }
    }
}
