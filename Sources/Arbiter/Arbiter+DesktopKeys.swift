import DBus
import MPRIS
import SessionPolicy

/// The desktop's media keys (GNOME): while gsd-media-keys runs (the owner of
/// `org.gnome.SettingsDaemon.MediaKeys`), the arbiter takes its keys and sends each to the
/// global target (the last sounder of all apps, Earshot or foreign).
///
/// gsd 43 has no way to ask for the keys (no `GrabMediaPlayerKeys` any more); it sends them
/// to one MPRIS player of its choosing (`mpris-controller.c`): a player that appears takes
/// them unless gsd's current one is `Playing`; a player that sends `PropertiesChanged` while
/// it is `Playing` takes them when the current one is not; gsd keeps its current one as long
/// as that one is `Playing`. So the arbiter publishes a player of its own,
/// ``keyCatcherName``, that is always `Playing` and never shown (`CanPlay` false: GNOME
/// Shell's widget lists only players that can play): once gsd chose it, gsd keeps it. It
/// announces its status again (legal: an unchanged value) whenever no other player is
/// `Playing`, which is when gsd would switch to it. Until then, a `Playing` player keeps gsd's
/// choice and gets the keys: right when it is the target, wrong otherwise, and
/// ``DesktopKeys`` says so in `earshot status`.
extension Arbiter {
    /// The desktop key daemon whose keys the arbiter takes.
    static let gnomeKeyDaemon = "org.gnome.SettingsDaemon.MediaKeys"
    /// The arbiter's own player for gsd-media-keys.
    public static let keyCatcherName = "org.mpris.MediaPlayer2.EarshotMediaKeys"

    /// How gsd-media-keys' keys reach the target.
    public enum DesktopKeys: Sendable, Equatable {
        /// No key daemon the arbiter knows runs.
        case none
        /// The arbiter's player just appeared: gsd meets it asynchronously, and may still
        /// send a key elsewhere.
        case taking
        /// gsd-media-keys sends its keys to the arbiter, which sends them to the target.
        case held
        /// gsd-media-keys keeps `player` and sends it the keys while it is `Playing`; the
        /// arbiter cannot move them before it stops.
        case keptBy(player: String)

        /// For `earshot status` (the `DesktopKeys` property).
        var summary: String {
            switch self {
            case .none: ""
            case .taking: "gnome: taking the keys from gsd-media-keys"
            case .held: "gnome: the keys go to the target"
            case .keptBy(let player): "gnome: the keys go to \(player) until it stops playing (gsd-media-keys keeps a playing player)"
            }
        }
    }

    /// The key daemon's name changed owners (bus thread).
    func keyDaemonOwnerChanged(to owner: String?) {
        let start = state.withLock { s -> Bool? in
            let had = s.keyDaemonOwner != nil
            s.keyDaemonOwner = owner
            if owner != nil, !had { return true }
            if owner == nil, had { return false }
            return nil
        }
        switch start {
        case true?: publishKeyCatcher()
        case false?: withdrawKeyCatcher()
        case nil: break
        }
    }

    /// Asks the bus whether gsd-media-keys runs (at start); a `NameOwnerChanged` that came
    /// meanwhile is newer.
    func askForKeyDaemon() {
        let connection = self.connection
        Task { [weak self] in
            guard let owner = try? await connection.nameOwner(Arbiter.gnomeKeyDaemon) else { return }
            _ = connection.schedule(after: .zero) { [weak self] in
                guard let self, self.state.withLock({ $0.keyDaemonOwner == nil && !$0.keyDaemonFollowed }) else { return }
                self.keyDaemonOwnerChanged(to: owner)
            }
        }
    }

