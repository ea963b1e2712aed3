import ArgumentParser
import AudioEngine
import Dispatch
import Earshot
import FoundationEssentials
import Glibc

/// `earshot record`: records the default input (or --device) into a file until Ctrl-C or
/// --duration, in the `record` session category (or `playAndRecord` with --play).
struct Record: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record from an input into an audio file.",
        discussion: """
            Records the sound server's default source (or --device: a source name, or an \
            ALSA capture device where no sound server answers) into FILE until Ctrl-C or \
            --duration. The format comes from FILE's extension (wav, aiff, caf, flac, ogg, \
            opus, m4a for AAC) unless --format says (alac: Apple Lossless in .m4a); --rate, \
            --channels, --bit-depth, --quality and --bit-rate set the rest (48000 Hz, 2 \
            channels, 16 bits, quality 0.6, AAC at 64 kb/s per channel by default).

            It joins the desktop's audio session in the record category (its own playback \
            silenced), or playAndRecord with --play FILE, which plays FILE while recording, \
            as a voice-over app does. When another session interrupts it, it pauses and \
            continues into the same file when the interruption ends with shouldResume. \
            Without a session bus it records anyway, without an audio session.

            On a terminal it shows a live line with the elapsed time and a level meter. On \
            exit it prints the file, its duration, format and peak level.

            EXIT STATUS: 0 when the recording ended normally; 1 when the file cannot be \
            written or the input fails (the message names the file or input and the reason; \
            what was recorded until then stays in a valid file).
            """
    )

    @OptionGroup var busOptions: BusOptions

    @Argument(help: ArgumentHelp("The file to record into (created or replaced).", valueName: "FILE"))
    var file: String

    @Option(help: ArgumentHelp("The input: a sound-server source name, or an ALSA capture device.", valueName: "DEVICE"))
    var device: String?

    @Flag(help: "Record from ALSA (--device, or \"default\") even when a sound server answers.")
    var alsa = false

    @Option(help: ArgumentHelp("The file type: wav, aiff, caf, flac, ogg, opus, m4a (AAC) or alac (Apple Lossless in .m4a) (default: from FILE's extension).", valueName: "TYPE"))
    var format: String?

    @Option(help: ArgumentHelp("The sample rate in Hz.", valueName: "HZ"))
    var rate: Int = 48000

    @Option(help: ArgumentHelp("The number of channels.", valueName: "N"))
    var channels: Int = 2

    @Option(name: .customLong("bit-depth"), help: ArgumentHelp("Bits per sample for WAV, AIFF, CAF (16, 24, 32 float) and FLAC (16, 24).", valueName: "BITS"))
    var bitDepth: Int = 16

    @Option(help: ArgumentHelp("Encoder quality for Ogg Vorbis and Opus, 0 to 1.", valueName: "Q"))
    var quality: Double = 0.6

    @Option(name: .customLong("bit-rate"), help: ArgumentHelp("AAC's bit rate in bits per second (default 64000 per channel).", valueName: "BPS"))
    var bitRate: Int?

    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "SECONDS"))
    var duration: Double?

    @Option(help: ArgumentHelp("Play this file while recording (category playAndRecord).", valueName: "FILE"))
    var play: String?

    @Option(help: ArgumentHelp("The application name the session and streams carry.", valueName: "NAME"))
    var name: String = "earshot"

    /// The type --format names: an extension, or `alac` (Apple Lossless, whose extension is
    /// AAC's `.m4a`).
    static func fileType(_ name: String) -> RecordingFormat.FileType? {
        name.lowercased() == "alac" ? .appleLossless : RecordingFormat.FileType(fileExtension: name)
    }

    func validate() throws {
        if let format, Self.fileType(format) == nil {
            throw ValidationError("--format must be wav, aiff, caf, flac, ogg, opus, m4a or alac, not \(format)")
        }
        if let duration { guard duration.isFinite, duration > 0 else { throw ValidationError("--duration must be above 0, not \(duration)") } }
    }

    func run() async throws {
        // First: a SIGINT sent once the input is announced must stop the recording cleanly.
        let quit = QuitSignal()
        let signals = await onTerminationSignals { quit.fire() }
        AudioEngine.shared.streamIdentity = .init(applicationName: name, applicationID: name, iconName: "earshot", role: .music)
        let given = CommandLineFile(file, command: "record")
        let url = URL(fileURLWithPath: given.path)
        let settings = AudioRecorder.Settings(fileType: format.flatMap { Self.fileType($0) }, sampleRate: rate,
                                              numberOfChannels: channels, bitDepth: bitDepth, quality: quality, bitRate: bitRate)

        // The session: record, or playAndRecord when a file plays along.
        let session = AudioSession(appName: name, bus: busOptions.bus)
        var joined = false
        do {
            _ = try await session.connection()
            try await session.setCategory(play == nil ? .record : .playAndRecord)
            try await session.setActive(true)
            joined = true
        } catch {
            note("earshot record: not in an audio session (\(error)); recording anyway")
        }

        let recorder: AudioRecorder
        do {
            recorder = try AudioRecorder(url: url, settings: settings, input: .init(device: device, alsaOnly: alsa),
                                         session: joined ? session : nil)
            try recorder.prepare()
        } catch {
            fail("earshot record: \(error)")
        }
        if let kind = recorder.inputKind { note("earshot: audio input: \(kind)") }
        recorder.isMeteringEnabled = true

        var player: AudioPlayer?
        if let play {
            let source = CommandLineFile(play, command: "record")
            do {
                player = try AudioPlayer(contentsOf: URL(fileURLWithPath: source.path))
            } catch {
                fail("earshot record: \(error)")
            }
        }

        let failure = Locked<RecordingError?>(nil)
        let events = Task {
            for await event in recorder.events {
                switch event {
                case .encodeError(let error): failure.set(error)
                case .finished: quit.fire()
                case .inputResumed(let gap): say("earshot record: the sound server came back after \((gap * 100).rounded() / 100) s; recording goes on")
                }
            }
        }
        let started = duration.map { recorder.record(forDuration: $0) } ?? recorder.record()
        guard started else { fail("earshot record: \(recorder.lastError.map { "\($0)" } ?? "cannot record")") }
        player?.play()

        let interactive = isatty(2) == 1
        let meter = RecordMeter(recorder: recorder, interactive: interactive)
        await meter.run(until: quit)
        recorder.stop()
        player?.stop()
        events.cancel()
        // Until here: dropped earlier (an optimised build may), the sources stop and SIGINT is ignored.
        withExtendedLifetime(signals) {}
        meter.finish()
        if joined { try? await session.setActive(false, options: .notifyOthersOnDeactivation) }

        let peak = meter.peak
        say("recorded \(given.path): \(recorder.currentTime.fixed(2)) s, \(recorder.format), peak "
            + (peak > -160 ? "\(Double(peak).fixed(1)) dBFS" : "silence"))
        if let error = failure.get() { fail("earshot record: \(error)") }
    }
}

