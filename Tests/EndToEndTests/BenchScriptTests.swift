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

    @Test("bench/power's summary: medians over rounds, ratios round by round, no playing target")
    func powerSummary() async throws {
        let results = FileManager.default.temporaryDirectory.appendingPathComponent("power-results-\(getpid()).tsv").path
        defer { try? FileManager.default.removeItem(atPath: results) }
        // SECTION, ROUND, NAME, wakeups/s, % of a core: what bench/power writes, one line a window.
        let lines = [
            "idle\t1\tplayerctld (reference)\t0.00\t0.0000", "idle\t1\tearshot daemon\t0.10\t0.0010",
            "paused\t1\tmpv --pause (reference)\t12.00\t0.0800", "paused\t1\tearshot play, paused\t0.50\t0.0040",
            "playing\t1\tpaplay (reference)\t3.00\t0.0100", "playing\t1\tearshot play\t6.00\t0.0500",
            "playing\t2\tpaplay (reference)\t4.00\t0.0200", "playing\t2\tearshot play\t4.00\t0.0200",
            "playing\t3\tpaplay (reference)\t3.00\t0.0100", "playing\t3\tearshot play\t4.50\t0.0150",
        ]
        try (lines.joined(separator: "\n") + "\n").write(toFile: results, atomically: true, encoding: .utf8)
        let summary = try await run("python3", [Self.bench + "/lib/power.py", results])
        #expect(summary.status == 0, "\(summary.stderr)")
        let out = summary.stdout
        #expect(out.contains("3.0 (3.0-4.0) wakeups/s"), "paplay's median and range:\n\(out)")
        // Round by round: wakeups 2.0, 1.0, 1.5; CPU 5.0, 1.0, 1.5 (the ratio of the CPU medians would be 2.0).
        let line = { (label: String) in out.split(separator: "\n").first { $0.contains(label) }.map(String.init) ?? "" }
        #expect(line("playing / paplay wakeups").hasSuffix(" 1.50x (1.00x-2.00x)"), "\(out)")
        #expect(line("playing / paplay CPU").hasSuffix(" 1.50x (1.00x-5.00x)"), "\(out)")
        #expect(out.contains("(target: <= 1 wakeup/s: 0.1, met)"), "\(out)")
        #expect(out.contains("(target: <= 2 wakeups/s: 0.5, met)"), "\(out)")
        #expect(!out.contains("<= 1.5x"), "the playing target is gone:\n\(out)")
        let help = try await run(Self.bench + "/power", ["--help"])
        #expect(help.status == 0, "\(help.stderr)")
        #expect(!help.stdout.contains("<= 1.5x"), "\(help.stdout)")
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
