import DBus
import Dispatch
import Synchronization

/// The app's one entry on MPRIS, `org.mpris.MediaPlayer2.<app>`, which stays with one
/// process while the target moves between the app's processes (docs/mpris-presence.md).
///
/// Two names per app, with two jobs:
/// - ``MPRISConfiguration/targetBusName`` (`org.earshot.MPRISTarget.<app>`, which desktops
///   never look at) is the last-sound-wins stack: every player process queues for it on
///   the connection its ``MPRISPlayer`` is exported on, and takes it with
///   `REPLACE_EXISTING` when it sounds (``MPRISPlayer/claimName()``). Its owner is the
///   app's target; when the owner exits or is killed, the bus gives it to the process that
///   sounded before.
/// - ``MPRISConfiguration/sharedBusName`` (`org.mpris.MediaPlayer2.<app>`) is the entry
///   desktops show. Every player process queues for it with one of these, on a connection
///   of its own, in plain FIFO order (no `ALLOW_REPLACEMENT`, no `REPLACE_EXISTING`):
///   the oldest living player process holds it, and sounding never moves it.
///
/// Invariants:
/// - The entry has an owner whenever a player process of the app lives (each queues for
///   it), and it changes owner only when its holder's process goes: never because another
///   process sounded. KDE Plasma 5.27 reads an owner change as the player going offline,
///   and when it was the only player its media keys die (FIELD-NOTES.md).
/// - The holder answers every call to `/org/mpris/MediaPlayer2` with the target's answer
///   (the call is forwarded whole to the target's unique name, in arrival order), and
///   re-emits the target's signals there; when the target changes it emits the properties
///   that differ between the old target and the new one, and `Seeked`. A desktop therefore
///   sees one player whose state changes: one widget entry per app, last sound wins.
/// - Signals of a process that is not the target are not relayed; a presence that does
///   not hold the entry relays nothing.
/// - Nothing here blocks the bus thread: the target's replies come back as callbacks.
public final class MPRISPresence: Sendable {
    /// The connection the entry is requested on (not the player's).
    public let connection: DBusConnection
    /// `org.mpris.MediaPlayer2.<app>`.
    public let entryName: String
    /// `org.earshot.MPRISTarget.<app>`.
    public let targetName: String

    struct State {
        /// The unique name owning ``targetName``.
        var target: String?
        /// Whether this connection owns ``entryName``.
        var holding = false
        /// The properties as clients were last told (by the target's answers and signals),
        /// per interface, while holding.
        var told: [String: [String: DBusValue]] = [:]
        /// Counts target changes, so that a late answer about an older target is dropped.
        var generation: UInt64 = 0
        var subscriptions: [SignalSubscription] = []
        var closed = false
    }
    let state = Mutex(State())

    static let interfaces = [MPRISPlayer.rootInterface, MPRISPlayer.playerInterface]
    /// How long a forwarded call waits for the target; a client's own timeout is 25 s.
    static let forwardTimeout: Duration = .seconds(20)