/// The live line of `earshot record` on a terminal (standard error), and the peak level
/// over the whole recording.
final class RecordMeter: Sendable {
    let recorder: AudioRecorder
    let interactive: Bool
    private let peakLevel = Locked<Float>(-160)

    init(recorder: AudioRecorder, interactive: Bool) {
        self.recorder = recorder
        self.interactive = interactive
    }

    /// The highest peak read so far, in dBFS.
    var peak: Float { peakLevel.get() }

    /// Reads the meters 10 times a second on a terminal (4 otherwise, for the peak) until `quit`.
    func run(until quit: QuitSignal) async {
        let interval = interactive ? 100 : 250
        while !quit.fired {
            read()
            if interactive { draw() }
            try? await Task.sleep(for: .milliseconds(interval))
        }
        read()
    }

    private func read() {
        recorder.updateMeters()
        let level = (0..<recorder.format.channels).map { recorder.peakPower(forChannel: $0) }.max() ?? -160
        peakLevel.update { $0 = max($0, level) }
    }

    private func draw() {
        let level = (0..<recorder.format.channels).map { recorder.peakPower(forChannel: $0) }.max() ?? -160
        let cells = Int(((max(-60, level) + 60) / 60 * 20).rounded())
        let bar = String(repeating: "█", count: cells) + String(repeating: "·", count: 20 - cells)
        let state = recorder.isRecording ? "● rec" : "‖ paused"
        let time = recorder.currentTime
        let clock = "\(Int(time) / 60):" + (Int(time) % 60 < 10 ? "0" : "") + "\(Int(time) % 60)." + "\(Int(time * 10) % 10)"
        writeAll("\r\u{1B}[K\(state) \(clock)  \(bar) \(level > -160 ? Double(level).fixed(1) : "-inf") dBFS", to: STDERR_FILENO)
    }

    /// Ends the live line.
    func finish() {
        if interactive { writeAll("\r\u{1B}[K", to: STDERR_FILENO) }
    }
}
