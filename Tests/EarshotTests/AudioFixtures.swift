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
        expectNoStrayStart(audio)
        // For a capture that does not hold what was played: how long the body ran against
        // the device clock, and whether the stream broke meanwhile.
        print(String(format: "captured: %.3f s of body, %.3f s of device clock, %d underruns, %.3f s captured, %d graph xruns",
                     Date().timeIntervalSince(started), engine.deviceCurrentTime - deviceTime,
                     engine.underrunCount - underruns, audio.duration, audio.graphXruns))
        return audio
    }
}

/// No stray sound before the test's own: a region of at most 2 ms in the capture's first
/// 20 ms, 20 ms or more before the next sound. At PulseAudio's defaults (a 44.1 kHz sink)
/// the engine's stream ran at 48 kHz and was resampled by the server; when it started again
/// after an idle spell, the server's rewind of its resampler (PulseAudio 16.1,
/// `pa_sink_input_process_rewind`: "we may still lose or duplicate one sample during
/// rewind") could replay one sample of the sound before, 48 ms before the test's sound
/// (5 of 40 restarts), though the engine wrote only zeros there. The engine now runs at the
/// default sink's rate (`AudioEngine.Configuration.followsDefaultSinkRate`), so the server
/// has nothing to resample; this checks that it stays so.
private func expectNoStrayStart(_ audio: CapturedAudio) {
    let regions = audio.activeRegions(window: 0.001)
    guard let stray = regions.first, stray.start < 0.02, stray.duration <= 0.002,
          regions.count == 1 || regions[1].start - stray.end >= 0.02 else { return }
    Issue.record("a stray region \(stray) before the test's sound (a resampler's rewind replaying the sound before?)")
}

/// The length of a sound meant to be heard without a gap, from its first region's start to
/// its last's end; nil when it has a gap of its own. A gap the sound server made (a PipeWire
/// graph xrun: ``CapturedAudio/gapsAreGraphXruns(_:maximumGap:)``) is printed, not counted:
/// the content it replaced is lost, the timeline kept, so the span is still the sound's.
func gaplessSpan(_ regions: [AudioRegion], in audio: CapturedAudio) -> Double? {
    guard let first = regions.first, let last = regions.last else { return nil }
    if regions.count > 1 {
        guard audio.gapsAreGraphXruns(regions) else { return nil }
        print("gaps of \(regions.gaps.map { Int(($0 * 1000).rounded()) }) ms during \(audio.graphXruns) missed graph cycles: the server's, not the player's")
    }
    return last.end - first.start
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

/// An engine whose music streams hold a server-side buffer of `seconds` (`earshot play`
/// of one file asks for 2 s), and release the output after 0.5 s of silence.
func longBufferEngine(seconds: Double = 1, seekDelay: Double = 0) -> AudioEngine {
    var configuration = AudioEngine.Configuration()
    configuration.musicBufferDuration = seconds
    configuration.seekDelayForTesting = seekDelay
    configuration.idleRelease = 0.5
    return AudioEngine(configuration: configuration)
}

/// Captures a sound whose end is mixed well before it is heard (a long buffer), changed in
/// that time: `play` starts it, `change` runs once `endMixed` holds (at most `timeout`
/// seconds later) and waits for what it needs heard. Returns the capture and when `change`
/// began, in the capture's time. (With a one-second buffer the end is mixed half a second
/// or more before it is heard: time enough to act in it on a loaded machine.)
func capturedWithChangeInLastBuffer(
    play: @escaping () -> Void,
    endMixed: @escaping @Sendable () -> Bool,
    timeout: Double = 5,
    _ change: @escaping () async throws -> Void
) async throws -> (audio: CapturedAudio, changedAt: Double) {
    let clock = ContinuousClock()
    let changedAt = Locked<ContinuousClock.Instant?>(nil)
    let audio = try await captured {
        play()
        try await eventually("the end mixed", timeout: timeout) { endMixed() }
        changedAt.withLock { $0 = clock.now }
        try await change()
    }
    let changed = try #require(changedAt.value.flatMap { audio.time(of: $0) })
    return (audio, changed)
}

/// The least silence that counts as a gap in the last-buffer tests (a pause, seek or change
/// just after an item's end was mixed). On the harness's PipeWire (its daemons without
/// real-time scheduling on a loaded 2-core machine) a capture now and then has a hole of one
/// graph cycle, 5–10 ms, where no underrun is seen and nothing was changed (one came 1.5 s
/// after the last call); steady playback with the same buffers had none in 18 runs. A gap
/// these tests look for (an item restarted, a next item unprimed) is longer.
var lastBufferGap: Double { TestSoundServerKind.selected == .pipeWire ? 0.012 : 0.005 }

/// How far a sound's length may be off after a restart on a long buffer (a change mixed
/// again from what is heard): 30 ms, and 50 ms on the harness's PipeWire, where a volume
/// change's restart lost 33 ms of a 2 s sound in a CI run (the flush leaves the stream a
/// graph cycle on from where the mix goes on).
var restartTolerance: Double { TestSoundServerKind.selected == .pipeWire ? 0.05 : 0.03 }
