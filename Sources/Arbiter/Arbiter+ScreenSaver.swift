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

    /// Subscribes to both savers' `ActiveChanged`, obeyed only when it comes from the
    /// unique name that owns the saver's name (followed through `NameOwnerChanged`, and
    /// asked with `GetNameOwner` at start): any client may send a signal with the saver's
    /// interface, and a match rule's well-known `sender` is not checked locally.
    func watchScreenSavers() -> [SignalSubscription] {
        Arbiter.screenSavers.map { saver in
            connection.subscribeNow(MatchRule(interface: saver.name, member: "ActiveChanged")) { [weak self] message in
                guard let self, let locked = (try? message.arguments())?.first?.bool else { return }
                guard let sender = message.sender, self.state.withLock({ $0.screenSaverOwners[saver.name] }) == sender else { return }
                self.handle(.screenLockChanged(locked: locked))
                self.restorePendingSilenced()
            }
        }
    }

    /// A screen saver's name changed owners.
    func screenSaverOwnerChanged(_ change: NameOwnerChange) {
        state.withLock { s in
            s.screenSaverOwners[change.name] = change.newOwner
            s.screenSaverOwnersFollowed.insert(change.name)
        }
    }

    /// Records `owner` for `saver` unless a `NameOwnerChanged` (newer) already told.
    private func screenSaver(_ saver: String, ownedBy owner: String?) {
        state.withLock { s in
            guard !s.screenSaverOwnersFollowed.contains(saver) else { return }
            s.screenSaverOwners[saver] = owner
        }
    }

    /// Asks each saver that runs (without starting one by activation) whether the screen
    /// is locked now. The answers are dropped if an `ActiveChanged` came first, since the
    /// signal is newer. Sessions that registered again saying they were silenced by the
    /// lock wait for the answers (at most ``screenSaverTimeout``).
    func askScreenSaversWhetherLocked() {
        let connection = self.connection
        Task { [weak self] in
            // The owners first: an ActiveChanged that comes before them is dropped, and the
            // answers to GetActive, asked after, say what it said.
            for saver in Arbiter.screenSavers {
                let owner = try? await connection.nameOwner(saver.name)
                _ = connection.schedule(after: .zero) { [weak self] in self?.screenSaver(saver.name, ownedBy: owner ?? nil) }
            }
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
