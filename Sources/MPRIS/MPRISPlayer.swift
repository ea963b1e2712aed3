public import DBus
import Dispatch
import Platform
import Synchronization

/// Publishes a ``NowPlayingInfoCenter`` and a ``RemoteCommandCenter`` as an MPRIS 2.2
/// player: `org.mpris.MediaPlayer2` and `org.mpris.MediaPlayer2.Player` at
/// `/org/mpris/MediaPlayer2`.
///
/// Incoming calls become remote commands; now-playing changes become one coalesced
/// `PropertiesChanged` per burst, holding only values that really changed; position
/// jumps emit `Seeked`. `Position` is read live and never signalled.
public final class MPRISPlayer: Sendable {
    /// The object path MPRIS players export at.
    public static let objectPath: ObjectPath = "/org/mpris/MediaPlayer2"
    /// The MPRIS root interface (identity, raise, quit).
    public static let rootInterface = "org.mpris.MediaPlayer2"
    /// The MPRIS player interface (playback, position, metadata).
    public static let playerInterface = "org.mpris.MediaPlayer2.Player"
    /// The track id MPRIS reserves for "no track".
    public static let noTrack: ObjectPath = "/org/mpris/MediaPlayer2/TrackList/NoTrack"

    /// How the player presents itself on the bus.
    public let configuration: MPRISConfiguration
    /// ``MPRISConfiguration/trackIDPrefix``, made once (every track id is built on it).
    let trackIDPrefix: ObjectPath
    /// The bus connection the player is exported on.
    public let connection: DBusConnection
    let commands: RemoteCommandCenter
    let nowPlaying: NowPlayingInfoCenter
    /// The queue behind `org.mpris.MediaPlayer2.TrackList`, if the player has one.
    public let trackList: (any TrackListSource)?
    /// What `TrackList` last told clients, for ``trackListChanged()`` to compare with.
    struct TrackListState {
        var object: DBusExportedObject?
        /// The items as last seen (nil before the first look).
        var items: [NowPlayingInfo]?
        var paths: [ObjectPath] = []
        var metadata: [ObjectPath: DBusValue] = [:]
    }
    let trackListState = Mutex(TrackListState())

    private struct State {
        var object: DBusExportedObject?
        var lastEmitted: [String: [String: DBusValue]] = [:]
        var flushScheduled = false
        /// The end of the coalescing interval that the last `PropertiesChanged` opened:
        /// changes before it wait for it, and go out together; a change after it goes out
        /// at once.
        var coalescingUntil: DispatchTime?
        var observations: [ObservationToken] = []
    }
    private let state = Mutex(State())
    /// Where calls that carry out remote commands run, one at a time in arrival order
    /// (MPRISPlayer+CommandQueue), on a thread of their own below the bus thread in CPU
    /// priority (MPRISPlayer+CommandThread): never the bus thread.
    let commandQueue = CommandThread()
    /// Where the coalesced changes are gathered, compared with the last ones emitted and
    /// made into `PropertiesChanged`, one flush at a time (so that no older snapshot is
    /// compared after a newer one): off the bus thread, which only sends them. The bus
    /// thread also serves the embedded arbiter, whose callers must not wait behind a
    /// player's snapshot.
    private let flushQueue = DispatchQueue(label: "org.earshot.mpris.flush")
    /// Set on ``flushQueue``: a player released by its own flush (its last reference was
    /// the flush's) must not wait for the queue it runs on.
    private static let onFlushQueue = DispatchSpecificKey<Bool>()