    /// Opens a connection to `bus`, starts following the target, and queues for the entry.
    public init(bus: DBusConnection.Bus, configuration: MPRISConfiguration) async throws(DBusError) {
        connection = try DBusConnection(bus)
        entryName = configuration.sharedBusName
        targetName = configuration.targetBusName
        do {
            try await start()
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    private func start() async throws(DBusError) {
        let entryName = self.entryName
        try connection.forward(at: MPRISPlayer.objectPath) { [weak self] message in self?.forwardCall(message) }
        let owners = try await connection.watchNameOwner(targetName) { [weak self] change in
            self?.targetChanged(to: change.newOwner)
        }
        let own = try await connection.watchOwnNames { [weak self] name, acquired in
            guard name == entryName else { return }
            self?.holdingChanged(acquired)
        }
        // Every player's signals at the MPRIS path (the bus cannot match a sender by a
        // well-known name whose owner changes); only the target's are relayed.
        let signals = try await connection.subscribe(MatchRule(path: MPRISPlayer.objectPath)) { [weak self] message in
            self?.relay(message)
        }
        state.withLock { $0.subscriptions = [owners, own, signals] }
        let target = try await connection.nameOwner(targetName)
        // NameOwnerChanged may already have said something newer.
        let generation = state.withLock { s -> UInt64 in
            if s.generation == 0 { s.target = target }
            return s.generation
        }
        if generation == 0, target != nil { refresh(emit: false) }
        _ = try await connection.requestName(entryName)
    }

    /// Stops relaying, leaves the entry's queue and closes the connection.
    public func close() {
        let subscriptions = state.withLock { s -> [SignalSubscription] in
            guard !s.closed else { return [] }
            s.closed = true
            defer { s.subscriptions = [] }
            return s.subscriptions
        }
        for subscription in subscriptions { subscription.cancel() }
        connection.stopForwarding(at: MPRISPlayer.objectPath)
        try? connection.releaseNameWithoutReply(entryName)
        connection.close()
    }

    /// Waits, at most `timeout`, until what `sender` (the player's connection) sent before
    /// now has reached this connection and been relayed, so that a player's last changes
    /// (`Stopped` as it exits) reach clients before the entry closes: the bus delivers
    /// `sender`'s answer to a ping after the signals it sent before it. Not on this
    /// connection's bus thread; returns at once when not holding the entry.
    public func drain(from sender: String, timeout: Duration = .milliseconds(500)) {
        guard isHolding, let ping = try? DBusMessage.methodCall(
            destination: sender, path: "/", interface: "org.freedesktop.DBus.Peer", method: "Ping") else { return }
        let done = DispatchSemaphore(value: 0)
        connection.send(ping, timeout: timeout) { _ in done.signal() }
        _ = done.wait(timeout: .now() + .nanoseconds(Int(clamping: timeout.wholeNanoseconds)))
    }

    /// Whether this process holds the app's entry now.
    public var isHolding: Bool { state.withLock { $0.holding } }

    // MARK: Calls

    /// Forwards one call, whole, to the target; its answer (or error) goes back to the
    /// caller as this object's. Bus thread.
    private func forwardCall(_ call: DBusMessage) {
        guard let target = state.withLock({ $0.closed ? nil : $0.target }) else {
            if !call.noReplyExpected, let reply = call.makeErrorReply(DBusError(DBusError.Name.serviceUnknown, "no Earshot player of this app is running")) {
                try? connection.send(reply)
            }
            return
        }
        guard let forwarded = try? call.redirected(to: target) else { return }
        if call.noReplyExpected {
            try? connection.send(forwarded)
            return
        }
        let connection = self.connection
        connection.send(forwarded, timeout: MPRISPresence.forwardTimeout) { result in
            let reply: DBusMessage?
            switch result {
            case .success(let answer): reply = try? answer.relayedReply(to: call)
            case .failure(let error): reply = call.makeErrorReply(error)
            }
            if let reply { try? connection.send(reply) }
        }
    }

    // MARK: Signals

    /// Re-emits a signal of the target's player as the entry's. Bus thread.
    private func relay(_ message: DBusMessage) {
        let relays = state.withLock { s -> Bool in
            guard s.holding, !s.closed, let target = s.target, message.sender == target else { return false }
            if message.interface == StandardInterface.properties, message.member == "PropertiesChanged",
               let args = try? message.arguments(), args.count >= 2, let interface = args[0].string,
               let changed = args[1].stringKeyedDictionary {
                s.told[interface, default: [:]].merge(changed.mapValues(\.unwrapped)) { $1 }
            }
            return true
        }
        if relays, let copy = try? message.redirected(to: nil) { try? connection.send(copy) }
    }

    private func holdingChanged(_ acquired: Bool) {
        state.withLock { s in
            s.holding = acquired
            if !acquired { s.told = [:] }
        }
        // A client that sees the entry's new owner asks for everything; what it asks is
        // answered by the target, and what changes after is relayed from this.
        if acquired { refresh(emit: false) }
    }

    private func targetChanged(to owner: String?) {
        let holding = state.withLock { s -> Bool in
            s.target = owner
            s.generation += 1
            return s.holding
        }
        if holding, owner != nil { refresh(emit: true) }
    }

    /// Reads the target's properties; with `emit`, tells clients what differs from what
    /// they were told (one `PropertiesChanged` per interface) and the new position
    /// (`Seeked`: the position jumps when the target changes).
    private func refresh(emit: Bool) {
        let (target, generation) = state.withLock { ($0.target, $0.generation) }
        guard let target else { return }
        let connection = self.connection
        let calls = MPRISPresence.interfaces.compactMap { interface in
            try? DBusMessage.methodCall(destination: target, path: MPRISPlayer.objectPath, interface: StandardInterface.properties,
                                        method: "GetAll", arguments: [.string(interface)])
        }
        let answers = Mutex<[Int: [String: DBusValue]]>([:])
        for (index, call) in calls.enumerated() {
            connection.send(call, timeout: .seconds(5)) { [weak self] result in
                let all = (try? result.get().arguments())?.first?.stringKeyedDictionary?.mapValues(\.unwrapped) ?? [:]
                let complete = answers.withLock { a -> [Int: [String: DBusValue]]? in
                    a[index] = all
                    return a.count == calls.count ? a : nil
                }
                if let complete { self?.received(complete, generation: generation, emit: emit) }
            }
        }
    }

    private func received(_ answers: [Int: [String: DBusValue]], generation: UInt64, emit: Bool) {
        let changes = state.withLock { s -> [(String, [String: DBusValue])]? in
            guard s.generation == generation, s.holding, !s.closed else { return nil }
            var changes: [(String, [String: DBusValue])] = []
            for (index, interface) in MPRISPresence.interfaces.enumerated() {
                var values = answers[index] ?? [:]
                values["Position"] = nil  // never in PropertiesChanged (MPRIS)
                let before = s.told[interface] ?? [:]
                let changed = values.filter { before[$0.key] != $0.value }
                s.told[interface] = before.merging(values) { $1 }
                if !changed.isEmpty { changes.append((interface, changed)) }
            }
            return changes
        }
        guard emit, let changes else { return }
        for (interface, changed) in changes {
            if let signal = try? DBusMessage.signal(path: MPRISPlayer.objectPath, interface: StandardInterface.properties, name: "PropertiesChanged",
                                                    arguments: [.string(interface), .vardict(changed), .strings([])]) {
                try? connection.send(signal)
            }
        }
        if let position = answers[1]?["Position"]?.int64,
           let seeked = try? DBusMessage.signal(path: MPRISPlayer.objectPath, interface: MPRISPlayer.playerInterface,
                                                name: "Seeked", arguments: [.int64(position)]) {
            try? connection.send(seeked)
        }
    }
}