    private func publishKeyCatcher() {
        guard state.withLock({ $0.keyCatcher == nil && !$0.volumesStopped }) else { return }
        guard let object = try? connection.export([keyCatcherRootInterface(), keyCatcherPlayerInterface()], at: MPRISPlayer.objectPath) else { return }
        state.withLock {
            $0.keyCatcher = object
            $0.keyCatcherSettled = false
        }
        let connection = self.connection
        Task { [weak self] in
            // Replacing: a previous arbiter still on the bus (handing over) lets it go.
            let reply = try? await connection.requestName(Arbiter.keyCatcherName, flags: [.allowReplacement, .replaceExisting, .doNotQueue])
            _ = connection.schedule(after: .zero) { [weak self] in
                guard let self else { return }
                guard reply == .primaryOwner || reply == .alreadyOwner else { return }
                // gsd makes its proxy of the new player asynchronously: until it has, an
                // announcement is not heard; the appearance itself may already have won.
                self.steerDesktopKeys(appeared: true)
                // The keys count as held only after the last of these: an announcement
                // before gsd's proxy exists is not heard.
                for delay in [Duration.milliseconds(100), .milliseconds(300), .seconds(1)] {
                    _ = self.clock.schedule(after: delay, on: connection) { [weak self] in
                        if delay == .seconds(1) { self?.state.withLock { $0.keyCatcherSettled = true } }
                        self?.steerDesktopKeys(retry: true)
                    }
                }
            }
        }
    }

    func withdrawKeyCatcher() {
        let object = state.withLock { s in
            defer {
                s.keyCatcher = nil
                s.desktopKeys = .none
                s.keyChoice.vanished(Arbiter.keyCatcherName)
            }
            return s.keyCatcher
        }
        guard let object else { return }
        try? connection.releaseNameWithoutReply(Arbiter.keyCatcherName)
        object.unexport()
        announceDesktopKeys()
    }

    /// Re-announces the catcher's `Playing` when gsd would switch to it (its current player
    /// is not `Playing`, as far as gsd knows: by the players' signals), and records who gets
    /// the keys (``GnomeKeyChoice``). Called whenever a player signals, appears or goes;
    /// `retry` announces even when the keys seem held (gsd makes its proxy of a new player
    /// asynchronously, and may not have met the catcher yet when it appeared). An
    /// announcement gsd does not act on changes nothing.
    func steerDesktopKeys(appeared: Bool = false, retry: Bool = false) {
        let catcher = Arbiter.keyCatcherName
        let (object, before, now) = state.withLock { s -> (DBusExportedObject?, DesktopKeys, DesktopKeys) in
            guard let object = s.keyCatcher else { return (nil, s.desktopKeys, s.desktopKeys) }
            if appeared { s.keyChoice.appeared(catcher, currentPlaying: s.keyChoiceCurrentPlaying) }
            let announce = retry || (s.keyChoice.current != catcher && !s.keyChoiceCurrentPlaying)
            if announce {
                try? object.emitPropertiesChanged(interface: MPRISPlayer.playerInterface, changed: ["PlaybackStatus": .string("Playing")])
                s.keyChoice.signalled(catcher, playing: true, currentPlaying: s.keyChoiceCurrentPlaying)
            }
            let before = s.desktopKeys
            s.desktopKeys = s.keyChoice.current == catcher ? (s.keyCatcherSettled ? .held : .taking)
                : .keptBy(player: s.keyChoice.current ?? "no player")
            return (object, before, s.desktopKeys)
        }
        if object != nil, now != before { announceDesktopKeys() }
    }

    private func announceDesktopKeys() {
        guard let object = state.withLock({ $0.object }) else { return }
        try? object.emitPropertiesChanged(interface: ArbiterName.interface,
                                          changed: ArbiterStatus.changes(desktopKeys: state.withLock { $0.desktopKeys.summary }))
    }

