import Foundation
import Testing
import TestSupport

/// libasound, librubberband and libspeexdsp are loaded when first needed, not linked, as
/// FFmpeg's libraries are (FFmpegLoadingTests): most runs of earshot (`earshot sound NAME`
/// from the server's cache, `--help`, the arbiter) use none of them, and linking them cost
/// every start their loading and relocation. Without one, what needs it fails naming the
/// library and why; the rest works. "Without" is made real as in FFmpegLoadingTests: in a
/// private mount namespace (`unshare -m`, as root), `/dev/null` is bind-mounted over the
/// library, as after a broken or partial install.
@Suite("ALSA, Rubber Band and speexdsp, loaded at their first use")
struct LibraryLoadingTests {
    @Test("the earshot binary does not link libasound, librubberband or libspeexdsp")
    func notLinked() async throws {
        let needed = try await HiddenLibrary.neededByEarshot()
        #expect(!needed.contains { $0.contains("libasound") || $0.contains("librubberband") || $0.contains("libspeexdsp") }, "\(needed)")
    }

    /// Runs earshot with `soname` hidden, in the environment of `directory` (no bus, no server).
    static func withoutLibrary(_ soname: String, in directory: String, _ arguments: [String]) async throws -> CommandResult {
        try await HiddenLibrary.runEarshot(hiding: try await HiddenLibrary.path(matching: "\(soname) ("), in: directory, arguments)
    }

    @Test("without libasound, playing to an ALSA device fails naming the library")
    func withoutALSA() async throws {
        let directory = try HiddenLibrary.scratch("noalsa")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let wav = try TestSignals.sine(frequency: 440, duration: 0.3)
        let refused = try await Self.withoutLibrary("libasound.so.2", in: directory, ["play", "--device", "null", "--implicit-session", wav])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("cannot open audio device “null”: libasound.so.2 cannot be loaded: "), "\(refused.stderr)")
    }

    @Test("without libspeexdsp, files at the engine's rate and at common rates play (the engine's own filter resamples them); one at an odd rate, which needs speexdsp, fails naming the library")
    func withoutSpeexDSP() async throws {
        let directory = try HiddenLibrary.scratch("nospeex")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let same = try TestSignals.sine(frequency: 440, duration: 0.3, sampleRate: 48000)
        let common = try TestSignals.sine(frequency: 440, duration: 0.3, sampleRate: 22050)
        // 48000/11127 reduces to 16000/3709: a table of 16000 phases is too large for the
        // polyphase filter, so speexdsp resamples it.
        let other = try TestSignals.sine(frequency: 440, duration: 0.3, sampleRate: 11127)
        let resampled = try await Self.withoutLibrary("libspeexdsp.so.1", in: directory, ["play", "--device", "null", "--implicit-session", common])
        #expect(resampled.status == 0, "\(resampled.stderr)")
        let played = try await Self.withoutLibrary("libspeexdsp.so.1", in: directory, ["play", "--device", "null", "--implicit-session", same])
        #expect(played.status == 0, "\(played.stderr)")
        let refused = try await Self.withoutLibrary("libspeexdsp.so.1", in: directory, ["play", "--device", "null", "--implicit-session", other])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("libspeexdsp.so.1 cannot be loaded: "), "\(refused.stderr)")
    }
}
