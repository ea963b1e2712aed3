import Foundation
import Testing
import TestSupport

/// `earshot` command-line errors and help.
@Suite("earshot command line")
struct CommandLineTests {
    /// Runs earshot with `arguments`, on a private bus when one is given.
    func earshot(_ arguments: [String], bus: PrivateBus? = nil, environment: [String: String]? = nil) async throws -> CommandResult {
        var env = environment ?? bus?.environment ?? ProcessInfo.processInfo.environment
        env["NO_COLOR"] = "1"
        return try await run(Paths.earshot, arguments, environment: env, timeout: 10)
    }

    /// Expects a failure that does not look like a crash, with stderr naming every item of `mentions`.
    func expectFailure(_ result: CommandResult, status: Int32? = nil, mentioning mentions: [String],
                       sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status != 0, "it succeeded: \(result.stdout)", sourceLocation: sourceLocation)
        if let status { #expect(result.status == status, "\(result.stderr)", sourceLocation: sourceLocation) }
        #expect(!result.stdout.contains("published"), "it published: \(result.stdout)", sourceLocation: sourceLocation)
        for text in mentions {
            #expect(result.stderr.localizedCaseInsensitiveContains(text), "stderr does not mention “\(text)”: \(result.stderr)",
                    sourceLocation: sourceLocation)
        }
    }

    @Test("--art with a missing file fails, naming the file")
    func missingArt() async throws {
        let result = try await earshot(["publish", "--art", "/nonexistent/cover.png"], bus: try PrivateBus())
        expectFailure(result, mentioning: ["/nonexistent/cover.png", "no such file"])
    }

    @Test("--art with a folder fails, saying so")
    func artFolder() async throws {
        let result = try await earshot(["publish", "--art", FileManager.default.temporaryDirectory.path], bus: try PrivateBus())
        expectFailure(result, mentioning: ["--art", "directory"])
    }

    @Test("--length must be a positive number of seconds", arguments: [
        ["--length", "-3"], ["--length=-3"], ["--length", "0"], ["--length", "nan"], ["--length", "inf"],
    ])
    func badLength(_ arguments: [String]) async throws {
        let result = try await earshot(["publish"] + arguments, bus: try PrivateBus())
        expectFailure(result, mentioning: ["--length", "positive"])
    }

    @Test("--name must be one bus-name element", arguments: [
        ("bad.name", "bad.name"), ("9x", "digit"), ("", "name"), ("has space", "has space"), ("ünï", "ünï"),
    ])
    func badName(_ name: String, _ mention: String) async throws {
        let result = try await earshot(["publish", "--name", name], bus: try PrivateBus())
        // A bad name is a usage error, checked before connecting, like any bad option.
        expectFailure(result, status: 64, mentioning: [mention])
    }

    @Test("an unreachable bus is an error with exit status 1, not a crash or a hang")
    func unreachableBus() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/earshot-e2e-bus"
        let fromEnvironment = try await earshot(["publish"], environment: environment)
        expectFailure(fromEnvironment, status: 1, mentioning: ["/nonexistent/earshot-e2e-bus"])

        let fromOption = try await earshot(["publish", "--bus", "unix:path=/nonexistent/earshot-e2e-option"])
        expectFailure(fromOption, status: 1, mentioning: ["/nonexistent/earshot-e2e-option"])
    }

    @Test("when the bus goes away earshot publish exits with status 1 instead of running on")
    func busGoesAway() async throws {
        var bus: PrivateBus? = try PrivateBus()
        let process = try Child(Paths.earshot, ["publish", "--name", "busGoesAway", "--bus", bus!.address])
        try await process.waitForOutput("published org.mpris.MediaPlayer2.busGoesAway as :")
        withExtendedLifetime(bus) {}
        bus = nil  // stops dbus-daemon
        let status = try await process.wait(timeout: 3)
        #expect(status == 1)
        #expect(!process.stderr.isEmpty, "it exits without saying why")
    }

    @Test("--bus is used instead of DBUS_SESSION_BUS_ADDRESS")
    func busOption() async throws {
        let bus = try PrivateBus()
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/earshot-e2e-bus"
        let process = try Child(Paths.earshot, ["publish", "--name", "busOption", "--bus", bus.address], environment: environment)
        try await process.waitForOutput("published org.mpris.MediaPlayer2.busOption as :")
        let status = try await run("playerctl", ["-p", "busOption", "status"], environment: bus.environment)
        #expect(status.output == "Playing")
        process.kill(SIGINT)
        #expect(try await process.wait(timeout: 5) == 0, "SIGINT is a clean exit")
    }

    @Test("earshot --help describes the tool and its subcommand")
    func help() async throws {
        let result = try await earshot(["--help"])
        #expect(result.status == 0)
        for text in ["publish", "MPRIS", "DBUS_SESSION_BUS_ADDRESS", "--bus"] {
            #expect(result.stdout.contains(text), "--help does not mention \(text)")
        }
    }

    @Test("earshot publish --help lists every option")
    func publishHelp() async throws {
        let result = try await earshot(["publish", "--help"])
        #expect(result.status == 0)
        for option in ["--title", "--artist", "--album", "--length", "--art", "--name", "--instance", "--claim", "--paused", "--bus"] {
            #expect(result.stdout.contains(option), "publish --help does not mention \(option)")
        }
    }

    @Test("an unknown option is a usage error")
    func unknownOption() async throws {
        let result = try await earshot(["publish", "--loudness", "11"])
        expectFailure(result, status: 64, mentioning: ["--loudness"])
    }
}
