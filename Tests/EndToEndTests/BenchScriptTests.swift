import Foundation
import Testing
import TestSupport

/// The benchmarks are not run by the tests (they take minutes and want a quiet machine), but
/// what can break without running them is checked: every script parses, every Python file
/// compiles, the private servers are started in one place, and `earshot-bench --help` works.
/// Nothing here plays audio: the parallel pass.
@Suite("Bench scripts")
struct BenchScriptTests {
    static let bench = Paths.packageRoot + "/bench"

    static func files(in folder: String, where keep: (String) -> Bool) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted().filter(keep).map { "\(folder)/\($0)" }
            .filter { path in
                var isFolder: ObjCBool = false
                return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && !isFolder.boolValue
            }
    }

    /// bench/* (every benchmark), bench/lib/*.sh, and the scripts that share their start-up.
    static func shellScripts() throws -> [String] {
        try files(in: bench) { !$0.hasPrefix(".") } + files(in: bench + "/lib") { $0.hasSuffix(".sh") }
            + [Paths.packageRoot + "/scripts/demo", Paths.packageRoot + "/scripts/setup"]
    }

    @Test("every benchmark script parses (bash -n)")
    func shellParses() async throws {
        let scripts = try Self.shellScripts()
        #expect(scripts.count >= 13, "found only \(scripts)")
        for script in scripts {
            let result = try await run("bash", ["-n", script])
            #expect(result.status == 0, "bash -n \(script): \(result.stderr)")
        }
    }

    @Test("every benchmark's Python compiles")
    func pythonCompiles() async throws {
        let sources = try Self.files(in: Self.bench + "/lib") { $0.hasSuffix(".py") }
        #expect(sources.count >= 8, "found only \(sources)")
        // compile() rather than py_compile: nothing written beside the sources.
        let check = "import sys\nfor f in sys.argv[1:]: compile(open(f, encoding='utf-8').read(), f, 'exec')"
        let result = try await run("python3", ["-c", check] + sources)
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test("only bench/lib/servers.sh starts a private dbus-daemon or PulseAudio")
    func oneStartUp() throws {
        for script in try Self.shellScripts() where !script.hasSuffix("/servers.sh") {
            let text = try String(contentsOfFile: script, encoding: .utf8)
            for start in ["pulseaudio -n", "dbus-daemon --config-file"] {
                #expect(!text.contains(start), "\(script) starts a server itself (\(start)): use bench/lib/servers.sh")
            }
        }
    }

    @Test("earshot-bench --help names every subcommand, and a bad option is a usage error")
    func benchHelp() async throws {
        let binary = URL(fileURLWithPath: Paths.earshot).deletingLastPathComponent().appendingPathComponent("earshot-bench").path
        let help = try await run(binary, ["--help"])
        #expect(help.status == 0, "\(help.stderr)")
        for subcommand in ["decode", "open", "players", "latency", "record-latency", "stream-start"] {
            #expect(help.stdout.contains("  \(subcommand) "), "earshot-bench --help lacks \(subcommand):\n\(help.stdout)")
        }
        let bad = try await run(binary, ["decode", "/nonexistent.wav", "--repeat", "0"])
        #expect(bad.status == 64, "earshot-bench decode --repeat 0 exited \(bad.status): \(bad.stderr)")
        #expect(bad.stderr.contains("--repeat"), "\(bad.stderr)")
    }
}
