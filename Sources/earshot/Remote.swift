import Arbiter
import ArgumentParser
import Earshot
import DBus
import MPRIS
import SessionPolicy
import Dispatch
import FoundationEssentials
import Glibc

/// `earshot remote`: sends a media command to the global remote-control target (the
/// eligible process that last made sound), for window-manager key bindings.
struct Remote: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a media command to the process that last made sound.",
        discussion: """
            COMMAND is play-pause, play, pause, next, previous, stop, or seek followed by \
            a signed number of seconds (seek +10, seek -5). The target is the arbiter's: \
            among processes in the playback category that handle remote commands, the one \
            that last produced sound, across apps.

            EXIT STATUS: 0 when the target accepted the command; 1 when there is no \
            target or it replied with an error; 64 for an unknown command.
            """
    )

    @OptionGroup var busOptions: BusOptions

    @Argument(help: ArgumentHelp("play-pause, play, pause, next, previous, stop, or seek.", valueName: "COMMAND"))
    var command: String

    // All unrecognized words, so that `seek -5` is a number, not an unknown option.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("For seek: seconds, such as +10 or -5.", valueName: "SECONDS"))
    var arguments: [String] = []

    var seconds: String? { arguments.first }

    /// The largest seek, in seconds, whose microseconds fit an int64 (about 292,000 years).
    static let maximumSeek = 9_000_000_000_000.0

    static let methods = ["play-pause": "PlayPause", "play": "Play", "pause": "Pause", "next": "Next",
                          "previous": "Previous", "stop": "Stop", "seek": "Seek"]

    func validate() throws {
        guard Remote.methods[command] != nil else {
            throw ValidationError("unknown command “\(TerminalText.escaped(command))” (\(Remote.methods.keys.sorted().joined(separator: ", ")))")
        }
        guard arguments.count <= 1 else { throw ValidationError(TerminalText.escaped("\(command) takes at most one argument, not \(arguments.joined(separator: " "))")) }
        if command == "seek" {
            guard let seconds, let value = Double(seconds), value.isFinite else {
                throw ValidationError("seek needs a number of seconds, such as +10 or -5")
            }
            // The offset goes out in microseconds, as an int64.
            guard abs(value) <= Remote.maximumSeek else {
                throw ValidationError("seek takes at most \(Int64(Remote.maximumSeek)) seconds either way, not \(seconds)")
            }
        } else if seconds != nil {
            throw ValidationError("\(command) takes no argument")
        }
    }

    func run() async throws {
        let method = Remote.methods[command]!
        do {
            let connection = try DBusConnection(busOptions.bus)
            guard try await connection.nameOwner(ArbiterName.bus) != nil else {
                fail("earshot remote: no arbiter: no Earshot process has an audio session")
            }
            let target = try await ArbiterStatus.readTarget(on: connection)
            guard !target.isEmpty else {
                fail("earshot remote: no target: no process in the playback category has made sound")
            }
            var arguments: [DBusValue] = []
            if command == "seek", let seconds, let value = Double(seconds) {
                arguments = [.int64(Int64((value * 1_000_000).rounded()))]
            }
            // validate() checked the word and the seconds.
            guard let transport = MPRISTransportCommand(method: method, arguments: arguments) else { fail("earshot remote: cannot send \(method)") }
            // As long as a D-Bus client waits by default: the target may be another app's.
            try await MPRISPlayerManager(connection: connection, timeout: .seconds(25)).send(transport, to: target)
            say("sent \(method) to \(target)")
        } catch {
            fail("earshot remote: \(error)")
        }
    }
}

