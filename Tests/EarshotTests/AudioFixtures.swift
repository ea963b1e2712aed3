import Earshot
import AudioEngine
import Foundation
import Testing
import TestSupport

/// Plays with `body` while capturing the shared sink, inside the audio test lock. A source
/// counts as finished once its last frame is mixed; that frame is heard an output latency
/// later, so the capture runs on for a little after `body`.
func captured(_ body: @escaping () async throws -> Void) async throws -> CapturedAudio {
    // No need to wait for an earlier test's stream to go: the engine's idle stream is silent.
    try await withSharedAudio(idleTimeout: 0) { server in
        let capture = try Capture(server: server)
        let engine = AudioEngine.shared
        let underruns = engine.underrunCount, deviceTime = engine.deviceCurrentTime, started = Date()
        let audio = try await capture.record {
            try await body()
            try await sleep(engine.outputLatency + 0.1)
        }
        // For a capture that does not hold what was played: how long the body ran against
        // the device clock, and whether the stream broke meanwhile.
        print(String(format: "captured: %.3f s of body, %.3f s of device clock, %d underruns, %.3f s captured",
                     Date().timeIntervalSince(started), engine.deviceCurrentTime - deviceTime,
                     engine.underrunCount - underruns, audio.duration))
        return audio
    }
}

/// Waits until `player` stops playing (at most `timeout` seconds).
func waitUntilFinished(_ player: AudioPlayer, timeout: Double = 10) async throws {
    try await eventually("the player to finish", timeout: timeout) { !player.isPlaying }
}

func sleep(_ seconds: Double) async throws {
    try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
}

extension Double {
    /// Whether `self` is within `tolerance` of `other`.
    func isClose(to other: Double, within tolerance: Double) -> Bool { abs(self - other) <= tolerance }
}

/// A new empty folder under the temporary directory.
func makeFolder(_ name: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-\(name)-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
