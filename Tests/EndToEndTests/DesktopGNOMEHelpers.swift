import DBus
import Foundation
import TestSupport

// GNOME as users run it, headless, on a session world's private bus: gnome-shell (Mutter,
// the shell's media widget) and gsd-media-keys (the media keys' daemon), with real key
// presses through Mutter's RemoteDesktop API (FIELD-NOTES.md, "The desktops' own media keys
// and widgets").

/// gnome-shell and gsd-media-keys on `world`'s bus.
final class GNOMEDesktop: Sendable {
    let world: SessionWorld
    /// GNOME Shell 43 talks to logind when `/run/systemd/seats` exists: a private bus stands
    /// in for the system bus, where nothing answers.
    let systemBus: PrivateBus
    let shell: Child
    let keyDaemon: Child
    let home: String
    private let keyboard: Locked<ObjectPath?> = Locked(nil)

    /// The extension that lets the tests call `org.gnome.Shell.Eval`: GNOME 43 answers it only
    /// in unsafe mode and has no switch for it (no `--unsafe-mode` before 44).
    static let extensionID = "earshot-unsafe@earshot.test"

    init(world: SessionWorld) async throws {
        self.world = world
        systemBus = try PrivateBus()
        home = try GNOMEDesktop.makeHome()
        var environment = world.environment
        environment["HOME"] = home
        environment["XDG_CONFIG_HOME"] = home + "/.config"
        environment["XDG_DATA_HOME"] = home + "/.local/share"
        environment["XDG_CACHE_HOME"] = home + "/.cache"
        // The shell makes its Wayland socket there; the sound server's directory stays its own.
        environment["XDG_RUNTIME_DIR"] = home + "/runtime"
        environment["GSETTINGS_BACKEND"] = "keyfile"
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = systemBus.address
        // gsd-media-keys then logs which player it calls (keyCalls).
        environment["G_MESSAGES_DEBUG"] = "all"
        for name in ["DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "XDG_CURRENT_DESKTOP"] { environment[name] = nil }
        shell = try Child("gnome-shell", ["--headless", "--wayland", "--no-x11", "--virtual-monitor", "1280x800"], environment: environment)
        do {
            try await sessionPoll("gnome-shell to answer Eval", timeout: 90, interval: 0.25) {
                (try? await GNOMEDesktop.eval("1+1", on: world.client)) == "2"
            }
        } catch {
            shell.kill(SIGKILL)
            throw TestFailure("\(error); gnome-shell \(shell.isRunning ? "runs" : "exited"), stderr tail:\n"
                              + shell.stderr.split(separator: "\n").suffix(15).joined(separator: "\n"))
        }
        // gsd-media-keys is a GTK program: without a display it exits ("Cannot open
        // display"), so it starts once the shell's Wayland socket is there.
        environment["WAYLAND_DISPLAY"] = "wayland-0"
        keyDaemon = try Child("/usr/libexec/gsd-media-keys", [], environment: environment)
        do {
            try await sessionPoll("gsd-media-keys to own its name", timeout: 30, interval: 0.1) {
                (try? await world.client.nameOwner("org.gnome.SettingsDaemon.MediaKeys")) != nil
            }
            // It grabs the keys from the shell (GrabAccelerators) after it owns its name.
            try await sessionPoll("gsd-media-keys to grab the media keys", timeout: 30, interval: 0.1) {
                (try? await GNOMEDesktop.eval("imports.ui.main.shellDBusService._grabbedAccelerators.size > 0", on: world.client)) == "true"
            }
            // The keyboard before the first press, so that a press costs only itself.
            try await prepareKeyboard()
        } catch {
            stop()
            throw TestFailure("\(error)\n\(report)")
        }
    }

    /// A home with the extension installed and enabled (keyfile settings).
    private static func makeHome() throws -> String {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-gnome-\(UUID().uuidString)").path
        let fm = FileManager.default
        let ext = home + "/.local/share/gnome-shell/extensions/" + extensionID
        try fm.createDirectory(atPath: ext, withIntermediateDirectories: true)
        try fm.createDirectory(atPath: home + "/.config/glib-2.0/settings", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: home + "/runtime", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try """
            {"uuid": "\(extensionID)", "name": "Earshot tests: unsafe mode",
             "description": "Lets the tests call org.gnome.Shell.Eval.", "shell-version": ["43", "44", "45", "46", "47", "48"]}
            """.write(toFile: ext + "/metadata.json", atomically: true, encoding: .utf8)
        // GNOME 43's extension format (a function init returning enable/disable).
        try """
            function init() {
                return {
                    enable() { global.context.unsafe_mode = true; },
                    disable() { global.context.unsafe_mode = false; },
                };
            }
            """.write(toFile: ext + "/extension.js", atomically: true, encoding: .utf8)
        try """
            [org/gnome/shell]
            enabled-extensions=['\(extensionID)']
            disable-extension-version-validation=true
            welcome-dialog-last-shown-version='999'
            """.write(toFile: home + "/.config/glib-2.0/settings/keyfile", atomically: true, encoding: .utf8)
        return home
    }

    var report: String {
        "gnome-shell: \(shell.isRunning ? "running" : "exited \(shell.exitStatus.map(String.init) ?? "?")"), stderr tail:\n"
            + shell.stderr.split(separator: "\n").suffix(15).joined(separator: "\n")
            + "\ngsd-media-keys stderr tail:\n" + keyDaemon.stderr.split(separator: "\n").suffix(15).joined(separator: "\n")
    }

    /// The lines of gsd-media-keys' debug log saying which player it called.
    var keyCalls: [String] {
        (keyDaemon.stderr + keyDaemon.stdout).split(separator: "\n").filter { $0.contains("over dbus to mpris client") }.map(String.init)
    }

    /// `org.gnome.Shell.Eval`: the result (JSON-ish text), or a failure.
    func eval(_ script: String) async throws -> String {
        try await GNOMEDesktop.eval(script, on: world.client)
    }

    static func eval(_ script: String, on client: DBusConnection) async throws -> String {
        let reply = try await client.call(destination: "org.gnome.Shell", path: "/org/gnome/Shell", interface: "org.gnome.Shell",
                                                method: "Eval", [.string(script)], timeout: .seconds(5))
        guard reply.count == 2, reply[0].bool == true, let result = reply[1].string else {
            throw TestFailure("Eval failed: \(reply)")
        }
        return result
    }

    /// The shell's media widget: each player it shows (`CanPlay`), as bus name and status,
    /// in its order.
    func widget() async throws -> [(name: String, status: String)] {
        // Eval answers with its value as JSON.
        let text = try await eval("""
            [...imports.ui.main.panel.statusArea.dateMenu._messageList._mediaSection._players.entries()]
                .filter(([n, p]) => p._visible).map(([n, p]) => [n, p.status])
            """)
        guard let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String]] else {
            throw TestFailure("the widget's players are not a list of pairs: \(text)")
        }
        return json.map { ($0[0], $0[1]) }
    }

