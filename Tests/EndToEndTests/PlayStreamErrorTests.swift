import Foundation
import Testing
import TestSupport

// `earshot play` given URLs that cannot be played: a message naming the URL and the reason,
// a failing exit status, and no hang. No bus and no sound
// server are needed: the player is told to use ALSA's null device.

@Suite("earshot play: bad stream URLs")
struct PlayStreamErrorTests {
    @Test func missingAndGarbageAreNamedAndTheExitFails() async throws {
        let directory = NSTemporaryDirectory() + "earshot-play-stream-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let server = try await HTTPTestServer(.files(directory: directory))
        let missing = server.url("missing.mp3")
        let garbage = try await HTTPTestServer(.garbage)
        let noise = garbage.url("noise.mp3")
        var environment = ProcessInfo.processInfo.environment
        for key in ["DBUS_SESSION_BUS_ADDRESS", "PULSE_SERVER", "PULSE_RUNTIME_PATH"] { environment.removeValue(forKey: key) }
        environment["XDG_RUNTIME_DIR"] = directory
        let start = Date()
        let result = try await run(Paths.earshot, ["play", "--device", "null", missing, noise], environment: environment, timeout: 30)
        #expect(result.status != 0)
        #expect(result.stderr.contains("skipped \(missing): cannot open \(missing): the server answered 404 Not Found"), "\(result.stderr)")
        #expect(result.stderr.contains("skipped \(noise): cannot open \(noise): "), "\(result.stderr)")
        #expect(result.stderr.contains("2 files could not be played: \(missing), \(noise)"), "\(result.stderr)")
        // No hang: `run` fails the test past 30 s, twice the open deadline (a slow server can make
        // one read wait for FFmpeg's 10 s read timeout; the whole run is bounded by them).
        print("earshot play with two bad URLs took \(Date().timeIntervalSince(start)) s")
    }
}