    /// Exports the player object (with `TrackList` when `trackList` is given). Call
    /// ``publish()`` to take the bus name.
    ///
    /// - Throws: ``DBusError`` `InvalidArgs` for an invalid configuration, or when an
    ///   object is already exported at `/org/mpris/MediaPlayer2` on this connection.
    public init(
        connection: DBusConnection, configuration: MPRISConfiguration,
        commandCenter: RemoteCommandCenter = .shared, nowPlayingInfoCenter: NowPlayingInfoCenter = .default,
        trackList: (any TrackListSource)? = nil
    ) throws(DBusError) {
        try configuration.validate()
        self.configuration = configuration
        self.trackIDPrefix = configuration.trackIDPrefix
        self.connection = connection
        self.commands = commandCenter
        self.nowPlaying = nowPlayingInfoCenter
        self.trackList = trackList
        flushQueue.setSpecific(key: MPRISPlayer.onFlushQueue, value: true)

        var interfaces = [rootInterfaceDeclaration(), playerInterfaceDeclaration()]
        if trackList != nil { interfaces.append(trackListInterfaceDeclaration()) }
        let object = try connection.export(interfaces, at: MPRISPlayer.objectPath)
        if trackList != nil { trackListState.withLock { $0.object = object } }
        trackListChanged()
        let observations = [
            nowPlayingInfoCenter.observe { [weak self] change in self?.nowPlayingChanged(change) },
            commandCenter.observe { [weak self] in self?.scheduleFlush() },
        ]
        state.withLock { s in
            s.object = object
            s.observations = observations
            s.lastEmitted = [MPRISPlayer.rootInterface: rootSnapshot(), MPRISPlayer.playerInterface: playerSnapshot()]
        }
    }

    deinit { unpublish() }

    /// The bus name desktops see this player under: the app's shared entry, or its own
    /// instance name.
    public var busName: String { configuration.busName }

    /// The name this process queues for and claims: the app's last-sound-wins stack
    /// (``MPRISConfiguration/targetBusName``), or the instance name.
    public var claimedBusName: String { configuration.instanceID == nil ? configuration.targetBusName : busName }

    /// The app's entry held or queued for by this process (shared names only).
    let presence = Mutex<MPRISPresence?>(nil)

    /// Requests the bus names. With the shared app name, the process queues for the app's
    /// last-sound-wins stack (``MPRISConfiguration/targetBusName``, `ALLOW_REPLACEMENT`, so
    /// that ``claimName()`` can take it) and, on a connection of its own, for the app's
    /// entry `org.mpris.MediaPlayer2.<app>` (``MPRISPresence``): whichever process holds
    /// the entry relays it to the stack's owner. An instance name is this process's alone.
    ///
    /// - Returns: the answer for the stack (or the instance name): `primaryOwner` when no
    ///   other process of the app was there first, `inQueue` behind one.
    @discardableResult
    public func publish() async throws(DBusError) -> NameRequestReply {
        guard configuration.instanceID == nil else {
            return try await connection.requestName(busName, flags: [.doNotQueue])
        }
        let reply = try await connection.requestName(claimedBusName, flags: [.allowReplacement])
        if presence.withLock({ $0 == nil }) {
            let entry = try await MPRISPresence(bus: connection.bus, configuration: configuration)
            let previous = presence.withLock { p -> MPRISPresence? in
                defer { p = p ?? entry }
                return p
            }
            if previous != nil { entry.close() }
        }
        return reply
    }

    /// Whether this process holds the app's entry `org.mpris.MediaPlayer2.<app>` (and
    /// relays it to the app's target), false for an instance name.
    public var holdsAppEntry: Bool { presence.withLock { $0 }?.isHolding ?? false }

    /// Takes the app's last-sound-wins stack from its current owner (`REPLACE_EXISTING`),
    /// leaving that owner first in the queue: the “last sound wins” hook. The app's entry
    /// does not move; it relays to this process from now on.
    @discardableResult
    public func claimName() async throws(DBusError) -> NameRequestReply {
        try NameRequestReply(try await connection.call(try claimNameRequest()))
    }

    /// The `RequestName` call ``claimName()`` makes, to send with other calls on the
    /// player's connection (``DBusConnection/calls(_:timeout:)``) so that they need one
    /// round trip, not one each.
    public func claimNameRequest() throws(DBusError) -> DBusMessage {
        try .requestName(claimedBusName, flags: [.allowReplacement, .replaceExisting])
    }

