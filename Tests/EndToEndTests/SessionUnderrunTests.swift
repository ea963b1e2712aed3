import DBus
import Foundation
import Testing
import TestSupport

/// `earshot play`'s underrun count (its last line, "played N items in S s (U underruns)")
/// counts dropouts, and only those: a flush (a pause, a skip) empties the server's buffer on
/// purpose, and the server reports that as an underflow too, often after the next write began.
/// `scripts/demo` (pause, play, next) ended with "1 underruns" in about half the runs that way.
@Suite("Session: earshot play's underruns are dropouts, not flushes", .serialized, .timeLimit(.minutes(2)), .tags(.sessions))
struct SessionUnderrunTests {
    private func call(_ world: SessionWorld, _ app: String, _ method: String) async throws {
        _ = try await world.client.call(destination: "org.mpris.MediaPlayer2." + app, path: "/org/mpris/MediaPlayer2",
                                        interface: "org.mpris.MediaPlayer2.Player", method: method, [])
    }

    private func underruns(in output: String) -> Int? {
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("played ") }),
              let match = line.firstMatch(of: /\((\d+) underruns\)/) else { return nil }
        return Int(match.1)
    }

    @Test("pause, play and next, as scripts/demo does them, are no underrun")
    func flushesAreNotUnderruns() async throws {
        let world = try await SessionWorld()
        for round in 0..<3 {
            let app = "flushes\(round)"
            let first = try SessionWorld.tone(.left, frequency: 300, duration: 3)
            let second = try SessionWorld.tone(.left, frequency: 500, duration: 1)
            let process = try Child(Paths.earshot, ["play", "--name", app, first, second], environment: world.environment)
            defer { process.kill(SIGKILL) }
            let player = SessionPlayer(app: app, side: .left, process: process, world: world)
            try await player.waitUntilPlaying()
            try await settle(0.5)
            try await call(world, app, "Pause")
            try await settle(0.3)
            try await call(world, app, "Play")
            // The skip soon after the play: its flush's underflow then came after the
            // restart's first write.
            try await settle(0.03 * Double(round))
            try await call(world, app, "Next")
            let status = try await process.wait(timeout: 15)
            #expect(status == 0, "\(process.stderr)")
            #expect(underruns(in: process.stdout) == 0, "round \(round): \(process.stdout)")
        }
    }

    @Test("a process stopped for 0.4 s while it plays on the short buffer reports the dropout")
    func dropoutCounts() async throws {
        let world = try await SessionWorld()
        let app = "dropout"
        let tone = try SessionWorld.tone(.left, frequency: 300, duration: 2.5)
        let capture = try await world.capture()
        let process = try Child(Paths.earshot, ["play", "--name", app, "--no-long-buffer", tone], environment: world.environment)
        defer { process.kill(SIGKILL) }
        let player = SessionPlayer(app: app, side: .left, process: process, world: world)
        try await player.waitUntilPlaying()
        // The stop comes once the tone is heard: at PulseAudio's defaults the null sink may
        // take its first block of the stream more than a second after the first write (the
        // play reports Playing long before), and a stop before then drops nothing.
        try await sessionPoll("the tone to be heard for 0.3 s", timeout: 5) {
            let audio = try await capture.snapshot(drain: 0.1)
            let heard = audio.activeRegions(threshold: -40, minGap: 0.05, channel: SessionSide.left.channel)
            return (heard.last?.duration ?? 0) >= 0.3
        }
        // Nothing writes for 0.4 s: the server's 64 ms run dry.
        kill(process.pid, SIGSTOP)
        try await settle(0.4)
        kill(process.pid, SIGCONT)
        let status = try await process.wait(timeout: 15)
        #expect(status == 0, "\(process.stderr)")
        let audio = try await capture.stop()
        let heard = audio.activeRegions(threshold: -40, minGap: 0.1, channel: SessionSide.left.channel)
        #expect(heard.count == 2, "the tone, with the dropout in it: \(heard)")
        // Once: at PulseAudio's defaults (a 44.1 kHz sink with rewinds) the server sends no
        // underflow for it (the underflow callback sees only the drain's), and the output
        // counts it itself from the time its next write came (see
        // `PulseOutput.noteDropoutIfRanDry`); elsewhere the server's underflow at the same
        // index is the same dropout, not a second.
        #expect(underruns(in: process.stdout) == 1, "the dropout was not counted once: \(process.stdout)")
    }
}
