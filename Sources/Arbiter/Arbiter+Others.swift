import DBus
import MPRIS
import OtherApps
import Platform
import SessionPolicy

/// What one MPRIS player of the bus said, before the arbiter knows whether it is foreign.
struct ObservedPlayer: Sendable {
    /// Its `org.mpris.MediaPlayer2.*` names.
    var names: Set<String>
    /// Counts its `PropertiesChanged`, so that an older answer to `Get` is not taken over
    /// a newer signal.
    var signals: UInt64 = 0
    /// When a status change of it last reached the policy, and whether a later one waits
    /// for the end of the throttle window (a player flipping its status a thousand times a
    /// second would otherwise interrupt and release sessions as often).
    var lastApplied: UInt64 = 0
    var throttled = false
    /// The statuses it took since the last ``Arbiter/reconcileOthers()``, each once, in
    /// order. A burst inside one throttle window that ends where it began (Playing, then
    /// Paused as the arbiter asked, then Playing because the user pressed play) would
    /// otherwise reach the policy as no change at all, and the user's play would be lost.
    var heldSinceReconcile: [ForeignPlaybackStatus] = []
    /// Its process, once the bus said (-1: the bus could not say).
    var pid: Int64?
    /// Its `PlaybackStatus`, once it said (by `GetAll` or `PropertiesChanged`).
    var status: ForeignPlaybackStatus?
    /// The policy's ``SessionPolicy/activations`` when ``status`` was observed: the status
    /// reaches the policy later (after the player's process is known, or at the end of a
    /// throttle window), and a session that activated meanwhile found the player so.
    var statusSeenAt: UInt64 = 0
    var canPause = true
    /// Its `PlaybackStatus` as the desktop's key daemon knows it: from its `GetAll` answer,
    /// then its `PropertiesChanged` only (not the arbiter's own reads: a player may answer
    /// `Get` with a new status before it signals it, and gsd-media-keys reads signals).
    var signalledStatus: ForeignPlaybackStatus?

    /// It said `status` (a `GetAll` answer, a signal, or a read after a command), observed
    /// when the policy had counted `seenAt` activations.
    mutating func observe(_ status: ForeignPlaybackStatus, seenAt: UInt64) {
        self.status = status
        statusSeenAt = seenAt
        if !heldSinceReconcile.contains(status) { heldSinceReconcile.append(status) }
    }
}

/// The other apps: every MPRIS player on the bus (`NameOwnerChanged`, `PropertiesChanged`)
/// and every playback stream of the sound server (``PlaybackStreamWatcher``). What they
/// say is kept as observed; ``reconcileOthers()`` tells the policy about the ones whose
/// process has no Earshot session (foreign), and the policy's decisions go back to the
/// players as asynchronous MPRIS calls with a timeout. Nothing here waits on another
/// process on the bus thread: a player that never answers only delays its own entry.
extension Arbiter {
    /// The client of the other apps' players, whose calls wait ``foreignCallTimeout``.
    var otherPlayers: MPRISPlayerManager { MPRISPlayerManager(connection: connection, timeout: Arbiter.foreignCallTimeout) }

    /// Subscribes to the players' `PropertiesChanged`, lists the players already on the bus,
    /// and starts following the sound server (unless configured not to).
    func startFollowingOthers() -> [SignalSubscription] {
        let subscription = otherPlayers.followProperties { [weak self] sender, changed in
            self?.playerPropertiesChanged(sender, changed)
        }
        listEarshotPeers()
        listPlayers()
        if let server = configuration.soundServer.address {
            let connection = self.connection
            let watcher = PlaybackStreamWatcher(server: server.isEmpty ? nil : server) { [weak self] streams in
                _ = connection.schedule(after: .zero) { [weak self] in self?.streamsChanged(streams) }
            }
            if let watcher {
                let clock = self.clock
                let ducker = ForeignStreamDucker(
                    watcher: watcher, now: { [weak self] in self?.tick ?? 0 },
                    runSoon: { work in _ = connection.schedule(after: .zero, work) },
                    runAfter: { delay, work in _ = clock.schedule(after: delay, on: connection, work) },
                    save: { [weak self] streams in self?.saveForeignVolumes(streams) })
                state.withLock { s in
                    s.streamWatcher = watcher
                    s.ducker = ducker
                }
            }
        }
        return [subscription]
    }

