import ArgumentParser
import Earshot
import DBus
import MPRIS
import Dispatch
import FoundationEssentials
import Glibc

/// `earshot publish`: a stand-in player that publishes now-playing info over MPRIS,
/// keeps its position running, and obeys (and prints) the remote commands it receives.
struct Publish: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Publish a now-playing entry on MPRIS and obey remote commands.",
        discussion: """
            Publishes a stand-in player, without sound, as org.mpris.MediaPlayer2.NAME. \
            Its position runs as if it played; at the end of a title it moves to the \
            next one (or repeats, as the loop status says) and stops after the last.

            Each remote command it receives is printed on a line of its own and obeyed: \
            play, pause, stop, next and previous walk the titles; seek and set-position \
            move the position; rate, volume, loop and shuffle change; quit exits. \
            It is a tool for testing desktop integration: media keys, playerctl, widgets.

            EXIT STATUS: 0 after quit, SIGINT or SIGTERM; 1 when the bus cannot be \
            reached or goes away; 64 for invalid options (a bad --name, --length or --art).
            """
    )

    @OptionGroup var busOptions: BusOptions

    @Option(name: .customLong("title"), help: ArgumentHelp("A title; repeat for a list of tracks.", valueName: "TITLE"))
    var titles: [String] = []

    @Option(help: ArgumentHelp("The artist of every title.", valueName: "ARTIST"))
    var artist: String?

    @Option(help: ArgumentHelp("The album of every title.", valueName: "ALBUM"))
    var album: String?

    // Unconditional, so that `--length -3` reaches validation instead of reading as an option.
    @Option(parsing: .unconditional, help: ArgumentHelp("The length of each title, in seconds.", valueName: "SECONDS"))
    var length: Double = 180

    @Option(help: ArgumentHelp("An image file to publish as the art of every title.", valueName: "FILE"))
    var art: String?

    @Option(help: ArgumentHelp("The MPRIS name suffix: the player is org.mpris.MediaPlayer2.NAME.", valueName: "NAME"))
    var name: String = "earshot"

    @Flag(help: "Own org.mpris.MediaPlayer2.NAME.instancePID alone instead of sharing NAME with other processes.")
    var instance = false

    @Flag(help: "Become the app's target at once: take its last-sound-wins name, org.earshot.MPRISTarget.NAME, from its current owner (REPLACE_EXISTING), as a process does when it starts making sound. The app's MPRIS entry then relays to this process.")
    var claim = false

    @Flag(help: "Start paused instead of playing.")
    var paused = false

    func validate() throws {
        do {
            try MPRISConfiguration(appName: name, identity: "Earshot").validate()
        } catch {
            throw ValidationError(TerminalText.escaped("--name \(name): \(error.message)"))
        }
        guard length.isFinite, length > 0 else {
            throw ValidationError("--length must be a positive number of seconds, not \(length)")
        }
        if let art {
            var isDirectory = false
            guard FileManager.default.fileExists(atPath: art, isDirectory: &isDirectory) else {
                throw ValidationError("cannot use --art \(TerminalText.escaped(art)): no such file")
            }
            guard !isDirectory else { throw ValidationError("cannot use --art \(TerminalText.escaped(art)): it is a directory") }
            guard FileManager.default.isReadableFile(atPath: art) else {
                throw ValidationError("cannot use --art \(TerminalText.escaped(art)): permission denied")
            }
        }
        for title in titles where title.utf8.contains(0) {
            throw ValidationError("a --title cannot contain a NUL character")
        }
    }

    func run() async throws {
        var configuration = MPRISConfiguration(appName: name, identity: "Earshot", desktopEntry: "earshot")
        configuration.supportedURISchemes = ["file", "http", "https"]
        configuration.supportedMIMETypes = ["audio/mpeg", "audio/ogg", "audio/flac", "audio/x-wav"]
        if instance { configuration.instanceID = String(getpid()) }

        let artPath = art.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        let commands = RemoteCommandCenter()
        let nowPlaying = NowPlayingInfoCenter()
        let player = StandInPlayer(
            tracks: (titles.isEmpty ? ["Untitled"] : titles).map {
                StandInPlayer.Track(title: $0, artist: artist, album: album, length: length, artPath: artPath)
            },
            startPlaying: !paused, commands: commands, nowPlaying: nowPlaying)

        let signals = await player.watch([SIGINT, SIGTERM])
        defer { signals.forEach { $0.cancel() } }
        let connection: DBusConnection
        let mpris: MPRISPlayer
        do {
            connection = try DBusConnection(busOptions.bus)
            mpris = try MPRISPlayer(connection: connection, configuration: configuration,
                                    commandCenter: commands, nowPlayingInfoCenter: nowPlaying)
            var reply = try await mpris.publish()
            if claim { reply = try await mpris.claimName() }
            say("published \(mpris.busName) as \(connection.uniqueName) (\(reply == .inQueue ? "queued behind its owner" : "owner"))")
        } catch {
            note("earshot publish: \(error)")
            throw ExitCode.failure
        }

        let quitting = Locked(false)
        connection.onDisconnect {
            guard !quitting.get() else { return }
            note("earshot publish: lost the connection to \(busOptions.busDescription) (the bus closed it or went away); nothing left to publish to")
            Glibc.exit(1)
        }
        await player.run()
        quitting.set(true)
        mpris.unpublish()
        await connection.flush()
    }
}
