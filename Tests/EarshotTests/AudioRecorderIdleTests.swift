import AudioEngine
@testable import Earshot
import Foundation
import Testing
import TestSupport

/// A prepared recorder does not keep the process awake: its record stream stays corked and
/// its writer asleep until record(). Counts the context switches of the recorder's own
/// threads (`/proc/self/task/*/status`). Real-time (serial audio pass).
@Suite(.serialized, .tags(.inProcessAudio)) struct AudioRecorderIdleTests {
    /// The process's threads: id → name.
    private func threads() -> [String: String] {
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var result: [String: String] = [:]
        for id in ids {
            let name = (try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8)) ?? ""
            result[id] = name.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return result
    }

    /// Voluntary plus involuntary context switches of `ids` so far.
    private func switches(_ ids: Set<String>) -> Int {
        ids.reduce(0) { sum, id in
            let status = (try? String(contentsOfFile: "/proc/self/task/\(id)/status", encoding: .utf8)) ?? ""
            return sum + status.split(separator: "\n").filter { $0.hasSuffix("ctxt_switches") || $0.contains("ctxt_switches:") }
                .compactMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") }.reduce(0, +)
        }
    }

    @Test("a prepared recorder's capture and writer threads sleep until record(), then wake per fragment")
    func preparedRecorderSleeps() async throws {
        let rig = try RecordingRig()
        let tone = try TestSignals.sine(frequency: 1000, duration: 6, level: -6)
        let player = try rig.play(tone)
        defer { player.kill(SIGKILL) }
        let before = Set(threads().keys)
        let path = rig.path("idle.wav")
        let recorder = try AudioRecorder(url: URL(fileURLWithPath: path), input: rig.input, session: nil)
        try recorder.prepare()
        // The writer names itself once it runs.
        try await Task.sleep(for: .milliseconds(200))
        let mine = Set(threads().filter { !before.contains($0.key) && ["earshot-capture", "earshot-writer"].contains($0.value) }.keys)
        try #require(mine.count == 2, "the recorder's threads: \(threads().filter { !before.contains($0.key) })")
        // libpulse's timing updates for the corked stream space out (10 ms doubling to 1.5 s):
        // what remains after they have is one every 1.5 s.
        try await Task.sleep(for: .milliseconds(2500))
        let idleStart = switches(mine)
        try await Task.sleep(for: .seconds(3))
        let idle = switches(mine) - idleStart
        #expect(idle <= 8, "\(idle) context switches in 3 s while prepared")

        #expect(recorder.record())
        let recordingStart = switches(mine)
        try await Task.sleep(for: .seconds(1))
        let recording = switches(mine) - recordingStart
        // 20 ms fragments: about 50 a second on the capture thread, 10 on the writer.
        #expect(recording >= 30, "\(recording) context switches in 1 s while recording")
        print("AudioRecorderIdleTests: prepared \(idle) switches in 3 s; recording \(recording) in 1 s")
        recorder.stop()
        let audio = try RecordingRig.read(path)
        #expect(audio.duration > 0.9, "the file holds \(audio.duration) s")
        let frequency = try #require(audio.dominantFrequency(channel: 0, range: 0.05..<0.8))
        #expect(abs(frequency - 1000) < 1)
    }
}