    /// Every Earshot process that opens its audio session queues for the arbiter's name. When
    /// an arbiter starts (a host change, or the daemon taking over), the queued connections
    /// are about to register again: until they have, their players and streams must not
    /// look like other apps' (their own session would pause them). So other apps count only
    /// once the queue is known, and the queued connections and their processes never do.
    private func listEarshotPeers() {
        let connection = self.connection
        Task { [weak self] in
            let queued = (try? await connection.nameQueue(ArbiterName.bus, timeout: Arbiter.foreignCallTimeout)) ?? []
            var peers: [String: Int64] = [:]
            for name in queued {
                peers[name] = (try? await connection.processID(of: name, timeout: Arbiter.foreignCallTimeout)) ?? -1
            }
            _ = connection.schedule(after: .zero) { [weak self, peers] in
                guard let self else { return }
                self.state.withLock { s in
                    // A peer that left while the bus answered is gone for good.
                    s.earshotPeers.merge(peers) { registered, _ in registered }
                    for gone in s.departed { s.earshotPeers[gone] = nil }
                    s.departed = []
                    s.othersReady = true
                    s.othersReadyTick = self.tick
                }
                self.reconcileOthers()
                self.reconcileForeignVolumes()
                // Streams a previous arbiter ducked wait for the sessions to register again.
                // (Players it paused that this one never sees are forgotten after twice that.)
                for delay in [Arbiter.restoreWindow, Arbiter.restoreWindow * 2] {
                    _ = self.clock.schedule(after: delay + .milliseconds(20), on: connection) { [weak self] in self?.reconcileForeignVolumes() }
                }
            }
        }
    }

    /// The players on the bus when the arbiter starts.
    private func listPlayers() {
        let (connection, players) = (self.connection, otherPlayers)
        Task { [weak self] in
            guard let names = try? await players.playerNames() else { return }
            for name in names {
                guard let owner = try? await connection.nameOwner(name) else { continue }
                _ = connection.schedule(after: .zero) { [weak self] in
                    self?.mprisNameChanged(name, from: nil, to: owner)
                }
            }
        }
    }

    /// How long the arbiter waits for another app's player (or the bus about it).
    static let foreignCallTimeout: Duration = .seconds(2)

    /// `NameOwnerChanged` of an `org.mpris.MediaPlayer2.*` name (bus thread).
    func mprisNameChanged(_ name: String, from oldOwner: String?, to newOwner: String?) {
        // The arbiter's own player for the desktop's keys (this one's or a previous one's)
        // is no app's.
        guard MPRISPlayerManager.isPlayerName(name), name != Arbiter.keyCatcherName else { return }
        let introspect = state.withLock { s -> String? in
            if oldOwner == nil, newOwner != nil {
                s.keyChoice.appeared(name, currentPlaying: s.keyChoiceCurrentPlaying)
            } else if newOwner == nil {
                s.keyChoice.vanished(name)
            }
            if let old = oldOwner, var player = s.players[old] {
                player.names.remove(name)
                s.players[old] = player.names.isEmpty ? nil : player
            }
            guard let new = newOwner else { return nil }
            if s.players[new] != nil {
                s.players[new]?.names.insert(name)
                return nil
            }
            s.players[new] = ObservedPlayer(names: [name])
            return new
        }
        if let introspect { introspectPlayer(introspect) }
        reconcileOthers()
        steerDesktopKeys()
    }

    /// Asks the bus for the player's process and the player for its state, without waiting.
    private func introspectPlayer(_ owner: String) {
        let (connection, players) = (self.connection, otherPlayers)
        Task { [weak self] in
            let pid = try? await connection.processID(of: owner, timeout: Arbiter.foreignCallTimeout)
            // The answer is the player's status as of this moment or later; a change after
            // it would come as PropertiesChanged before the answer.
            guard let seenAt = self?.state.withLock({ $0.policy.activations }) else { return }
            let all = try? await players.properties(of: owner)
            _ = connection.schedule(after: .zero) { [weak self] in
                guard let self else { return }
                let known = self.state.withLock { s -> Bool in
                    guard var player = s.players[owner] else { return false }
                    player.pid = pid ?? -1
                    // A PropertiesChanged that came meanwhile is newer than this answer.
                    let status = ForeignPlaybackStatus(all?.playbackStatus)
                    if player.status == nil, let status { player.observe(status, seenAt: seenAt) }
                    if let canPause = all?.canPause { player.canPause = canPause }
                    if player.signalledStatus == nil { player.signalledStatus = status }
                    s.players[owner] = player
                    return true
                }
                if known {
                    self.reconcileOthers()
                    self.steerDesktopKeys()
                }
            }
        }
    }

