import DBus
import Foundation
import Testing
import TestSupport

/// Issue 31, item 2: `earshot publish` grew by about 120 kB per 1,000 MPRIS calls and kept
/// it (every Play, Set or Seek while playing left a stale end-of-title timer pending in
/// libdispatch for up to a title's length). This test makes many calls of the issue's mix
/// and checks that the process's memory does not grow with their number.
///
/// What is measured: `Anonymous` of `/proc/PID/smaps_rollup`, the process's resident
/// anonymous memory (heap, malloc arenas, thread stacks), which is where a leak lives: a
/// leaked object is written when it is made, so a leak of L bytes a call adds about L bytes
/// a call there (more with malloc's headers and libdispatch's own bookkeeping). Not VmRSS:
/// it also counts pages of code and libraries, which come in as new code paths first run.
/// Not `Private_Dirty` either: it counts file pages the process alone maps that are dirty in
/// the page cache, and those of an `earshot` just linked (as in a test run right after its
/// build) are, until the kernel writes them back; seen here as a drop of 2.7 MB in the
/// middle of a run, enough to hide a leak.
///
/// Why the bound is sound against malloc's noise: memory that is freed mostly stays with
/// the process for reuse (glibc gives back only a large free top of a heap), so the measure
/// grows until the working set's high-water mark is reached, then stays; a give-back can
/// only lower it, never make up growth that is not there. The first window of calls
/// (a tenth of them, in the same batches and mix as the rest) reaches most of that mark:
/// every code path has run, the arenas and libdbus's buffers have grown to what a batch
/// needs, Dispatch's worker threads have stacks. The bound is on the growth over the second
/// window, nine times as many calls: steady state against steady state, the little left of
/// the warm-up included. Measured on the fixed tree (debug build, a 2-core machine at a load
/// average of 20 to 28) the second window grew 44 to 64 kB (5 to 7 B a call); with the leak
/// of issue 31 it grew 1.8 MB (203 to 206 B a call) in every run. The warm-up is the same
/// mix, so a leak grows it too: the check compares growth, not a level.
///
/// Nothing is timed: only byte counts are checked, and a slow machine only makes the test
/// longer (about 5 s when quiet, under 20 s at that load).
@Suite("earshot publish keeps its memory under a steady load of MPRIS calls")
struct PublishMemoryTests {
    /// Calls in all; the first tenth is the warm-up window.
    static let calls = 10_000
    /// Calls sent back to back before awaiting their replies (one round trip each batch).
    static let batch = 20
    /// At most this many calls a second (twice the issue's rate): the test then adds a
    /// steady share of a core to the parallel pass for about 5 s, rather than taking both
    /// cores for a second or two from tests that time things (unpaced, the calls went as
    /// fast as earshot answered). A machine that cannot keep the pace falls behind it,
    /// which only makes the test longer: nothing here is timed.
    static let callsPerSecond = 2_000
    /// Growth allowed per call over the measured window, bytes: a leak of more than about
    /// 30 B a call (a quarter of issue 31's 120 B) fails, and so does anything on the scale
    /// of a message, a reply, a timer or a closure kept per call.
    static let bytesPerCall = 32

