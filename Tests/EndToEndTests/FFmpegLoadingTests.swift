import Foundation
import Testing
import TestSupport

/// FFmpeg's libraries are loaded when a file needs them, not linked (they bring about 130
/// shared libraries that every process would load at start). The binary does not need
/// them; without them, what libsndfile opens still plays, and what needs FFmpeg fails
/// naming the library and why.
///
/// "Without them" is made real with a private mount namespace (`unshare -m`, as root) in
/// which `/dev/null` is bind-mounted over libavformat: the dynamic loader finds a file
/// that is not a library, as after a broken or partial install.
@Suite("FFmpeg, loaded at its first use")
struct FFmpegLoadingTests {
    @Test("the earshot binary does not link libavformat, libavcodec, libswresample or libavutil")
    func notLinked() async throws {
        let needed = try await HiddenLibrary.neededByEarshot()
        #expect(!needed.contains { $0.contains("libav") || $0.contains("libswresample") }, "\(needed)")
    }

    @Test("without libavformat, a WAV plays and an AAC file fails naming the library")
    func withoutFFmpeg() async throws {
        let library = try await HiddenLibrary.path(matching: "libavformat.so.")
        let directory = try HiddenLibrary.scratch("noffmpeg")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let wav = try TestSignals.sine(frequency: 440, duration: 0.3)
        let aac = directory + "/tone.m4a"
        let made = try await run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=0.5", "-c:a", "aac", aac])
        #expect(made.status == 0, "\(made.stderr)")
        func withoutLibrary(_ arguments: [String]) async throws -> CommandResult {
            try await HiddenLibrary.runEarshot(hiding: library, in: directory, arguments)
        }
        let played = try await withoutLibrary(["play", "--device", "null", "--implicit-session", wav])
        #expect(played.status == 0, "\(played.stderr)")
        let refused = try await withoutLibrary(["play", "--device", "null", "--implicit-session", aac])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("cannot open \(aac): not a supported audio format (FFmpeg cannot be loaded: cannot load \(URL(fileURLWithPath: library).lastPathComponent)"),
                "\(refused.stderr)")
        // With the library there, the same file plays.
        let plays = try await run(Paths.earshot, ["play", "--device", "null", "--implicit-session", aac], environment: HiddenLibrary.environment(in: directory), timeout: 20)
        #expect(plays.status == 0, "\(plays.stderr)")
    }
}
