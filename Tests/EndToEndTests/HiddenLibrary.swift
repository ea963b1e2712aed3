import Foundation
import Testing
import TestSupport

/// How FFmpegLoadingTests and LibraryLoadingTests look at the libraries earshot loads at
/// first use: which libraries the binary links, and earshot run without one of them. "Without"
/// is a private mount namespace (`unshare -m`, as root) in which `/dev/null` is bind-mounted
/// over the library: the dynamic loader finds a file that is not a library, as after a
/// broken or partial install.
enum HiddenLibrary {
    /// The path of the first library in the dynamic loader's cache (`ldconfig -p`) whose line
    /// contains `name` ("libasound.so.2 (", or "libavformat.so." for any major version).
    static func path(matching name: String) async throws -> String {
        let cache = try await run("ldconfig", ["-p"])
        let line = try #require(cache.stdout.split(separator: "\n").first { $0.contains(name) && $0.contains("=> /") },
                                "ldconfig knows no library matching \(name)")
        return String(try #require(line.split(separator: "=> ").last)).trimmingCharacters(in: .whitespaces)
    }

    /// The `(NEEDED)` lines of the earshot binary's dynamic section (`readelf -d`), at least one.
    static func neededByEarshot() async throws -> [Substring] {
        let result = try await run("readelf", ["-d", Paths.earshot])
        #expect(result.status == 0, "\(result.stderr)")
        let needed = result.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(!needed.isEmpty, "no NEEDED entries read: \(result.stdout)")
        return needed
    }

    /// A fresh scratch folder for a test, `earshot-NAME-PID` in the temporary directory.
    static func scratch(_ name: String) throws -> String {
        let directory = NSTemporaryDirectory() + "earshot-\(name)-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// The environment of a run in `directory`: no session bus, no sound server.
    static func environment(in directory: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in ["DBUS_SESSION_BUS_ADDRESS", "PULSE_SERVER"] { environment.removeValue(forKey: key) }
        environment["XDG_RUNTIME_DIR"] = directory
        return environment
    }

    /// Runs earshot with `library` (a path) hidden, in the environment of `directory`.
    static func runEarshot(hiding library: String, in directory: String, _ arguments: [String]) async throws -> CommandResult {
        let script = "mount --bind /dev/null \"$1\" || exit 97; shift; exec \"$@\""
        let result = try await run("unshare", ["-m", "sh", "-c", script, "sh", library, Paths.earshot] + arguments,
                                   environment: environment(in: directory), timeout: 20)
        try #require(result.status != 97, "cannot hide \(library) in a mount namespace (needs root): \(result.stderr)")
        return result
    }
}
