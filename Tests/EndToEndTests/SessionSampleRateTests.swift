import Foundation
import Testing
import TestSupport

/// `earshot play` of a WAV at every rate from 8 kHz to 768 kHz that libsndfile writes, and
/// of every channel count from mono to 8: each plays to its end, heard for its length at its
/// pitch, and the command exits. (A 384 kHz file once waited forever: its voice's ring ran
/// out of timeline marks before it held what a two-second buffer's start needs.)
///
/// Each file is the first (and only) one, so the stream runs at the file's rate, as
/// `earshot play` opens it; one process after another on the same sink, each heard in its
/// own stretch of one capture. It runs the optimized build (``Paths/releaseEarshot``): real
/// time at 384 kHz and above is a property of that build. The debug build's render loop
/// (unoptimized Swift) mixes 384,000 frames a second slower than real time (a 2 s file was
/// heard 4.5 s late on a long buffer, and over 3.2 s on a short one), where the release
/// build is heard within 50 ms and for 2.00 s.
@Suite("Session: earshot play at every sample rate and channel count", .serialized, .timeLimit(.minutes(4)), .tags(.sampleRates))
struct SessionSampleRateTests {
    static let rates = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000,
                        176400, 192000, 352800, 384000, 705600, 768000]
    static let tone = 1000.0
    static let duration = 0.4

    /// (rate, channels) pairs: every rate in stereo, and each other channel count at a rate
    /// of its own, the extremes among them.
    static let cases: [(rate: Int, channels: Int)] =
        rates.map { ($0, 2) } + [(768000, 1), (8000, 8), (384000, 8), (44100, 3), (96000, 4), (48000, 5), (22050, 6), (192000, 7)]

    @Test("each file plays to its end at its pitch, and earshot play exits 0")
    func everyRateAndChannelCount() async throws {
        let earshot = try #require(Paths.releaseEarshot, "no release build of earshot: run scripts/install --build-only (scripts/test does)")
        let world = try await SessionWorld()
        let capture = try await world.capture()
        var runs: [(label: String, start: ContinuousClock.Instant, end: ContinuousClock.Instant)] = []
        for (rate, channels) in Self.cases {
            let label = "\(rate) Hz, \(channels) channel\(channels == 1 ? "" : "s")"
            let file = try TestSignals.sine(frequency: Self.tone, duration: Self.duration, level: -6, sampleRate: rate, channels: channels)
            let start = ContinuousClock.now
            let process = try Child(earshot, ["play", "--name", "rates", file], environment: world.environment)
            let status: Int32
            do {
                status = try await process.wait(timeout: 12)
            } catch {
                process.kill(SIGKILL)
                Issue.record("\(label): earshot play did not exit within 12 s; it printed \(process.stdout.debugDescription), stderr \(process.stderr.debugDescription)")
                continue
            }
            #expect(status == 0, "\(label): exit status \(status); stderr \(process.stderr)")
            #expect(process.stdout.contains("finished: "), "\(label): \(process.stdout)")
            runs.append((label, start, .now))
        }
        try await settle(0.3)
        let audio = try await capture.stop()
        for (index, run) in runs.enumerated() {
            // Up to the next command's start: what the sink plays after a command exits is
            // the next one's.
            let next = index + 1 < runs.count ? try audio.at(runs[index + 1].start) : audio.duration
            let from = try audio.at(run.start), to = min(next, try audio.at(run.end) + 0.2)
            let regions = audio.activeRegions(threshold: -30, minGap: 0.02, channel: 0, range: from..<to)
            let heard = regions.reduce(0) { $0 + $1.duration }
            #expect(regions.count == 1 && abs(heard - Self.duration) < 0.03,
                    "\(run.label): heard \(regions) between \(from) and \(to) s of the capture, not one \(Self.duration) s tone")
            guard let region = regions.first else { continue }
            let middle = (region.start + 0.05)..<max(region.start + 0.06, region.end - 0.05)
            let pitch = audio.dominantFrequency(channel: 0, range: middle) ?? 0
            #expect(abs(pitch - Self.tone) < 10, "\(run.label): heard \(pitch) Hz, not \(Self.tone) Hz")
            sessionReport("\(run.label): \(String(format: "%.3f", heard)) s at \(String(format: "%.1f", pitch)) Hz, command \(String(format: "%.2f", SoundServerPlayTests.seconds(run.end - run.start))) s")
        }
    }
}
