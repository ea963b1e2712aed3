import DBus
import Foundation
import Testing
import TestSupport

/// The bus thread never waits on disk or device: a process that hosts the embedded
/// arbiter keeps answering other sessions while MPRIS calls make it open files.
@Suite("audio sessions across processes: the bus thread of the arbiter's host", .tags(.arbiterLatency))
struct SessionBusThreadTests {
    /// How many `Next` calls the burst holds.
    static let burst = 50

    /// A FLAC file of `seconds` of noise (which FLAC cannot compress away, so that opening
    /// and starting it reads and decodes real data), made with sox in a new folder, and
    /// `count` links to it under distinct names (the queue titles items by file name).
    static func largeFiles(count: Int, seconds: Int) throws -> (folder: URL, files: [String]) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-bus-thread-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let source = folder.appendingPathComponent("noise.flac").path
        let sox = Process()
        sox.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sox.arguments = ["sox", "-n", "-r", "48000", "-c", "2", "-b", "16", source, "synth", "\(seconds)", "whitenoise", "vol", "0.05"]
        try launch(sox)
        sox.waitUntilExit()
        guard sox.terminationStatus == 0 else { throw TestFailure("sox could not make \(source)") }
        let files = try (1...count).map { index in
            let link = folder.appendingPathComponent(String(format: "track%03d.flac", index)).path
            try FileManager.default.linkItem(atPath: source, toPath: link)
            return link
        }
        return (folder, files)
    }

    /// Round trips of `GetAll` on the arbiter, in milliseconds, made one after another
    /// until `stop` says so (at least `minimum` of them).
    static func probe(_ client: DBusConnection, minimum: Int, until stop: @Sendable () -> Bool) async throws -> [Double] {
        var samples: [Double] = []
        while samples.count < minimum || !stop() {
            let start = ContinuousClock.now
            _ = try await client.call(destination: SessionArbiter.name, path: SessionArbiter.path,
                                      interface: StandardInterface.properties, method: "GetAll",
                                      [.string(SessionArbiter.interface)])
            let elapsed = ContinuousClock.now - start
            samples.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
            try await Task.sleep(for: .milliseconds(2))
        }
        return samples
    }

    /// The title of the host's current item.
    static func title(_ connection: DBusConnection) async throws -> String? {
        let metadata = try await connection.call(
            destination: "org.mpris.MediaPlayer2.music", path: "/org/mpris/MediaPlayer2",
            interface: StandardInterface.properties, method: "Get",
            [.string("org.mpris.MediaPlayer2.Player"), .string("Metadata")])
        return metadata.first?.unwrapped.stringKeyedDictionary?["xesam:title"]?.unwrapped.string
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }

    /// How many bursts the test sends to each arbiter (the embedded one and the reference in
    /// `earshot daemon`; an even number, each half even), each measured against idle calls just before it (pooled, so that
    /// the p99 of either is not just its single worst call, and so that the load of other
    /// tests running beside it falls on both alike). They alternate `Next` and `Previous`,
    /// over a queue of 52 files.
    static let rounds = 20
    /// Calls in each pool a round (the busy pool gets more while a burst outlasts them): the
    /// pools are the same size, 400 calls, so that each p99 is its 4th slowest call. With
    /// fewer busy calls than idle ones, a burst answered quickly leaves the busy pool so small
    /// that its p99 is its slowest call: one stall of the loaded machine beside the test
    /// would decide the ratio, while the idle pool's p99 passes over its own stalls.
    static let callsPerRound = 20

    /// The target is 3× the idle p99. On this 2-core machine it is also about where an
    /// arbiter that shares nothing with the player lands (the arbiter in `earshot daemon`,
    /// the same bursts sent to the same player): what is left is the burst's own load
    /// (the test sending 50 messages, the bus daemon routing them, the player carrying them
    /// out) on the cores the three processes of each `GetAll` round trip need. So the test measures that reference in the same run, in
    /// alternating phases, and holds the embedded arbiter to the 3× or, where the
    /// machine does not allow that, to 1.5× the reference's p99 under the same bursts.
    /// The second bound is on the p99 under the bursts, not on the ratio: the idle pools of
    /// two phases are not the same machine state (a reference whose idle p99 reads high has
    /// a small ratio, and an embedded arbiter faster under the bursts would fail), while the
    /// bursts are the same load.
    /// What keeps the ratio down: the bus thread only parses, dispatches, answers property
    /// reads and sends (opening files there multiplied it many times over), the commands run
    /// on a thread of their own, 5 nice steps down; a remote `Next` moves the queue at once
    /// and an opener thread opens only the item current when it gets to it; and the embedded
    /// arbiter has a bus connection of its own, so that its calls do not wait behind the
    /// burst's 50 messages on the player's connection.
    static let target = 3.0
    /// How far above the reference's p99 under the bursts the embedded arbiter's may be,
    /// where it misses ``target``.
    static let overReference = 1.5

    /// Who serves the arbiter in a phase of the test.
    enum Arbiter: String { case embedded = "the player (embedded)", daemon = "earshot daemon (reference)" }

    /// The arbiter's `GetAll` round trips in one phase: idle, and while bursts run.
    struct Pools {
        var idle: [Double] = []
        var busy: [Double] = []
        var burstTimes: [Duration] = []
        var busyP99: Double { SessionBusThreadTests.percentile(busy, 0.99) }
        var ratio: Double { busyP99 / SessionBusThreadTests.percentile(idle, 0.99) }
        var summary: String {
            String(format: "idle p99 %.2f ms (%d calls), during the bursts %.2f ms (%d calls, max %.2f ms); ratio %.2f",
                   SessionBusThreadTests.percentile(idle, 0.99), idle.count, SessionBusThreadTests.percentile(busy, 0.99),
                   busy.count, busy.max() ?? 0, ratio)
        }
    }

    @Test("bursts of 50 Next (and Previous) calls to the arbiter's host: the arbiter's p99 stays within 3× its idle p99, or within 1.5× the p99 of an arbiter in earshot daemon under the same bursts; each burst takes effect in order")
    func nextBurstDoesNotStallTheArbiter() async throws {
        let world = try await SessionWorld()
        let burst = SessionBusThreadTests.burst
        let (folder, files) = try SessionBusThreadTests.largeFiles(count: burst + 2, seconds: 240)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Started first, so that it hosts org.earshot.AudioSession.
        let host = SessionPlayer(app: "music", side: .left,
                                 process: try Child(Paths.earshot, ["play", "--name", "music"] + files, environment: world.environment),
                                 world: world)
        try await host.waitUntilPlaying(timeout: 20)
        let hostID = try await host.uniqueName()
        let burster = try DBusConnection(.address(world.bus.address))
        defer { burster.close() }

        // Two bursts first, not measured: the player has just started its queue (a CI run
        // put the embedded arbiter, measured first then, at 1.42 times the reference).
        for round in 1...2 { _ = try await SessionBusThreadTests.burstRound(round, world: world, burster: burster) }
        // Phases embedded, reference, embedded (a quarter, a half and a quarter of the
        // rounds), so that the load of the machine at one time, and its drift over the test,
        // fall on both arbiters alike. The player's queue is back at its first item at the
        // end of each phase (Next and Previous alternate, an even number of times).
        var pools: [Arbiter: Pools] = [.embedded: Pools(), .daemon: Pools()]
        var daemon: Child?
        let quarter = SessionBusThreadTests.rounds / 2
        for (arbiter, rounds) in [(Arbiter.embedded, quarter), (.daemon, 2 * quarter), (.embedded, quarter)] {
            switch arbiter {
            case .daemon:
                // earshot daemon takes the name over; the player registers with it.
                daemon = try await world.daemon()
            case .embedded:
                // The player, queued for the name, gets it back when the daemon ends.
                if let running = daemon {
                    running.kill(SIGTERM)
                    _ = try await running.wait(timeout: 5)
                    daemon = nil
                }
            }
            try await sessionPoll("\(arbiter.rawValue) to serve, with the player as its target", timeout: 10, interval: 0.02) {
                guard let pid = try await world.arbiterHost(), (pid == host.process.pid) == (arbiter == .embedded) else { return false }
                return try await world.arbiterProperty("Target") == .string(hostID)
            }
            for round in 1...rounds {
                pools[arbiter]!.add(try await SessionBusThreadTests.burstRound(round, world: world, burster: burster))
            }
        }
        daemon?.kill(SIGTERM)

        let (embedded, reference) = (pools[.embedded]!, pools[.daemon]!)
        let report = "arbiter GetAll p99, embedded in the player: \(embedded.summary); "
            + "in earshot daemon (the reference, same run): \(reference.summary); "
            + String(format: "embedded over reference under the bursts %.2f; ", embedded.busyP99 / reference.busyP99)
            + "the bursts took \(embedded.burstTimes + reference.burstTimes)"
        sessionReport(report)
        print(report)
        #expect(embedded.ratio <= SessionBusThreadTests.target
                || embedded.busyP99 <= SessionBusThreadTests.overReference * reference.busyP99, "\(report)")
        #expect(host.process.isRunning, "\(host.lines) \(host.process.stderr)")
    }

    /// One round: idle calls to the arbiter, then 50 `Next` (odd rounds) or `Previous` calls
    /// from a connection of their own while the client goes on calling the arbiter. Checks
    /// that exactly 50 calls took effect.
    static func burstRound(_ round: Int, world: SessionWorld, burster: DBusConnection) async throws -> Pools {
        var pools = Pools()
        try await settle(0.3)
        // Idle: the arbiter answers with nothing else going on.
        pools.idle = try await probe(world.client, minimum: callsPerRound) { true }

        let method = round % 2 == 1 ? "Next" : "Previous"
        let done = Locked(false)
        let started = ContinuousClock.now
        async let during = probe(world.client, minimum: callsPerRound) { done.value }
        // Sent in order, the first 49 without a reply asked (the test process then has no
        // replies to handle beside its probe); the last one's reply comes when the player's
        // command queue, which runs them in order, has carried out all 50. Then the file 50
        // further on (or back) is current, which shows that every call took effect.
        let expected = String(format: "track%03d", round % 2 == 1 ? burst + 1 : 1)
        var failures: [String] = []
        for index in 0..<burst {
            do {
                let message = try DBusMessage.methodCall(destination: "org.mpris.MediaPlayer2.music", path: "/org/mpris/MediaPlayer2",
                                                         interface: "org.mpris.MediaPlayer2.Player", method: method)
                if index < burst - 1 {
                    message.setNoReply()
                    try burster.send(message)
                } else {
                    _ = try await burster.call(message, timeout: .seconds(20))
                }
            } catch {
                failures.append("\(error)")
            }
        }
        pools.burstTimes = [ContinuousClock.now - started]
        done.withLock { $0 = true }
        pools.busy = try await during
        #expect(failures.isEmpty, "\(method) failed: \(failures)")
        // (After the measurement: the reply follows the 50th command, and its title may
        // reach the now-playing info a moment later.)
        try await sessionPoll("\(expected) to be current after \(burst) \(method) calls", timeout: 5, interval: 0.01) {
            try await title(burster) == expected
        }

        try await settle(0.2)
        // Nothing moved it further: exactly 50 calls took effect.
        #expect(try await title(world.client) == expected, "after \(burst) \(method) calls")
        return pools
    }
}

extension SessionBusThreadTests.Pools {
    mutating func add(_ other: Self) {
        idle += other.idle
        busy += other.busy
        burstTimes += other.burstTimes
    }
}