/// `earshot status`: the arbiter's sessions, who plays, who is interrupted or ducked, and
/// the target.
struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the audio sessions, who plays, who is interrupted or ducked, and the target.",
        discussion: """
            The first line names the arbiter: its unique name on the bus and the process \
            that serves it (an Earshot process hosting it, or earshot daemon), whether the \
            screen is locked, and the remote-control target. On GNOME (gsd-media-keys \
            running) a line says where the desktop's media keys go: to the target (the \
            arbiter takes them and sends each there), or to a playing player that \
            gsd-media-keys keeps until it stops (the arbiter cannot move them before).

            OUTPUT is what a session's players play through: the sound server and its \
            version (pulseaudio-16.1, or pipewire-0.3.65 for PipeWire through \
            pipewire-pulse), alsa:DEVICE where no server answers or one was named, or - \
            before it played.

            Then, if any, the other apps the arbiter follows (processes without an Earshot \
            session): each MPRIS player (its unique name, app, process, PlaybackStatus) and \
            each process sounding without one, marked target, sounding, paused by the \
            session whose activation paused it, or ducked by the sessions whose duckOthers \
            lowers its streams. With --follow, prints the tables again \
            whenever they change, until interrupted.
            """
    )

    @OptionGroup var busOptions: BusOptions

    @Flag(help: "Keep printing the table when it changes.")
    var follow = false

    func run() async throws {
        do {
            let connection = try DBusConnection(busOptions.bus)
            try await printTable(connection)
            guard follow else { return }
            // One pending change at most: changes that arrive while the table is printed
            // make one more table, not one each. Waiting on the stream sleeps until then.
            let (changes, changed) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            // From the arbiter only (the bus resolves the well-known sender to its owner):
            // any client can emit a PropertiesChanged for the arbiter's path.
            _ = try await connection.subscribe(MatchRule(sender: ArbiterName.bus, interface: StandardInterface.properties,
                                                         member: "PropertiesChanged", path: ArbiterName.path,
                                                         arg0: ArbiterName.interface)) { _ in changed.yield() }
            _ = try await connection.watchNameOwner(ArbiterName.bus) { _ in changed.yield() }
            for await _ in changes {
                // Changes come in bursts (a session's several properties): let one settle.
                try await Task.sleep(for: .milliseconds(50))
                say("")
                try await printTable(connection)
            }
        } catch {
            fail("earshot status: \(error)")
        }
    }

    private func printTable(_ connection: DBusConnection) async throws {
        guard let owner = try await connection.nameOwner(ArbiterName.bus) else {
            say("no arbiter: no Earshot process has an audio session")
            return
        }
        let status = try await ArbiterStatus.read(on: connection)
        // The arbiter serves on a connection of its own, which is none of the sessions': its
        // process says who hosts it.
        let process = (try? await connection.processID(of: owner)).map { " (process \($0))" } ?? ""
        say("arbiter \(owner)\(process)\(status.screenLocked ? ", screen locked" : ""); target: \(status.target.isEmpty ? "none" : status.target)")
        if !status.desktopKeys.isEmpty { say("desktop keys: \(status.desktopKeys)") }
        say("SESSION   APP               CATEGORY        OPTIONS         OUTPUT            STATE")
        for session in status.sessions {
            let state = [(session.target, "target"), (session.active, "active"), (session.producingSound, "playing"),
                         (session.interrupted, "interrupted"), (session.ducked, "ducked")].filter(\.0).map(\.1)
            let options = session.options.joined(separator: ",")
            let output = Status.output(kind: session.outputKind, name: session.outputName)
            say(pad(session.id, 10) + pad(session.app, 18) + pad(session.category, 16)
                + pad(options.isEmpty ? "-" : options, 16) + pad(output, 18) + (state.isEmpty ? "idle" : state.joined(separator: ", ")))
        }
        guard !status.others.isEmpty else { return }
        say("OTHER     APP               PID       STATUS    STATE")
        for other in status.others {
            var state: [String] = []
            if other.target { state.append("target") }
            if other.sounding { state.append("sounding") }
            if !other.pausedBy.isEmpty { state.append("paused by \(other.pausedBy)") }
            if !other.duckedBy.isEmpty { state.append("ducked by \(other.duckedBy.joined(separator: " "))") }
            let app = TerminalText.escaped(other.app)
            say(pad(other.player.isEmpty ? "-" : other.player, 10) + pad(app.isEmpty ? "-" : app, 18) + pad(String(other.pid), 10)
                + pad(other.status.isEmpty ? "-" : other.status, 10) + (state.isEmpty ? "idle" : state.joined(separator: ", ")))
        }
    }

    /// A session's output as one word for the table: `pipewire-0.3.65` or `pulseaudio-16.1`
    /// for a sound server (PipeWire named where pipewire-pulse says it runs on it),
    /// `alsa:DEVICE`, or `-` before the session said. Escaped for the terminal: the
    /// arbiter checks the name, but a status reader trusts no one.
    static func output(kind: ArbiterProtocol.OutputKind?, name: String) -> String {
        switch kind {
        case .soundServer?:
            if let match = name.firstMatch(of: /on PipeWire ([0-9][0-9.]*)/) { return "pipewire-" + match.1 }
            return TerminalText.escaped(name.split(whereSeparator: \.isWhitespace).joined(separator: "-").lowercased())
        case .alsa?:
            return "alsa:" + TerminalText.escaped(name.split(whereSeparator: \.isWhitespace).joined(separator: "-"))
        case .none?, nil:
            return "-"
        }
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}

