import Foundation
import TestSupport

/// Files for the network tests, made once per run with ffmpeg in a temporary directory:
/// 4 s of a 440 Hz stereo sine as MP3 (CBR 128 kb/s) and as AAC in MP4 (moov at the end, so that
/// FFmpeg must seek over HTTP to find it), and 10 s of 660 Hz MP3 for the radio server to loop.
struct NetworkFixtures: Sendable {
    let directory: String
    static let seconds = 4.0
    static let frequency = 440.0
    static let radioFrequency = 660.0
    /// Bytes per second of the radio file (128 kb/s).
    static let radioBytesPerSecond = 16000

    var mp3: String { directory + "/tone.mp3" }
    var m4a: String { directory + "/tone.m4a" }
    var radio: String { directory + "/radio.mp3" }

    static func shared() async throws -> NetworkFixtures { try await building.value }
    private static let building = Task { try await build() }

    private static func build() async throws -> NetworkFixtures {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-network-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fixtures = NetworkFixtures(directory: directory)
        let sine = "sine=frequency=\(Int(frequency)):sample_rate=44100:duration=\(seconds)"
        let radio = "sine=frequency=\(Int(radioFrequency)):sample_rate=44100:duration=10"
        for (source, codec, path) in [(sine, ["-c:a", "libmp3lame", "-b:a", "128k"], fixtures.mp3),
                                      (sine, ["-c:a", "aac", "-b:a", "128k"], fixtures.m4a),
                                      (radio, ["-c:a", "libmp3lame", "-b:a", "128k"], fixtures.radio)] {
            let result = try await run("/usr/bin/ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", source,
                                                           "-ac", "2", "-map_metadata", "-1"] + codec + [path], timeout: 60)
            guard result.status == 0 else { throw TestFailure("ffmpeg failed for \(path): \(result.stderr)") }
        }
        return fixtures
    }

    func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
    }
}
