import Earshot
import Foundation
import Testing
import TestSupport

// AudioPlayer made from http:// URLs (not played: the engine's playback of streams is
// AudioEngineTests.NetworkPlaybackTests): what it says of the stream, its errors, and that
// letting go of a stalled one does not wait for the server.

@Suite("AudioPlayer from http URLs")
struct AudioPlayerStreamTests {
    private static let media: Task<String, any Error> = Task {
        let directory = NSTemporaryDirectory() + "earshot-player-stream-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let made = try await run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=6",
                                            "-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k", directory + "/tone.mp3"], timeout: 60)
        guard made.status == 0 else { throw TestFailure("ffmpeg: \(made.stderr)") }
        return directory
    }

    @Test func aProgressiveFileHasItsLengthAndSeeks() async throws {
        let directory = try await Self.media.value
        let server = try await HTTPTestServer(.files(directory: directory))
        let url = try #require(URL(string: server.url("tone.mp3")))
        let player = try await offThePool { try AudioPlayer(contentsOf: url) }
        #expect(abs(player.duration - 6) < 0.05, "\(player.duration)")
        #expect(player.stream?.isSeekable == true)
        #expect(player.url == url)
        #expect(player.settings.sampleRate == 44100)
    }

    @Test func aRadioHasNoLengthAndNoSeeking() async throws {
        let directory = try await Self.media.value
        let server = try await HTTPTestServer(.icy(file: directory + "/tone.mp3", bytesPerSecond: 16000, titleSeconds: 60))
        let url = try #require(URL(string: server.url()))
        let player = try await offThePool { try AudioPlayer(contentsOf: url) }
        #expect(player.duration == 0)
        let stream = try #require(player.stream)
        #expect(stream.isEndless && !stream.isSeekable)
    }

    @Test func anErrorNamesTheURLAndTheReason() async throws {
        let directory = try await Self.media.value
        let server = try await HTTPTestServer(.files(directory: directory))
        let url = server.url("missing.mp3")
        let outcome = try await offThePool { Result { try AudioPlayer(contentsOf: URL(string: url)!) } }
        #expect(throws: AudioFileError(source: url, reason: .networkFailed("the server answered 404 Not Found"))) { try outcome.get() }
    }

    @Test func lettingGoOfAStalledStreamDoesNotWait() async throws {
        let directory = try await Self.media.value
        let size = try FileManager.default.attributesOfItem(atPath: directory + "/tone.mp3")[.size] as? Int ?? 0
        let server = try await HTTPTestServer(.stall(file: directory + "/tone.mp3", atByte: size / 5, seconds: 60))
        let url = try #require(URL(string: server.url()))
        var player: AudioPlayer? = try await offThePool { try AudioPlayer(contentsOf: url) }
        player?.prepareToPlay()
        try await Task.sleep(for: .milliseconds(300))
        let start = Date()
        player = nil
        #expect(Date().timeIntervalSince(start) < 0.5, "releasing took \(Date().timeIntervalSince(start)) s")
        _ = player
    }
}
