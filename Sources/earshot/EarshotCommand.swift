import ArgumentParser
import Earshot
import DBus
import MPRIS
#if canImport(Glibc)
import Glibc
#endif

struct EarshotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "earshot",
        abstract: "Play audio with an iOS-style audio session, controllable over MPRIS.",
        discussion: """
            earshot plays files and system sounds through the sound server (PulseAudio \
            or PipeWire), or straight to ALSA where none answers, and takes part in the \
            desktop's audio sessions: a process in the playback category interrupts other \
            non-mixable audio (which resumes when it deactivates), duckOthers lowers the \
            others, ambient sounds mix in and go quiet while the screen is locked. The \
            rules are applied across processes by the arbiter, org.earshot.AudioSession, \
            which runs inside the first earshot process that finds none, or as \
            `earshot daemon`.

            Players are published on the D-Bus session bus as MPRIS \
            (org.mpris.MediaPlayer2), so media keys, headset buttons, playerctl and GNOME \
            or KDE media widgets control them; the process that last made sound is the \
            target (`earshot remote` sends to it).

            The session bus is the one DBUS_SESSION_BUS_ADDRESS names unless --bus gives \
            another; the sound is played to the sound server's default sink (ALSA's \
            "default" device where no server answers) unless --device or \
            EARSHOT_AUDIO_DEVICE names an ALSA device.

            EXAMPLES:
              earshot play song.flac other.ogg
              earshot sound message-new-instant
              earshot record memo.flac --duration 10
              earshot remote play-pause
              earshot status --follow
              earshot publish --title "Song A" --title "Song B" --length 180
            """,
        version: earshotVersion,
        subcommands: [Play.self, Record.self, Sound.self, Publish.self, Remote.self, Status.self, Daemon.self]
    )
}

/// Options every bus-using subcommand shares.
struct BusOptions: ParsableArguments {
    @Option(name: .customLong("bus"), help: ArgumentHelp(
        "The D-Bus address to use instead of the session bus.", valueName: "ADDRESS"))
    var address: String?

    var bus: DBusConnection.Bus { address.map { .address($0) } ?? .session }

    /// The bus for messages: its address (from --bus or DBUS_SESSION_BUS_ADDRESS).
    var busDescription: String {
        if let address { return "the bus at \(address)" }
        guard let address = getenv("DBUS_SESSION_BUS_ADDRESS").map({ String(cString: $0) }), !address.isEmpty else {
            return "the session bus"
        }
        return "the session bus at \(address)"
    }
}

/// Writes one line to standard output at once, unbuffered, so that a reader on a pipe
/// sees each line as it happens. Control characters in it are escaped
/// (``TerminalText``): lines carry names, tags and strings from outside.
func say(_ line: String) {
    let bytes = Array((CommandLineFile.naming(TerminalText.escaped(line)) + "\n").utf8)
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(1, buffer.baseAddress! + offset, buffer.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}