    /// Presses and releases a key through Mutter's RemoteDesktop (one session, kept).
    func press(_ keysym: UInt32 = GNOMEDesktop.play) async throws {
        let path = try await prepareKeyboard()
        for pressed in [true, false] {
            _ = try await world.client.call(destination: "org.gnome.Mutter.RemoteDesktop", path: path,
                                            interface: "org.gnome.Mutter.RemoteDesktop.Session", method: "NotifyKeyboardKeysym",
                                            [.uint32(keysym), .boolean(pressed)])
        }
    }

    /// The RemoteDesktop session of the presses (made once; it lives as long as the world's
    /// client connection, which Mutter watches).
    @discardableResult
    private func prepareKeyboard() async throws -> ObjectPath {
        let path: ObjectPath
        if let session = keyboard.value {
            path = session
        } else {
            guard let created = try await world.client.call(
                destination: "org.gnome.Mutter.RemoteDesktop", path: "/org/gnome/Mutter/RemoteDesktop",
                interface: "org.gnome.Mutter.RemoteDesktop", method: "CreateSession").first?.objectPath else {
                throw TestFailure("RemoteDesktop.CreateSession gave no session")
            }
            _ = try await world.client.call(destination: "org.gnome.Mutter.RemoteDesktop", path: created,
                                            interface: "org.gnome.Mutter.RemoteDesktop.Session", method: "Start")
            keyboard.withLock { $0 = created }
            path = created
        }
        return path
    }

    static let play: UInt32 = 0x1008ff14

    func stop() {
        keyDaemon.kill(SIGKILL)
        shell.kill(SIGKILL)
        try? FileManager.default.removeItem(atPath: home)
    }

    deinit { stop() }
}
