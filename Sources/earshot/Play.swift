import ArgumentParser
import Earshot
import DBus
import MPRIS
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization
import AudioEngine

/// `earshot play`: plays files as a queue, published on MPRIS and controlled from the
/// keyboard, media keys and playerctl.
struct Play: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play audio files as a queue, controllable over MPRIS.",
        discussion: """
            Plays FILE… in order (WAV, AIFF, CAF, FLAC, Ogg Vorbis, Opus and MP3 through \
            libsndfile; AAC and ALAC in MP4/M4A, ADTS AAC and WMA through FFmpeg) through \
            the sound server (or ALSA where none answers), and publishes the queue as \
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

    @Argument(help: ArgumentHelp("The files, or http:// and https:// URLs (files or radio streams), to play, in order.", valueName: "FILE"))
    var files: [String]

    @Option(help: ArgumentHelp("The MPRIS name suffix: the player is org.mpris.MediaPlayer2.NAME.", valueName: "NAME"))
    var name: String = "earshot"

    @Option(help: ArgumentHelp("An ALSA device to play to instead of the sound server (default: EARSHOT_AUDIO_DEVICE, or the sound server's default sink).", valueName: "DEVICE"))
    var device: String?

    @Option(help: ArgumentHelp("The volume, 0 to 1.", valueName: "LEVEL"))
    var volume: Float = 1

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(
        "Let the sound server hold about two seconds of the sound, as it does paplay's, when local "
        + "files play (the default): the process wakes a few times a second instead of about 60, and a pause, "
        + "seek or volume change is still heard within 30 ms, a pause at what the sink played. "
        + "An item shorter than two seconds is followed by a short gap. "
        + "--no-long-buffer keeps the short buffer a URL gets."))
    var longBuffer = true

    @OptionGroup var sessionOptions: SessionOptions

    @Flag(help: ArgumentHelp(
        "Leave the audio session alone, as an app that never calls it: the players join the "
        + "process's session by themselves, in the default category (soloAmbient), activated "
        + "by the first play. No MPRIS; the session options do not apply."))
    var implicitSession = false

    /// The sample rate of the first argument that is not a URL, when it opens as audio.
    static func firstFileRate(_ files: [String]) -> Int? {
        guard let first = files.first(where: { !NetworkStream.handles($0) }) else { return nil }
        return try? AudioFile(contentsOf: CommandLineFile(first, command: "play").path).format.sampleRate
    }

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one FILE to play") }
        guard volume.isFinite, (0...1).contains(volume) else { throw ValidationError("--volume must be between 0 and 1, not \(volume)") }
    }

    func run() async throws {
        // Local files (unless --no-long-buffer): the server holds a long buffer (a few
        // wakeups a second while it plays); a pause, seek, stop or volume change is still heard
        // at once, and a pause settles at the frame the sink played. In an item's last buffer
        // (its end mixed, not yet heard) a pause or seek is for that item, as heard (see
        // `Voice.isEndingUnheard`); an item shorter than the buffer is followed by a gap of
        // about 0.1 s (the queue queues one item ahead). Not for a URL (a network stream
        // refills at its own pace, and a live one cannot fill two seconds ahead). Its first write is a whole
        // buffer with the voice in it; the start counts as heard only once the server says the
        // sink plays the stream, so on a sink that starts late (a fresh null sink with
        // rewinds) now playing waits with the sound (SoundServerPlayPositionTests).
        // Two seconds, the server's default for a stream that asks for nothing (paplay's): the
        // server asks for a second at a time. Against one second, the playing process took a
        // quarter less CPU (bench/power: 0.031 against 0.045 % of a core for libpulse's thread,
        // same run), and started no later (75.8 and 73.1 ms from the command to the first frame).
        // After a change the clock takes the server's timing between writes for a while (see
        // `AudioEngine.restartTimingWatch`): the writes alone, a second apart, left it behind.
        var engineConfiguration = AudioEngine.Configuration(device: device)
        if longBuffer, files.allSatisfy({ !NetworkStream.handles($0) }) { engineConfiguration.musicBufferDuration = 2 }
        // On a sound server, the stream runs at the first local file's rate, as paplay's and
        // mpv's do: the server resamples it to the sink once (or not at all: PulseAudio's
        // sinks run at 44.1 kHz by default), instead of the engine resampling a 44.1 kHz file
        // to 48 kHz and the sink back. Items at other rates are resampled to it, so a first
        // file below 44.1 kHz (speech at 8 or 16 kHz) leaves the engine at the sink's rate
        // (`followsDefaultSinkRate`): music after it would lose its highs. An ALSA device
        // keeps the engine's rate (hardware may take no other).
        if engineConfiguration.output != .alsa, let rate = Play.firstFileRate(files), rate >= 44100 {
            engineConfiguration.sampleRate = rate
            engineConfiguration.followsDefaultSinkRate = false
        }
        AudioEngine.configureShared(engineConfiguration)
        AudioEngine.shared.streamIdentity = .init(applicationName: name, applicationID: name, iconName: "earshot", role: .music)
        let queue: QueuePlayer
        do {
            // http:// and https:// arguments are streamed; anything else is a file.
            let given = files.map { argument -> (url: URL, title: String) in
                if NetworkStream.handles(argument), let url = URL(string: argument) { return (url, argument) }
                let file = CommandLineFile(argument, command: "play")
                return (URL(fileURLWithPath: file.path), file.title)
            }
            queue = try QueuePlayer(urls: given.map(\.url), names: given.map(\.title))
        } catch {
            fail("earshot play: \(error)")
        }
        queue.volume = volume

        let commands = RemoteCommandCenter()
        let nowPlaying = NowPlayingInfoCenter()
        queue.connect(to: nowPlaying, commands: commands)
        let quit = QuitSignal()
        // Before the queue is on the bus: a SIGTERM sent once it is must not be lost.
        let signals = await onTerminationSignals { quit.fire() }
        defer { withExtendedLifetime(signals) {} }
        commands.quitCommand.addTarget { _ in quit.fire(); return .success }
        // No Raise: it has no window (CanRaise false). Its DesktopEntry, "earshot", gives the
        // desktops its name and icon; a click on its widget entry launches that entry, whose
        // Exec only prints the version (packaging/earshot.desktop).

        // The audio session: the arbiter decides interruptions and ducking across
        // processes; MPRIS goes on the session's connection so that one connection is both
        // the arbiter's session and the app's target (it claims the app's last-sound-wins
        // name there, in order with its sound reports; the app's MPRIS entry relays to it).
        let session = AudioSession(appName: name, bus: busOptions.bus)
        if ProcessInfo.processInfo.environment["EARSHOT_TRACE"] == "1" {
            AudioSession.trace.withLock { $0 = { event in say("trace \(wallClockNow().fixed(6)) \(event)") } }
        }
        var mpris: MPRISPlayer?
        var connection: DBusConnection?
        var launchIntent: UInt64?
        let quitting = Locked(false)
        if implicitSession {
            // The players join AudioSession.shared by themselves; only its events are said.
            reportSessionEvents(of: AudioSession.shared)
        } else {
            do {
                let bus = try await session.connection()
                try await session.setCategory(sessionOptions.category, options: sessionOptions.options)
                var configuration = MPRISConfiguration(appName: name, identity: "Earshot", desktopEntry: "earshot")
                configuration.supportedMIMETypes = ["audio/x-wav", "audio/x-aiff", "audio/flac", "audio/ogg", "audio/opus", "audio/mpeg", "audio/x-caf",
                                                     "audio/mp4", "audio/x-m4a", "audio/aac", "audio/aacp", "audio/x-ms-wma"]
                configuration.supportedURISchemes = ["file", "http", "https"]
                let player = try MPRISPlayer(connection: bus, configuration: configuration, commandCenter: commands,
                                             nowPlayingInfoCenter: nowPlaying, trackList: queue)
                queueObservation.set(queue.observeChanges { [weak player] in player?.trackListChanged() })
                try await player.publish()
                try await session.adopt(player, commands: commands)
                reportSessionEvents(of: session)
                // The launch asked to play before the activation: an interruption that begins
                // after it (a user's play on another app) holds the queue until its end.
                launchIntent = session.interruptionsBegun
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
        }

        let display = PlayDisplay(queue: queue, interactive: isatty(1) == 1 && isatty(0) == 1)
        if let launchIntent { queue.play(askedAfter: launchIntent) } else { queue.play() }
        if let error = queue.lastError { fail("earshot play: \(error)") }
        let started = Date()
        await display.run(until: quit)
        let played = Date().timeIntervalSince(started)
        display.finish()
        if !display.interactive {
            say("played \(display.itemsPlayed) item\(display.itemsPlayed == 1 ? "" : "s") in \(played.fixed(1)) s "
                + "(\(AudioEngine.shared.underrunCount) underruns)")
        }
        defer {
            if !display.failures.isEmpty {
                let count = display.failures.count
                fail("earshot play: \(count) file\(count == 1 ? "" : "s") could not be played: \(display.failures.joined(separator: ", "))")
            }
        }
        quitting.set(true)
        if connection != nil {
            // The deactivation lets the sessions this one interrupted resume. A command that
            // ends does not wait long for the arbiter's answer: past 2 s it exits, and the
            // arbiter, seeing the process go, resumes them then.
            let answered = Locked(false), done = QuitSignal()
            Task {
                do {
                    try await session.setActive(false, options: .notifyOthersOnDeactivation)
                } catch {
                    // The sessions and apps it interrupted are not resumed by this call.
                    note("earshot play: could not deactivate the audio session: \(error)")
                }
                answered.set(true)
                done.fire()
            }
            Task {
                try? await Task.sleep(for: .seconds(2))
                done.fire()
            }
            await done.wait()
            if !answered.get() { say("session: the arbiter did not answer the deactivation within 2 s; exiting") }
        }
        mpris?.unpublish()
        await connection?.flush()
    }

    /// Prints what the session goes through, one line each.
    private func reportSessionEvents(of session: AudioSession) {
        let token = session.observe { notification in
            switch notification {
            // The arbiter does not name another app's player (a session would take it for its
            // interrupter when it registers again).
            case .interruption(.began(.otherApp)): say("session: interrupted (otherApp: another app started playing)")
            case .interruption(.began(let reason)): say("session: interrupted (\(reason))")
            case .interruption(.ended(let resume)): say("session: interruption ended\(resume ? ", resuming" : "")")
            case .routeChange(let change): say("session: route changed (\(change.reason))")
            case .silenceSecondaryAudioHint(let silence): say("session: secondary audio \(silence ? "should be silenced" : "may play")")
            case .mediaServicesWereReset: say("session: media services were reset (the arbiter changed hosts, or the sound server restarted); registered again")
            case .deactivatedAfterSilence: say("session: deactivated by the arbiter after a long silence")
            case .inputAvailabilityChange(let available): say("session: \(available ? "an input is available" : "no input is available")")
            case .inputsChange: break  // the route change or availability above says what matters to a player
            }
        }
        sessionObservation.set(token)
    }

}

/// Keeps the session observation alive for the whole run.
private let sessionObservation = Locked<ObservationToken?>(nil)
/// The MPRIS player's watch of the queue, for the process's life.
private let queueObservation = Locked<ObservationToken?>(nil)

/// A one-shot flag set by a quit command, a key or a signal.
final class QuitSignal: Sendable {
    private let bell = Doorbell()
    func fire() { bell.ring() }
    var fired: Bool { bell.rung }
    /// Returns once fired, without polling.
    func wait() async { await bell.wait() }
}

/// A tiny lock-protected value for the command-line tool.
final class Locked<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func get() -> Value { value.withLock { $0 } }
    func set(_ new: Value) { value.withLock { $0 = new } }
    func update<R>(_ body: (inout Value) -> R) -> R { value.withLock { body(&$0) } }
}

/// CLOCK_REALTIME in seconds: the clock of dbus-monitor's timestamps, so traces and bus
/// traffic can be compared.
func wallClockNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Writes all of `text` to the file descriptor `fd`, as far as it will take it (a closed
/// pipe ends the write quietly).
func writeAll(_ text: String, to fd: Int32) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        bytes = bytes.dropFirst(written)
    }
}

/// Writes a line to standard error, control characters escaped (``TerminalText``) unless
/// `escaped` says the line is escaped already, and files given on the command line named
/// as given (``CommandLineFile``).
func note(_ line: String, escaped: Bool = false) {
    let text = CommandLineFile.naming(escaped ? line : TerminalText.escaped(line))
    writeAll(text + "\n", to: STDERR_FILENO)
}

/// Writes a message to standard error (as ``note(_:escaped:)``) and exits with status 1.
func fail(_ message: String, escaped: Bool = false) -> Never {
    note(message, escaped: escaped)
    exit(1)
}
