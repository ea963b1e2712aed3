import ArgumentParser
import Earshot
#if canImport(Glibc)
import Glibc
#endif

@main
struct EarshotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "earshot",
        abstract: "Media sessions for the Linux desktop: now playing, remote control, MPRIS.",
        discussion: """
            earshot publishes players on the D-Bus session bus as MPRIS \
            (org.mpris.MediaPlayer2), so desktop media keys, headset buttons, playerctl \
            and GNOME or KDE media widgets can see and control them.

            It uses the session bus named by DBUS_SESSION_BUS_ADDRESS unless --bus \
            gives another address.

            EXAMPLES:
              earshot publish --title "Song A" --title "Song B" --artist Someone --length 180
              playerctl -p earshot metadata --format '{{title}} {{position}}'
              playerctl -p earshot next
            """,
        version: "0.1.0",
        subcommands: [Play.self, Sound.self, Publish.self, Remote.self, Status.self, Daemon.self]
    )
}

/// Options every bus-using subcommand shares.
struct BusOptions: ParsableArguments {
    @Option(name: .customLong("bus"), help: ArgumentHelp(
        "The D-Bus address to use instead of the session bus.", valueName: "ADDRESS"))
    var address: String?

    var bus: DBusConnection.Bus { address.map { .address($0) } ?? .session }
}

/// Writes one line to standard output at once, unbuffered, so that a reader on a pipe
/// sees each line as it happens.
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(1, buffer.baseAddress! + offset, buffer.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}