/// `earshot daemon`: the arbiter as a service of its own.
struct Daemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the audio-session arbiter (org.earshot.AudioSession) as a service.",
        discussion: """
            Takes org.earshot.AudioSession from an Earshot process that hosts it embedded \
            (they queue for it with ALLOW_REPLACEMENT); every process registers again with \
            the daemon. Started by D-Bus activation (dbus/org.earshot.AudioSession.service) \
            or the systemd user unit (packaging/earshot-arbiter.service). Runs until SIGINT \
            or SIGTERM.

            Other apps: the arbiter follows every MPRIS player on the bus and the sound \
            server's playback streams. With --others pause (the default, as iOS), a \
            non-mixable session that activates pauses the other apps' playing players and \
            resumes them when it deactivates with notifyOthersOnDeactivation or ends, unless \
            the user touched them meanwhile, and a session with duckOthers lowers their \
            playing streams in the sound server (restoring each exact volume after, unless \
            the user changed it); duck leaves their players alone and only lowers their \
            streams; observe only watches. Ducked volumes are kept in \
            $XDG_RUNTIME_DIR/earshot/arbiter-state.json: an arbiter that starts restores \
            what a killed one left ducked. In all three, other apps' sound counts for isOtherAudioPlaying and the \
            remote target, and another app's player starting interrupts non-mixable sessions. \
            An Earshot process hosting the arbiter reads the same setting from \
            $XDG_CONFIG_HOME/earshot/arbiter.conf (a line such as: others = observe).

            EXIT STATUS: 0 after SIGINT or SIGTERM; 1 when the bus cannot be reached or goes \
            away (the message names the bus), so that a service manager restarts it.
            """
    )

    @OptionGroup var busOptions: BusOptions

    @Option(help: ArgumentHelp("What to do to other apps' audio: pause, duck or observe (default: the config file's, else pause).",
                               valueName: "MODE"))
    var others: String?

    @Flag(help: ArgumentHelp(
        "Print to standard error each event the arbiter applies (a session registering or activating, another app's player or stream changing) and what it decided, one line each, with the seconds since start.",
        discussion: "For finding out why a player was paused, resumed or interrupted. The lines are for people; their form may change. While standard error is not read, at most 1000 lines wait; the next line says how many were dropped. An earshot command that hosts the arbiter itself prints the same trace when EARSHOT_ARBITER_TRACE=1 is in its environment."))
    var trace = false

    func validate() throws {
        if let others, Arbiter.OthersPolicy(rawValue: others) == nil {
            throw ValidationError("--others must be pause, duck or observe, not “\(TerminalText.escaped(others))”")
        }
    }

    func run() async throws {
        let stop = QuitSignal()
        // Before "serving …": a SIGTERM sent once it is said must not be lost.
        let sources = await onTerminationSignals { stop.fire() }
        let connection: DBusConnection
        let arbiter: Arbiter
        do {
            connection = try DBusConnection(busOptions.bus)
            var configuration = Arbiter.Configuration.user()
            if let others, let mode = Arbiter.OthersPolicy(rawValue: others) { configuration.others = mode }
            if trace { configuration.eventLog = ArbiterTrace.line() }
            arbiter = try Arbiter(connection: connection, configuration: configuration)
            let reply = try await connection.requestName(ArbiterName.bus, flags: [.replaceExisting])
            guard reply == .primaryOwner || reply == .alreadyOwner else {
                fail("earshot daemon: another arbiter owns \(ArbiterName.bus) and does not allow replacement")
            }
            say("serving \(ArbiterName.bus) as \(connection.uniqueName)")
        } catch {
            fail("earshot daemon: \(error)")
        }
        // Set when the bus goes away before a signal asked to stop: a failure, so that a
        // service manager (systemd's Restart=on-failure) restarts the daemon.
        let lost = Locked(false)
        connection.onDisconnect {
            if !stop.fired { lost.set(true) }
            stop.fire()
        }
        await stop.wait()
        _ = sources
        if lost.get() {
            fail("earshot daemon: lost the connection to \(busOptions.busDescription) (the bus closed it or went away); "
                 + "\(ArbiterName.bus) is no longer served")
        }
        arbiter.stop()
        await connection.flush()
    }
}
