import ArgumentParser
import Earshot
import Foundation

/// `earshot play`: plays files as a queue, published on MPRIS and controlled from the
/// keyboard, media keys and playerctl.
struct Play: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play audio files as a queue, controllable over MPRIS.",
        discussion: """
            Plays FILE… in order (WAV, AIFF, CAF with ALAC, FLAC, Ogg Vorbis, Opus, MP3) \
            through ALSA's default device, and publishes the queue as \
            org.mpris.MediaPlayer2.NAME so that media keys, playerctl and desktop widgets \
            control it, and as an MPRIS track list. Without a session bus it plays \
            anyway, without MPRIS or an audio session.

            It joins the desktop's audio session in the category --category gives \
            (playback by default): it interrupts non-mixable audio, or mixes with --mix, \
            or lowers the others with --duck; it pauses when interrupted and resumes when \
            the interrupter lets it; it pauses when its output device goes away. When it \
            ends it deactivates and lets the audio it interrupted resume.

            On a terminal it shows a live line (title, elapsed / duration, level meter) and \
            reads keys: space pause/play, ← → seek 5 s, n next, p previous, q quit. \
            Otherwise it prints a line per event.

            EXIT STATUS: 0 when the queue played out or was quit; 1 when a file cannot be \
            played (the message names the file and the reason; the others still play) or \
            the device cannot be opened. A file cut short plays up to the cut, with a note \
            saying where it stopped.
            """
    )

    @OptionGroup var busOptions: BusOptions

    @Argument(help: ArgumentHelp("The files to play, in order.", valueName: "FILE"))
    var files: [String]

    @Option(help: ArgumentHelp("The MPRIS name suffix: the player is org.mpris.MediaPlayer2.NAME.", valueName: "NAME"))
    var name: String = "earshot"

    @Option(help: ArgumentHelp("The ALSA device to play to (default: EARSHOT_AUDIO_DEVICE, or \"default\").", valueName: "DEVICE"))
    var device: String?

    @Option(help: ArgumentHelp("The volume, 0 to 1.", valueName: "LEVEL"))
    var volume: Float = 1

    @OptionGroup var sessionOptions: SessionOptions

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one FILE to play") }
        guard volume.isFinite, (0...1).contains(volume) else { throw ValidationError("--volume must be between 0 and 1, not \(volume)") }
    }

    func run() async throws {
        if let device { setenv("EARSHOT_AUDIO_DEVICE", device, 1) }
        AudioEngine.shared.streamIdentity = .init(applicationName: name, applicationID: name, iconName: "earshot", role: .music)
        let queue: QueuePlayer
        do {
            let given = files.map { CommandLineFile($0, command: "play") }
            queue = try QueuePlayer(urls: given.map { URL(fileURLWithPath: $0.path) }, names: given.map(\.title))
        } catch {
            fail("earshot play: \(error)")
        }
        queue.volume = volume

        let commands = RemoteCommandCenter()
        let nowPlaying = NowPlayingInfoCenter()
        queue.connect(to: nowPlaying, commands: commands)
        let quit = QuitSignal()
        commands.quitCommand.addTarget { _ in quit.fire(); return .success }
        commands.raiseCommand.addTarget { _ in .success }

        // The audio session: the arbiter decides interruptions and ducking across
        // processes; MPRIS goes on the session's connection so that one bus name is both
        // the arbiter's target and the MPRIS owner.
        let session = AudioSession(appName: name, bus: busOptions.bus)
        if ProcessInfo.processInfo.environment["EARSHOT_TRACE"] == "1" {
            AudioSession.trace.withLock { $0 = { event in say(String(format: "trace %.6f %@", wallClockNow(), event)) } }
        }
        var mpris: MPRISPlayer?
        var connection: DBusConnection?
        let quitting = Locked(false)
        do {
            let bus = try await session.connection()
            try await session.setCategory(sessionOptions.category, options: sessionOptions.options)
            var configuration = MPRISConfiguration(appName: name, identity: "Earshot", desktopEntry: "earshot")
            configuration.supportedMIMETypes = ["audio/x-wav", "audio/x-aiff", "audio/flac", "audio/ogg", "audio/mpeg", "audio/x-caf"]
            configuration.supportedURISchemes = ["file"]
            let player = try MPRISPlayer(connection: bus, configuration: configuration, commandCenter: commands,
                                         nowPlayingInfoCenter: nowPlaying, trackList: queue)
            queue.onChange { [weak player] in player?.trackListChanged() }
            try await player.publish()
            try await session.adopt(player, commands: commands)
            reportSessionEvents(of: session)
            try await session.setActive(true)
            (mpris, connection) = (player, bus)
            // Without a bus it plays anyway (as when there is none at the start): losing it
            // is said, not fatal.
            let description = busOptions.busDescription
            bus.onDisconnect { [quitting] in
                guard !quitting.get() else { return }
                note("earshot play: lost the connection to \(description) (the bus closed it or went away); "
                     + "no longer on MPRIS or in an audio session; playing on")
            }
        } catch {
            note("earshot play: not published on MPRIS and not in an audio session (\(error))")
        }

        let display = PlayDisplay(queue: queue, interactive: isatty(1) == 1 && isatty(0) == 1)
        queue.play()
        if let error = queue.lastError { fail("earshot play: \(error)") }
        let started = Date()
        await display.run(until: quit)
        let played = Date().timeIntervalSince(started)
        display.finish()
        if !display.interactive {
            say(String(format: "played %d item%@ in %.1f s (%d underruns)", display.itemsPlayed, display.itemsPlayed == 1 ? "" : "s",
                       played, AudioEngine.shared.underrunCount))
        }
        defer {
            if !display.failures.isEmpty {
                let count = display.failures.count
                fail("earshot play: \(count) file\(count == 1 ? "" : "s") could not be played: \(display.failures.joined(separator: ", "))")
            }
        }
        quitting.set(true)
        if connection != nil { try? await session.setActive(false, options: .notifyOthersOnDeactivation) }
        mpris?.unpublish()
        await connection?.flush()
    }

    /// Prints what the session goes through, one line each.
    private func reportSessionEvents(of session: AudioSession) {
        let token = session.observe { notification in
            switch notification {
            case .interruption(.began(let reason)): say("session: interrupted (\(reason))")
            case .interruption(.ended(let resume)): say("session: interruption ended\(resume ? ", resuming" : "")")
            case .routeChange(let change): say("session: route changed (\(change.reason))")
            case .silenceSecondaryAudioHint(let silence): say("session: secondary audio \(silence ? "should be silenced" : "may play")")
            case .mediaServicesWereReset: say("session: the arbiter changed hosts; registered again")
            }
        }
        sessionObservation.set(token)
    }

}

