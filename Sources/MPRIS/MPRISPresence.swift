public import DBus
import Dispatch
import Glibc
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
/// - A holder that leaves cleanly while another process is queued bridges the hand-over
///   (``handOver()``), so that a desktop never finds the app without a player. A holder
///   that is killed cannot: then Plasma sees the entry go offline and come back.
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

    /// The name the holder bridges a hand-over with (``handOver()``).
    var bridgeName: String { entryName + ".handover" }

    /// Stops relaying, leaves the entry's queue and closes the connection. A holder with
    /// other processes queued hands the entry over first (``handOver()``).
    public func close() {
        if state.withLock({ $0.holding && !$0.closed }) { handOver() }
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

    /// A clean hand-over of the entry to the next process in its queue, so that a desktop
    /// never finds the app without a player: Plasma 5.27 reads the entry's owner change as
    /// offline-then-online, and with no other player its keys would die. The holder first
    /// takes `org.mpris.MediaPlayer2.<app>.handover` (the same forwarder answers it), lets
    /// desktops read it, releases the entry (the bus gives it to the next process), lets
    /// desktops read that, and only then goes (closing the connection drops the bridge).
    /// About 1 s, only when the holder leaves while another process of the app lives; a
    /// desktop shows the bridge as a second entry meanwhile. Blocks (not on this
    /// connection's bus thread); a holder that is killed cannot do it.
    func handOver() {
        // Callbacks on this connection's bus thread, not tasks: a caller on a thread of the
        // cooperative pool (an app's deinit) must not wait for a task that needs that pool.
        let connection = self.connection
        func call(_ method: String, _ arguments: [DBusValue]) -> DBusMessage? {
            guard let message = try? DBusMessage.methodCall(destination: StandardInterface.bus, path: "/org/freedesktop/DBus",
                                                            interface: StandardInterface.bus, method: method, arguments: arguments) else { return nil }
            let reply = Mutex<DBusMessage?>(nil)
            let done = DispatchSemaphore(value: 0)
            connection.send(message, timeout: .seconds(1)) { result in
                reply.withLock { $0 = try? result.get() }
                done.signal()
            }
            _ = done.wait(timeout: .now() + .seconds(1))
            return reply.withLock { $0 }
        }
        guard let queue = try? call("ListQueuedOwners", [.string(entryName)])?.arguments().first?.stringArray, queue.count > 1,
              let taken = call("RequestName", [.string(bridgeName), .uint32(NameRequestFlags.doNotQueue.rawValue)]),
              (try? NameRequestReply(taken)) == .primaryOwner else { return }
        // Plasma's engine reads a new name's properties (through the forwarder) before it
        // counts it as a player; there is no sign of when it has, hence the waits.
        usleep(400_000)
        _ = call("ReleaseName", [.string(entryName)])
        usleep(600_000)
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