    /// Carries out and answers the calls already handed to the command queue (waiting at
    /// most 2 s), emits the changes still waiting for their coalescing interval (so that
    /// clients see the final state, such as `Stopped`), then releases the name and removes
    /// the object. A caller whose command ended the app (`RemoveTrack` of the only track)
    /// thus gets its reply rather than `NoReply` when the app exits right after.
    public func unpublish() {
        commandQueue.waitForQueuedJobs(timeout: 2)
        func flushWaiting() {
            if state.withLock({ $0.flushScheduled && $0.object != nil }) { flush() }
        }
        if DispatchQueue.getSpecific(key: MPRISPlayer.onFlushQueue) == true { flushWaiting() } else { flushQueue.sync { flushWaiting() } }
        let object = state.withLock { s -> DBusExportedObject? in
            defer {
                s.object = nil
                s.observations = []
            }
            return s.object
        }
        let entry = presence.withLock { p -> MPRISPresence? in
            defer { p = nil }
            return p
        }
        guard let object else { entry?.close(); return }
        object.unexport()
        try? connection.releaseNameWithoutReply(claimedBusName)
        entry?.drain(from: connection.uniqueName)
        entry?.close()
    }

    // MARK: Change propagation

    private func nowPlayingChanged(_ change: NowPlayingInfoCenter.Change) {
        scheduleFlush()
        if change.discontinuity, let object = state.withLock({ $0.object }) {
            try? object.emit("Seeked", interface: MPRISPlayer.playerInterface, [.int64(positionMicroseconds())])
        }
    }

    /// The first change of a burst goes out at once: a client that acts on the state it
    /// cached (KDE's play/pause key sends Play or Pause by the last `PlaybackStatus` it saw)
    /// must not see the old one for a coalescing interval. What follows within
    /// ``MPRISConfiguration/coalescingInterval`` of an emitted change is gathered into one
    /// `PropertiesChanged` at the interval's end.
    private func scheduleFlush() {
        let now = DispatchTime.now()
        let deadline = state.withLock { s -> DispatchTime?? in
            guard !s.flushScheduled, s.object != nil else { return nil }
            s.flushScheduled = true
            return .some(s.coalescingUntil.flatMap { $0 > now ? $0 : nil })
        }
        guard let deadline else { return }
        if let deadline {
            flushQueue.asyncAfter(deadline: deadline) { [weak self] in self?.flush() }
        } else {
            flushQueue.async { [weak self] in self?.flush() }
        }
    }

    /// Emits one PropertiesChanged per interface, for the values that differ from the
    /// last ones emitted, and opens a coalescing interval when it emitted any. Runs on the
    /// flush queue.
    private func flush() {
        // Before the snapshots: a change made while they are taken schedules a flush of its
        // own. (Cleared after them, it found this flush still scheduled, and this flush's
        // snapshots without it: the change waited for the next one, a Playing read as Paused
        // for seconds.)
        state.withLock { $0.flushScheduled = false }
        let root = rootSnapshot()
        let player = playerSnapshot()
        let (object, diffs) = state.withLock { s -> (DBusExportedObject?, [(String, [String: DBusValue])]) in
            var diffs: [(String, [String: DBusValue])] = []
            for (interface, snapshot) in [(MPRISPlayer.rootInterface, root), (MPRISPlayer.playerInterface, player)] {
                let previous = s.lastEmitted[interface] ?? [:]
                let changed = snapshot.filter { previous[$0.key] != $0.value }
                if !changed.isEmpty { diffs.append((interface, changed)) }
                s.lastEmitted[interface] = snapshot
            }
            if !diffs.isEmpty {
                let interval = configuration.coalescingInterval
                s.coalescingUntil = .now() + .nanoseconds(Int(clamping: interval.wholeNanoseconds))
            }
            return (s.object, diffs)
        }
        guard let object else { return }
        for (interface, changed) in diffs {
            try? object.emitPropertiesChanged(interface: interface, changed: changed)
        }
    }
}