    /// One round of the issue's mix, ten calls: property reads (Get, GetAll), writes (Set),
    /// Play and Pause, and calls that fail (an unknown property, an unknown method). Play
    /// comes first and Pause last, so that the state-changing calls between them happen
    /// while the player plays, as under a desktop's media widget.
    static func round(_ publisher: Publisher, _ index: Int) throws -> [(message: DBusMessage, failsWith: String?)] {
        func call(_ method: String, _ arguments: [DBusValue] = [], interface: String = MPRIS.player) throws -> DBusMessage {
            try DBusMessage.methodCall(destination: publisher.busName, path: MPRIS.path, interface: interface,
                                       method: method, arguments: arguments)
        }
        func get(_ property: String) throws -> DBusMessage {
            try call("Get", [.string(MPRIS.player), .string(property)], interface: StandardInterface.properties)
        }
        func set(_ property: String, _ value: DBusValue) throws -> DBusMessage {
            try call("Set", [.string(MPRIS.player), .string(property), .variant(value)], interface: StandardInterface.properties)
        }
        return [
            (try call("Play"), nil),
            (try get("PlaybackStatus"), nil),
            (try call("GetAll", [.string(MPRIS.player)], interface: StandardInterface.properties), nil),
            (try set("Volume", .double(index % 2 == 0 ? 0.5 : 0.75)), nil),
            (try get("Metadata"), nil),
            (try set("LoopStatus", .string(index % 2 == 0 ? "Playlist" : "None")), nil),
            (try get("NoSuchProperty"), DBusError.Name.unknownProperty),
            (try call("NoSuchMethod"), DBusError.Name.unknownMethod),
            (try set("Rate", .double(index % 2 == 0 ? 1.5 : 1)), nil),
            (try call("Pause"), nil),
        ]
    }

    /// Makes `count` calls of the mix, in batches, checking every reply.
    static func load(_ publisher: Publisher, count: Int) async throws {
        let clock = ContinuousClock()
        let interval = Duration.seconds(Double(batch) / Double(callsPerSecond))
        var next = clock.now
        var made = 0
        while made < count {
            // Paced, without catching up after falling behind (that would be a burst).
            try await clock.sleep(until: next)
            next = max(next, clock.now) + interval
            var calls: [(message: DBusMessage, failsWith: String?)] = []
            while calls.count < batch { calls += try round(publisher, made / 10 + calls.count / 10) }
            let replies = await publisher.client.calls(calls.map(\.message), timeout: .seconds(30))
            for (call, reply) in zip(calls, replies) {
                switch (reply, call.failsWith) {
                case (.success, nil): break
                case (.failure(let error), let expected?) where error.name == expected: break
                default:
                    throw TestFailure("\(call.message.interface ?? "").\(call.message.member ?? "") answered \(reply), "
                                      + "expected \(call.failsWith ?? "success"); stderr: \(publisher.process.stderr)")
                }
            }
            made += calls.count
        }
    }

    /// A value in kB from `/proc/PID/smaps_rollup` (`Anonymous`) or `/proc/PID/status` (`VmRSS`).
    static func kilobytes(_ field: String, of pid: Int32, in file: String) throws -> Int {
        let text = try String(contentsOfFile: "/proc/\(pid)/\(file)", encoding: .utf8)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let value = Int(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces).dropLast(3)
                .trimmingCharacters(in: .whitespaces)) else {
            throw TestFailure("no \(field) in /proc/\(pid)/\(file)")
        }
        return value
    }

    @Test("anonymous memory after 10,000 MPRIS calls is within 32 B a call of what it was after 1,000")
    func noGrowthPerCall() async throws {
        // A long title: no end-of-title advance during the test, only the calls' own effects.
        let publisher = try await Publisher(titles: ["One"], ["--length", "600"])
        let pid = publisher.process.pid
        let warmUp = Self.calls / 10

        try await Self.load(publisher, count: warmUp)
        let before = try Self.kilobytes("Anonymous", of: pid, in: "smaps_rollup")
        let rssBefore = try Self.kilobytes("VmRSS", of: pid, in: "status")

        try await Self.load(publisher, count: Self.calls - warmUp)
        let after = try Self.kilobytes("Anonymous", of: pid, in: "smaps_rollup")
        let rssAfter = try Self.kilobytes("VmRSS", of: pid, in: "status")

        try await publisher.expectResponsive()
        let measured = Self.calls - warmUp
        let grown = (after - before) * 1024
        let allowed = Self.bytesPerCall * measured
        let report = """
            earshot publish's anonymous memory grew \(grown / 1024) kB (\(grown / measured) B a call) over \(measured) calls \
            after a warm-up of \(warmUp): \(before) kB -> \(after) kB (VmRSS \(rssBefore) kB -> \(rssAfter) kB); \
            allowed \(allowed / 1024) kB
            """
        print(report)
        #expect(grown <= allowed, "\(report)")
    }
}
