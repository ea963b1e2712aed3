import DBus

/// Following the screen saver: `ActiveChanged` signals, and `GetActive` at start-up.
extension Arbiter {
    /// The screen savers followed: the freedesktop one (KDE, Xfce, …) and GNOME's.
    static let screenSavers: [(name: String, path: ObjectPath)] = [
        ("org.freedesktop.ScreenSaver", "/org/freedesktop/ScreenSaver"),
        ("org.gnome.ScreenSaver", "/org/gnome/ScreenSaver"),
    ]

    /// How long a screen saver may take to say whether the screen is locked.
    static let screenSaverTimeout: Duration = .seconds(2)

    /// Subscribes to both savers' `ActiveChanged` (from any sender: the saver's unique
    /// name is not known in advance, and a wrong lock state only silences ambient sound).
    func watchScreenSavers() -> [SignalSubscription] {
        Arbiter.screenSavers.map { saver in
            connection.subscribeNow(MatchRule(interface: saver.name, member: "ActiveChanged")) { [weak self] message in
                guard let self, let locked = (try? message.arguments())?.first?.bool else { return }
                self.handle(.screenLockChanged(locked: locked))
                self.restorePendingSilenced()
            }
        }
    }

    /// Asks each saver that runs (without starting one by activation) whether the screen
    /// is locked now. The answers are dropped if an `ActiveChanged` came first, since the
    /// signal is newer. Sessions that registered again saying they were silenced by the
    /// lock wait for the answers (at most ``screenSaverTimeout``).
    func askScreenSaversWhetherLocked() {
        let connection = self.connection
        Task {
            async let first = Arbiter.isActive(Arbiter.screenSavers[0], on: connection)
            async let second = Arbiter.isActive(Arbiter.screenSavers[1], on: connection)
            let answers = await [first, second]
            let locked = answers.contains(true)
            // On the bus thread, where the signals are handled, so that no signal can
            // slip in between the check and the change.
            connection.schedule(after: .zero) { [weak self] in
                guard let self else { return }
                if locked, !self.state.withLock({ $0.lockStateKnown }) {
                    self.handle(.screenLockChanged(locked: true))
                }
                self.restorePendingSilenced()
            }
        }
    }

    /// `GetActive` of one saver; false when it does not run or does not answer.
    private static func isActive(_ saver: (name: String, path: ObjectPath), on connection: DBusConnection) async -> Bool {
        guard let message = try? DBusMessage.methodCall(
            destination: saver.name, path: saver.path, interface: saver.name, method: "GetActive")
        else { return false }
        message.autoStart = false
        guard let reply = try? await connection.call(message, timeout: screenSaverTimeout) else { return false }
        return (try? reply.arguments())?.first?.bool == true
    }
}