/// Keeps the session observation alive for the whole run.
private let sessionObservation = Locked<ObservationToken?>(nil)

/// A one-shot flag set by a quit command, a key or a signal.
final class QuitSignal: Sendable {
    private let bell = Doorbell()
    func fire() { bell.ring() }
    var fired: Bool { bell.rung }
    /// Returns once fired, without polling.
    func wait() async { await bell.wait() }
}

/// A tiny lock-protected value for the command-line tool.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.withLock { value } }
    func set(_ new: Value) { lock.withLock { value = new } }
    func update<R>(_ body: (inout Value) -> R) -> R { lock.withLock { body(&value) } }
}

/// CLOCK_REALTIME in seconds: the clock of dbus-monitor's timestamps, so traces and bus
/// traffic can be compared.
func wallClockNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Writes a line to standard error, control characters escaped (``TerminalText``) unless
/// `escaped` says the line is escaped already, and files given on the command line named
/// as given (``CommandLineFile``).
func note(_ line: String, escaped: Bool = false) {
    let text = CommandLineFile.naming(escaped ? line : TerminalText.escaped(line))
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Writes a message to standard error (as ``note(_:escaped:)``) and exits with status 1.
func fail(_ message: String, escaped: Bool = false) -> Never {
    note(message, escaped: escaped)
    exit(1)
}
