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
    /// The path the dynamic loader finds `soname` at (`ldconfig -p`).
    static func path(of soname: String) async throws -> String {
        let cache = try await run("ldconfig", ["-p"])
        let line = try #require(cache.stdout.split(separator: "\n").first { $0.contains("\(soname) (") && $0.contains("=> /") },
                                "ldconfig knows no \(soname)")
        return String(try #require(line.split(separator: "=> ").last)).trimmingCharacters(in: .whitespaces)
    }

    @Test("the earshot binary does not link libasound, librubberband or libspeexdsp")
    func notLinked() async throws {
        let result = try await run("readelf", ["-d", Paths.earshot])
        #expect(result.status == 0, "\(result.stderr)")
        let needed = result.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(!needed.isEmpty, "no NEEDED entries read: \(result.stdout)")
        #expect(!needed.contains { $0.contains("libasound") || $0.contains("librubberband") || $0.contains("libspeexdsp") }, "\(needed)")
    }

    /// Runs earshot with `soname` hidden, in the environment of `directory` (no bus, no server).
    static func withoutLibrary(_ soname: String, in directory: String, _ arguments: [String]) async throws -> CommandResult {
        var environment = ProcessInfo.processInfo.environment
        for key in ["DBUS_SESSION_BUS_ADDRESS", "PULSE_SERVER"] { environment.removeValue(forKey: key) }
        environment["XDG_RUNTIME_DIR"] = directory
        let library = try await path(of: soname)
        let script = "mount --bind /dev/null \"$1\" || exit 97; shift; exec \"$@\""
        let result = try await run("unshare", ["-m", "sh", "-c", script, "sh", library, Paths.earshot] + arguments,
                                   environment: environment, timeout: 20)
        try #require(result.status != 97, "cannot hide \(library) in a mount namespace (needs root): \(result.stderr)")
        return result
    }

    static func scratch(_ name: String) throws -> String {
        let directory = NSTemporaryDirectory() + "earshot-\(name)-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("without libasound, playing to an ALSA device fails naming the library")
    func withoutALSA() async throws {
        let directory = try Self.scratch("noalsa")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let wav = try TestSignals.sine(frequency: 440, duration: 0.3)
        let refused = try await Self.withoutLibrary("libasound.so.2", in: directory, ["play", "--device", "null", "--implicit-session", wav])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("cannot open audio device “null”: libasound.so.2 cannot be loaded: "), "\(refused.stderr)")
    }

    @Test("without libspeexdsp, files at the engine's rate and at common rates play (the engine's own filter resamples them); one at an odd rate, which needs speexdsp, fails naming the library")
    func withoutSpeexDSP() async throws {
        let directory = try Self.scratch("nospeex")
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
