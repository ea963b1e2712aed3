import Foundation
import Testing
import TestSupport

/// Issue 8, "quiet when idle": an Earshot process with nothing to do sleeps. Counted as the
/// kernel counts them: voluntary plus involuntary context switches summed over the
/// process's threads (`/proc/PID/task/*/status`), over a window after start-up has settled.
///
/// There is no floor under Earshot's own: libdispatch's workqueue monitor (a 1 s timer on its
/// manager thread, started by the first worker of a non-overcommit queue and never stopped)
/// woke every Swift process that had run a task once a second, and `earshot` runs its tasks
/// on the overcommit queue, which it does not watch (CGlobalExecutor). The daemon and publish
/// limits, 0.5 a second over a 6 s window, are three switches: one monitor tick a second
/// would be six. Before this work the same processes woke 120 to 280 times a second, and
/// once a second with the default executor.
///
/// Its three tests run side by side, by themselves after the session suites (one plays audio,
/// and a quiet machine keeps the counts honest).
@Suite("quiet when idle: wakeups of idle Earshot processes", .tags(.idleWakeups))
struct SessionIdleWakeupTests {
    /// The measuring window, seconds.
    static let window = 6.0

    /// Waits out start-up: libdispatch ends a pool thread idle for 5 s, and the end of the
    /// threads start-up used is not what an idle process does.
    static func settle() async throws { try await Task.sleep(for: .seconds(6)) }

    /// Context switches of each of `pid`'s threads so far, by thread id.
    static func contextSwitches(of pid: Int32) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for task in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
            var total = 0
            for line in status.split(separator: "\n")
            where line.hasPrefix("voluntary_ctxt_switches:") || line.hasPrefix("nonvoluntary_ctxt_switches:") {
                total += Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
            counts[task] = total
        }
        return counts
    }

    /// Wakeups per second of `child` over ``window`` seconds from now. A thread that starts
    /// during the window counts all its switches; one that ends counts one (its last
    /// switches are gone with it, and a thread that exits woke to do so).
    static func wakeupsPerSecond(_ child: Child) async throws -> Double {
        let start = ContinuousClock.now
        let before = try contextSwitches(of: child.pid)
        try await Task.sleep(for: .milliseconds(Int(window * 1000)))
        #expect(child.isRunning, "it exited while measured: \(child.stderr)")
        let after = try contextSwitches(of: child.pid)
        let elapsed = ContinuousClock.now - start
        var total = 0
        for (thread, count) in after { total += count - (before[thread] ?? 0) }
        total += before.keys.filter { after[$0] == nil }.count
        return Double(total) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    @Test("earshot daemon, serving no session, sleeps: at most 0.5 wakeups a second")
    func idleDaemon() async throws {
        let world = try await SessionWorld(keepAwake: false)
        let daemon = try Child(Paths.earshot, ["daemon"], environment: world.environment)
        defer { daemon.kill() }
        try await daemon.waitForOutput("serving org.earshot.AudioSession as ")
        try await Self.settle()
        let rate = try await Self.wakeupsPerSecond(daemon)
        #expect(rate <= 0.5, "earshot daemon woke \(rate) times a second while idle")
    }

    @Test("earshot publish, its title running with nothing asking, sleeps: at most 0.5 wakeups a second")
    func idlePublish() async throws {
        let world = try await SessionWorld(keepAwake: false)
        let publish = try Child(Paths.earshot, ["publish", "--name", "idlepublish", "--length", "600"], environment: world.environment)
        defer { publish.kill() }
        try await publish.waitForOutput("published org.mpris.MediaPlayer2.idlepublish")
        try await Self.settle()
        let rate = try await Self.wakeupsPerSecond(publish)
        #expect(rate <= 0.5, "earshot publish woke \(rate) times a second while idle")
    }

    @Test("earshot play, paused, its output not a terminal, wakes at most once a second (issue 8 allows twice)")
    func pausedPlay() async throws {
        let world = try await SessionWorld()
        let player = try world.play("idleplay", side: .left, duration: 30)
        defer { player.kill() }
        try await player.waitUntilPlaying()
        let paused = try await world.playerctl("--player", "idleplay", "pause")
        #expect(paused.status == 0, "\(paused)")
        try await sessionPoll("the player to say Paused") { try await player.playbackStatus() == "Paused" }
        // Past the engine's release of the idle device (2 s after the pause) and the end of
        // the pool threads that start-up used.
        try await Self.settle()
        let rate = try await Self.wakeupsPerSecond(player.process)
        #expect(rate <= 1, "a paused earshot play woke \(rate) times a second")
    }
}