    /// A player's `PropertiesChanged` (bus thread). Only a player the arbiter follows counts,
    /// and only a change of `PlaybackStatus` or `CanPause` reaches the policy: a flood of
    /// metadata costs a dictionary lookup each.
    private func playerPropertiesChanged(_ sender: String, _ changed: MPRISPlayerProperties) {
        let status = ForeignPlaybackStatus(changed.playbackStatus)
        let canPause = changed.canPause
        let differs = state.withLock { s -> Bool in
            guard var player = s.players[sender] else { return false }
            let before = (player.status, player.canPause)
            if let status, status != player.status { player.observe(status, seenAt: s.policy.activations) }
            if let canPause { player.canPause = canPause }
            if let status { player.signalledStatus = status }
            player.signals &+= 1
            s.players[sender] = player
            for name in player.names.sorted() {
                s.keyChoice.signalled(name, playing: player.signalledStatus == .playing, currentPlaying: s.keyChoiceCurrentPlaying)
            }
            return before != (player.status, player.canPause)
        }
        if differs { throttledReconcile(for: sender) }
        // Every status signal, changed or not in the arbiter's view: the key daemon may
        // learn only now what the arbiter read earlier.
        steerDesktopKeys()
    }

    /// At most one status change of a player reaches the policy per ``statusThrottle``: the
    /// first at once, the last of a burst at the end of the window.
    static let statusThrottle: Duration = .milliseconds(50)

    private func throttledReconcile(for player: String) {
        let now = clock.now()
        let window = Arbiter.statusThrottle.wholeNanoseconds
        let wait = state.withLock { s -> UInt64?? in
            guard var observed = s.players[player] else { return nil }
            if now >= observed.lastApplied + window {
                observed.lastApplied = now
                s.players[player] = observed
                return .some(nil)  // at once
            }
            if observed.throttled { return nil }  // the pending reconcile will see it
            observed.throttled = true
            s.players[player] = observed
            return .some(observed.lastApplied + window - now)
        }
        guard let wait else { return }
        guard let delay = wait else {
            reconcileOthers()
            return
        }
        _ = clock.schedule(after: .nanoseconds(Int64(delay)), on: connection) { [weak self] in
            guard let self else { return }
            self.state.withLock { s in
                s.players[player]?.throttled = false
                s.players[player]?.lastApplied = self.clock.now()
            }
            self.reconcileOthers()
        }
    }

    /// The sound server's streams changed (bus thread).
    func streamsChanged(_ streams: [UInt32: PlaybackStream]) {
        state.withLock { s in
            s.streams = streams
            s.streamsKnown = true
        }
        reconcileOthers()
        reconcileForeignVolumes()
    }

    /// Brings the policy's view of other apps in line with what was observed: players and
    /// sound of processes without an Earshot session (nor owned by a session's connection).
    func reconcileOthers() {
        let (ready, policy, players, streams, processes, peers) = state.withLock { s in
            defer { for owner in s.players.keys { s.players[owner]?.heldSinceReconcile = [] } }
            return (s.othersReady, s.policy, s.players, s.streams, s.processes, s.earshotPeers)
        }
        guard ready else { return }
        let earshot = Set(policy.sessions.keys.compactMap { processes[$0] } + peers.values).filter { $0 > 0 }
        var events: [SessionPolicy.Event] = []
        var present = Set<String>()
        for (owner, player) in players.sorted(by: { $0.key < $1.key }) {
            guard let pid = player.pid, pid > 0, !earshot.contains(pid), policy[SessionID(owner)] == nil, peers[owner] == nil,
                  let status = player.status else { continue }
            present.insert(owner)
            let known = policy.foreignPlayers[owner]
            // Back where the policy last saw it, after another status in between: that one
            // first (at most one; the throttle bounds how often).
            if let known, known.status == status, let between = player.heldSinceReconcile.first(where: { $0 != status }) {
                events.append(.foreignPlayer(player: owner, pid: pid, status: between, canPause: player.canPause,
                                             seenAt: player.statusSeenAt))
                events.append(.foreignPlayer(player: owner, pid: pid, status: status, canPause: player.canPause,
                                             seenAt: player.statusSeenAt))
            } else if known?.pid != pid || known?.status != status || known?.canPause != player.canPause {
                events.append(.foreignPlayer(player: owner, pid: pid, status: status, canPause: player.canPause,
                                             seenAt: player.statusSeenAt))
            }
        }
        for owner in policy.foreignPlayers.keys.sorted() where !present.contains(owner) {
            events.append(.foreignPlayerVanished(player: owner))
        }
        let sounding = Set(streams.values.filter(\.isSounding).map(\.pid)).subtracting(earshot)
        let tick = self.tick
        for pid in sounding.sorted() where policy.foreignSounds[pid]?.isSounding != true {
            events.append(.foreignSound(pid: pid, sounding: true, tick: tick))
        }
        let withStreams = Set(streams.values.map(\.pid))
        let withPlayers = Set(players.values.compactMap(\.pid))
        for (pid, sound) in policy.foreignSounds.sorted(by: { $0.key < $1.key }) {
            if earshot.contains(pid) || (!withStreams.contains(pid) && !withPlayers.contains(pid)) {
                events.append(.foreignProcessVanished(pid: pid))
            } else if sound.isSounding, !sounding.contains(pid) {
                events.append(.foreignSound(pid: pid, sounding: false, tick: tick))
            }
        }
        for event in events { handle(event) }
    }

