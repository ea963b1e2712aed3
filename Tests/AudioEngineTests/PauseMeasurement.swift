import AudioEngine
import TestSupport

/// One pause (or stop), measured: `voice` plays for `playing`, pauses (or stops), and 300 ms
/// later the capture stops. What was heard is the sum of the capture's sounding regions (an underrun on a
/// loaded machine is a gap in the capture, not lost media).
struct PauseMeasurement {
    /// What the capture recorded.
    let audio: CapturedAudio
    /// `currentTime` just before `pause()` (or `stop()`), and 300 ms after it.
    let atPause: Double, settled: Double
    /// Seconds of sound the sink played.
    var heard: Double { audio.activeRegions().totalDuration }

    /// Plays and pauses (or, with `stopping`, stops) `voice` inside `record` (a capture of
    /// the sink it plays to).
    init(_ voice: Voice, playing: Duration, stopping: Bool = false,
         record: (() async throws -> Void) async throws -> CapturedAudio) async throws {
        var atPause = 0.0, settled = 0.0
        audio = try await record {
            try voice.play()
            try await Task.sleep(for: playing)
            atPause = voice.currentTime
            if stopping { voice.stop() } else { voice.pause() }
            try await Task.sleep(for: .milliseconds(300))
            settled = voice.currentTime
        }
        (self.atPause, self.settled) = (atPause, settled)
    }
}
