import ArgumentParser
import Earshot
import FoundationEssentials
import Glibc
import Dispatch
import AudioEngine
import Platform
internal import CGlobalExecutor

/// `earshot sound`: plays a system sound and waits for it to end.
struct Sound: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sound",
        abstract: "Play a system sound by freedesktop event name or from a file.",
        discussion: """
            NAME is looked up in the sound theme (XDG Sound Theme specification: \
            $XDG_DATA_HOME/sounds, then $XDG_DATA_DIRS/sounds, theme inheritance, \
            locale folders, .oga/.ogg/.wav), for example bell, complete, \
            message-new-instant, dialog-warning. A path to a file plays that file.

            System sounds are short: a file whose decoded audio would pass 16 MiB (about \
            43 s of 48 kHz stereo) is refused, naming its length; play it with earshot play.

            EXIT STATUS: 0 when the sound played; 1 when it cannot be found, decoded or played \
            (the message names the file and the reason).
            """
    )

    @Argument(help: ArgumentHelp("A sound-theme event name, or a sound file.", valueName: "NAME|FILE"))
    var sound: String

    @Option(help: ArgumentHelp("The sound theme to look NAME up in.", valueName: "THEME"))
    var theme: String = "freedesktop"

    @Option(help: ArgumentHelp("An ALSA device to play to instead of the sound server.", valueName: "DEVICE"))
    var device: String?

    /// How `earshot sound`'s streams and cached plays present themselves to the sound server.
    static let identity = AudioEngine.StreamIdentity(applicationName: "earshot", applicationID: "earshot", iconName: "earshot", role: .event)

    func run() async throws {
        let identity = Sound.identity
        let given = CommandLineFile(sound, command: "sound")
        let isFile = Sound.namesFile(sound)
        // A theme sound plays from the sound server's sample cache where a server answers:
        // the engine (its stream and threads) is not made at all.
        if !isFile, device == nil {
            let done = QuitSignal()
            do {
                if let cached = try Sound.startCached(sound, theme: theme, whenDone: { done.fire() }) {
                    await done.wait()
                    Sound.sayPlayed(sound, cached)
                    return
                }
            } catch {
                fail("earshot sound: \(error)")
            }
        }
        let systemSound: SystemSound
        do {
            if let device { AudioEngine.configureShared(AudioEngine.Configuration(device: device)) }
            AudioEngine.systemSounds.streamIdentity = identity
            // Open the device (connecting to the sound server) while the sound decodes.
            startThread(name: "earshot-open") { try? AudioEngine.systemSounds.openDevice() }
            systemSound = isFile
                ? try SystemSound(contentsOf: URL(fileURLWithPath: given.path))
                : try SystemSound(named: sound, theme: SoundTheme(name: theme))
        } catch {
            fail("earshot sound: \(error)")
        }
        let done = QuitSignal()
        do {
            try systemSound.play { done.fire() }
        } catch {
            fail("earshot sound: \(error)")
        }
        await done.wait()
        // A name given in bytes that are not UTF-8 is shown by its path, which `say` prints as given, escaped.
        say("played \(given.path == sound ? sound : given.path) (\(systemSound.path), \(systemSound.duration.fixed(2)) s)")
    }
}

extension Sound {
    /// Whether the SOUND argument names a file (a path, or a name a file has here) rather
    /// than a theme sound.
    static func namesFile(_ argument: String) -> Bool {
        CommandLineFile(argument, command: "sound").path != argument || argument.contains("/")
            || FileManager.default.fileExists(atPath: argument)
    }

    /// Starts the theme sound `name` from the sound server's sample cache; `done` runs after
    /// its last frame is heard. Nil, having played nothing, when the cache cannot play it (no
    /// server answers, or the sound is not found). The one start of a cached play, for
    /// ``run()`` and ``playCachedBeforeParsing(_:)``, which wait for `done` each in its own way.
    static func startCached(_ name: String, theme: String, whenDone done: @escaping @Sendable () -> Void) throws -> SystemSound? {
        try SystemSound.playingFromCache(named: name, theme: SoundTheme(name: theme), identity: identity, completion: done)
    }

    /// The line a played sound ends with.
    static func sayPlayed(_ name: String, _ sound: SystemSound) {
        say("played \(name) (\(sound.path), \(sound.duration.fixed(2)) s)")
    }

    /// `earshot sound NAME` and nothing else, for a theme sound the server's sample cache can
    /// play: played on the main thread before anything else runs, and waited for there.
    /// Returns the exit status, or nil for every other command line and every sound the cache
    /// cannot play: ArgumentParser then runs as always.
    ///
    /// Two costs of the start are skipped so: ArgumentParser's parse of the command tree
    /// (reflection and its protocol-conformance scans of the static binary, about 2 ms), and
    /// the start of an async `main`, whose first job runs only once libdispatch has handed
    /// the main queue to a new worker thread of its pool.
    static func playCachedBeforeParsing(_ arguments: [String]) -> Int32? {
        guard arguments.count == 3, arguments[1] == "sound" else { return nil }
        let name = arguments[2]
        // Options and files go the parsed way (`run()`).
        guard !name.hasPrefix("-"), !namesFile(name) else { return nil }
        let done = DispatchSemaphore(value: 0)
        guard let cached = try? startCached(name, theme: "freedesktop", whenDone: { done.signal() }) else { return nil }
        done.wait()
        sayPlayed(name, cached)
        return 0
    }
}

/// The process's entry point: synchronous, so that ``Sound/playCachedBeforeParsing(_:)``
/// plays on the main thread at once. Every other command line goes to ArgumentParser's
/// async `main` in a task, on the executor installed first.
@main
enum Entry {
    static func main() {
        if let status = Sound.playCachedBeforeParsing(CommandLine.arguments) { Glibc.exit(status) }
        // Before any task: an idle earshot wakes for nothing then (CGlobalExecutor.h).
        _ = earshot_run_tasks_on_overcommit_queue()
        // The arbiter's trace, for a process that hosts it (as `earshot daemon --trace`).
        if getenv("EARSHOT_ARBITER_TRACE").map({ String(cString: $0) }) == "1" {
            AudioSession.arbiterEventLog.withLock { $0 = ArbiterTrace.line() }
        }
        Task {
            await EarshotCommand.main(nil)
            Glibc.exit(0)
        }
        // Parks the main thread; the task above, and every later one, runs on the pool.
        dispatchMain()
    }
}