    /// Sends `Pause`, `Stop` or `Play` to another app's player, without waiting for it: the
    /// answer (or its absence, after the timeout) changes nothing; the player's
    /// `PropertiesChanged` says what it did.
    ///
    /// A player may fold a quick pause and play into one `PropertiesChanged`, or none; so
    /// once it answered, the arbiter reads its `PlaybackStatus` again (unless a signal from
    /// it came meanwhile, which is newer) so as not to miss the status it asked for.
    ///
    /// The command is on the connection before this returns (see
    /// `MPRISPlayerManager.send(_:to:completion:)`), so before the reply to the call that
    /// decided it: an `earshot play` that hosts the arbiter and exits once its deactivation
    /// is answered has sent the `Play` to the player it paused.
    func command(foreign player: String, _ command: MPRISTransportCommand) {
        let (connection, players) = (self.connection, otherPlayers)
        players.send(command, to: player) { [weak self] answer in
            guard case .success = answer else { return }
            Task { [weak self] in
                let (before, seenAt) = self?.state.withLock { ($0.players[player]?.signals, $0.policy.activations) } ?? (nil, 0)
                guard let before, let status = await Arbiter.playbackStatus(of: player, on: players) else { return }
                _ = connection.schedule(after: .zero) { [weak self] in
                    guard let self else { return }
                    let changed = self.state.withLock { s -> Bool in
                        guard var observed = s.players[player], observed.signals == before, observed.status != status else { return false }
                        observed.observe(status, seenAt: seenAt)
                        s.players[player] = observed
                        return true
                    }
                    if changed { self.reconcileOthers() }
                }
            }
        }
    }
}

extension Arbiter {
    /// Reads another app's player's `PlaybackStatus` again
    /// (``SessionPolicy/Decision/readForeignStatus(player:)``), without waiting for it: its
    /// process fell silent after the arbiter's pause and sounds again, and it never said
    /// it paused. Its answer comes after every signal it sent before, so a pause it did
    /// report has reached the policy by then. If the policy still waits for the pause and
    /// the player says `Playing`, it folded the pause and a play into one report (mpv-mpris
    /// sends its changes every 100 ms; a user's play within that window of the arbiter's
    /// pause was lost, and the session played on beside the player): the policy hears
    /// both, the pause first.
    ///
    /// One read per player at a time: a process whose stream flaps while its player does not
    /// answer costs one call per ``foreignCallTimeout``, not one per flap. A flap during a
    /// read is not read again; the read's answer, or the player's next signal, covers it.
    func readStatus(foreign player: String) {
        guard state.withLock({ $0.statusReads.insert(player).inserted }) else { return }
        let (connection, players) = (self.connection, otherPlayers)
        Task { [weak self] in
            let status = await Arbiter.playbackStatus(of: player, on: players)
            _ = connection.schedule(after: .zero) { [weak self] in
                guard let self else { return }
                let folded = self.state.withLock { s -> Bool in
                    s.statusReads.remove(player)
                    guard status == .playing else { return false }
                    guard let known = s.policy.foreignPlayers[player], known.status == .playing,
                          let expected = known.expected, expected != .playing,
                          var observed = s.players[player], observed.status == .playing else { return false }
                    observed.observe(expected, seenAt: s.policy.activations)
                    observed.observe(.playing, seenAt: s.policy.activations)
                    s.players[player] = observed
                    return true
                }
                if folded { self.reconcileOthers() }
            }
        }
    }

    /// A player's `PlaybackStatus`, read with `Get`; nil when it does not answer in
    /// ``foreignCallTimeout`` or answers something that is not a status.
    static func playbackStatus(of player: String, on players: MPRISPlayerManager) async -> ForeignPlaybackStatus? {
        ForeignPlaybackStatus(try? await players.playbackStatus(of: player))
    }
}

extension Arbiter.State {
    /// Whether every Earshot process that was queued for the arbiter's name when it
    /// started has registered a session again (the arbiter's own connection, `me`, aside).
    /// A process queues on a connection of its own and registers on another, so a queued
    /// connection counts as back when a session of its process is registered.
    func earshotPeersRegistered(besides me: String) -> Bool {
        let registered = Set(policy.sessions.keys.compactMap { processes[$0] }.filter { $0 > 0 })
        return earshotPeers.allSatisfy { name, pid in
            name == me || policy[SessionID(name)] != nil || registered.contains(pid)
        }
    }
}

extension ForeignPlaybackStatus {
    /// The policy's name for a status another app's player said.
    init?(_ status: MPRISPlaybackStatus?) {
        guard let status else { return nil }
        self.init(rawValue: status.rawValue)
    }
}
