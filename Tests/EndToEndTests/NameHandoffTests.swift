import DBus
import Foundation
import Testing
import TestSupport

/// Several `earshot publish` processes of one app: the last-sound-wins stack's queue
/// (`org.earshot.MPRISTarget.<app>`), --claim, hand-back when the owner dies, and --instance
/// names. The app's MPRIS entry stays with the first process throughout and relays to the
/// stack's owner (docs/mpris-presence.md).
@Suite("two processes and the shared name")
struct NameHandoffTests {
    @Test("--claim takes the shared name; when the claimer is killed the name returns to the first process")
    func claimAndReturn() async throws {
        let a = try await Publisher(app: "shared")
        #expect(a.startedAsOwner)
        let b = try await Publisher(app: "shared", ["--claim"], on: a.bus)
        #expect(b.startedAsOwner)
        #expect(a.busName == "org.mpris.MediaPlayer2.shared" && b.busName == a.busName)
        let stack = "org.earshot.MPRISTarget.shared"
        let entry = try #require(try await a.client.nameOwner(a.busName))
        #expect(try await a.client.processID(of: entry) == Int64(a.process.pid), "the first process holds the entry")

        #expect(try await a.client.nameOwner(stack) == b.uniqueName)
        #expect(try await a.client.nameQueue(stack) == [b.uniqueName, a.uniqueName])

        try await b.playerctlOutput("play-pause")
        try await b.waitForLine("play-pause")
        #expect(a.commands.isEmpty, "the call went to the process that lost the name")

        b.process.kill(SIGKILL)
        try await eventually("the name to return to the first process") {
            try await a.client.nameOwner(stack) == a.uniqueName
        }
        #expect(try await a.client.nameQueue(stack) == [a.uniqueName])
        #expect(try await a.client.nameOwner(a.busName) == entry, "the entry never moved")
        try await a.playerctlOutput("play-pause")
        try await a.waitForLine("play-pause")
        #expect(b.commands == ["play-pause"])
    }

    @Test("without --claim a second process queues behind the owner, and takes over when the owner exits")
    func queued() async throws {
        let a = try await Publisher(app: "queued")
        let b = try await Publisher(app: "queued", on: a.bus)
        #expect(a.startedAsOwner)
        #expect(!b.startedAsOwner)
        #expect(b.process.stdout.hasPrefix("published org.mpris.MediaPlayer2.queued as \(b.uniqueName) (queued behind its owner)\n"))
        let stack = "org.earshot.MPRISTarget.queued"
        #expect(try await a.client.nameQueue(stack) == [a.uniqueName, b.uniqueName])
        #expect(try await a.client.nameQueue(a.busName).count == 2, "each process queues for the entry too")

        try await a.playerctlOutput("next")
        try await a.waitForLine("next -> 2/3 Two")
        #expect(b.commands.isEmpty)

        // SIGTERM is a clean exit: status 0, name released.
        a.process.kill(SIGTERM)
        #expect(try await a.process.wait(timeout: 5) == 0)
        try await eventually("the queued process to own the name") {
            try await b.client.nameOwner(stack) == b.uniqueName
        }
        try await eventually("the entry to pass to the remaining process") {
            guard let entry = try await b.client.nameOwner(b.busName) else { return false }
            return try await b.client.processID(of: entry) == Int64(b.process.pid)
        }
        try await b.playerctlOutput("next")
        try await b.waitForLine("next -> 2/3 Two")
    }

    @Test("--instance gives each process a name of its own, and playerctl lists both")
    func instances() async throws {
        let first = try await Publisher(app: "inst", ["--instance"])
        let second = try await Publisher(app: "inst", ["--instance"], on: first.bus)
        for publisher in [first, second] {
            #expect(publisher.startedAsOwner)
            #expect(publisher.busName == "org.mpris.MediaPlayer2.inst.instance\(publisher.process.pid)")
            #expect(try await first.client.nameOwner(publisher.busName) == publisher.uniqueName)
        }
        #expect(try await first.client.nameOwner("org.mpris.MediaPlayer2.inst") == nil)

        let list = try await run("playerctl", ["-l"], environment: first.bus.environment)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(Set(list.output.split(separator: "\n").map(String.init)) == [first.playerName, second.playerName])

        try await second.playerctlOutput("play-pause")
        try await second.waitForLine("play-pause")
        #expect(first.commands.isEmpty)
    }
}