    /// Sends a key to the target without waiting for it (on the bus before gsd's answer,
    /// which the connection sends after it); gsd has its answer at once. With no
    /// target yet (nothing sounded since the arbiter started), to a playing player, else to
    /// any: where gsd itself would have sent it.
    private func forwardKey(_ command: MPRISTransportCommand) {
        let me = connection.uniqueName
        let fallback = state.withLock { s in
            let others = s.players.filter { $0.key != me }
            return (others.filter { $0.value.status == .playing }.keys.min() ?? others.keys.min())
        }
        guard let target = policy.target?.busName ?? fallback, !target.isEmpty else { return }
        otherPlayers.send(command, to: target) { _ in }
    }

    private func keyCatcherRootInterface() -> DBusInterface {
        func constant(_ name: String, _ type: DBusType, _ value: DBusValue) -> DBusProperty {
            DBusProperty(name, type, changeSignal: .const) { value }
        }
        return DBusInterface(
            "org.mpris.MediaPlayer2",
            methods: [DBusMethod("Raise") { _ in [] }, DBusMethod("Quit") { _ in [] }],
            properties: [
                constant("CanQuit", .boolean, .boolean(false)), constant("CanRaise", .boolean, .boolean(false)),
                constant("HasTrackList", .boolean, .boolean(false)), constant("Identity", .string, .string("Earshot media keys")),
                constant("SupportedUriSchemes", .array(.string), .strings([])),
                constant("SupportedMimeTypes", .array(.string), .strings([])),
            ])
    }

    private func keyCatcherPlayerInterface() -> DBusInterface {
        func key(_ name: String, _ inputs: [DBusArgument] = []) -> DBusMethod {
            DBusMethod(name, inputs: inputs) { [weak self] call in
                // The bus layer checked the inputs against the declaration: a command.
                if let command = MPRISTransportCommand(method: name, arguments: call.arguments) { self?.forwardKey(command) }
                return []
            }
        }
        func constant(_ name: String, _ type: DBusType, _ value: DBusValue) -> DBusProperty {
            DBusProperty(name, type) { value }
        }
        return DBusInterface(
            MPRISPlayer.playerInterface,
            methods: [
                key("PlayPause"), key("Play"), key("Pause"), key("Stop"), key("Next"), key("Previous"),
                key("Seek", [.init("Offset", .int64)]),
                DBusMethod("SetPosition", inputs: [.init("TrackId", .objectPath), .init("Position", .int64)]) { _ in [] },
                DBusMethod("OpenUri", inputs: [.init("Uri", .string)]) { _ in [] },
            ],
            properties: [
                // Always Playing: gsd keeps a Playing player's keys (see above).
                constant("PlaybackStatus", .string, .string("Playing")),
                constant("LoopStatus", .string, .string("None")),
                constant("Rate", .double, .double(1)), constant("Shuffle", .boolean, .boolean(false)),
                constant("Metadata", .dictionary(key: .string, value: .variant), .vardict([:])),
                constant("Volume", .double, .double(1)),
                DBusProperty("Position", .int64, changeSignal: .false) { .int64(0) },
                constant("MinimumRate", .double, .double(1)), constant("MaximumRate", .double, .double(1)),
                // Not shown by GNOME Shell's widget, which lists players that can play.
                constant("CanGoNext", .boolean, .boolean(false)), constant("CanGoPrevious", .boolean, .boolean(false)),
                constant("CanPlay", .boolean, .boolean(false)), constant("CanPause", .boolean, .boolean(false)),
                constant("CanSeek", .boolean, .boolean(false)), constant("CanControl", .boolean, .boolean(true)),
            ],
            signals: [DBusSignalDeclaration("Seeked", arguments: [.init("Position", .int64)])])
    }
}

extension Arbiter.State {
    /// Whether gsd's current player is `Playing`, by its signals (the catcher always is).
    var keyChoiceCurrentPlaying: Bool {
        guard let current = keyChoice.current else { return false }
        if current == Arbiter.keyCatcherName { return keyCatcher != nil }
        return players.values.contains { $0.names.contains(current) && $0.signalledStatus == .playing }
    }
}
