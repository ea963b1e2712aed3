public import DBus
import MPRIS
import OtherApps
public import SessionPolicy
import Synchronization
import Platform
#if canImport(Glibc)
import Glibc
#endif

/// The session-bus service `org.earshot.AudioSession`: applies ``SessionPolicy`` across
/// processes.
///
/// Sessions are keyed by the caller's unique bus name, so no process can act for
/// another. The arbiter watches `NameOwnerChanged` and treats a process that disappears
/// (exit, crash, SIGKILL) as vanished: the interruptions it caused end, its ducking lifts,
/// and the remote-control target moves to the previous sounder. It follows
/// `org.freedesktop.ScreenSaver` and `org.gnome.ScreenSaver` `ActiveChanged`, and asks
/// both whether the screen is locked when it starts (a host taking over while the screen
/// is locked knows at once).
///
/// Decisions for one session are unicast signals to it; `Target`, `Sessions`, `Others` and
/// `ScreenLocked` changes are broadcast as `PropertiesChanged`.
///
/// It also follows the other apps (processes without an Earshot session): their MPRIS
/// players and the sound server's playback streams (see `Arbiter+Others.swift`), and
/// applies the policy's decisions to their players with asynchronous calls.
public final class Arbiter: Sendable {
    public struct Configuration: Sendable {
        /// How long an interrupting session may stay silent before its interruptions end.
        public var silenceTimeout: Duration = .seconds(30)
        /// At most this many sessions in all (a flood of registrations gets errors).
        public var maximumSessions = 256
        /// At most this many sessions of one process (by `GetConnectionUnixProcessID`), so
        /// that one process opening many connections cannot shut the others out. A process
        /// normally has one session; a few more leave room for tests and plug-ins.
        public var maximumSessionsPerProcess = 8
        /// How long after the arbiter starts a session may register again saying which
        /// session interrupted it (`interruptedBy`): re-registration follows a host change
        /// at once. Later, the claim is ignored and the caller's interruption ends, so that
        /// no registration can make the arbiter treat another session as an interrupter.
        public var reRegistrationWindow: Duration = .seconds(10)
        public var policy = SessionPolicy.Configuration()
        /// What the arbiter does to other apps (``OthersPolicy``); `pause` by default, as iOS.
        public var others: OthersPolicy = .pause
        /// Which sound server to follow for other apps' streams.
        public var soundServer: SoundServer = .standard
        /// Called with every event the arbiter applies and what the policy decided, in the
        /// order applied (`earshot daemon --trace`). It runs on the bus thread under the
        /// arbiter's lock: it must not block (hand the line to a queue of its own).
        public var eventLog: (@Sendable (SessionPolicy.Event, [SessionPolicy.Decision]) -> Void)?
        public init() {}
    }

    /// How far the arbiter goes with other apps' audio (`earshot daemon --others`).
    public enum OthersPolicy: String, Sendable, CaseIterable {
        /// Pause their players when a non-mixable session activates, and resume them after;
        /// lower their streams while a session ducks others (as ``duck``).
        case pause
        /// Leave their players alone; lower their playing streams while a session ducks
        /// others (`SessionPolicy.foreignStreamGain`), and restore them after.
        case duck
        /// Only watch: their sound still counts for the hints, the target and interruptions.
        case observe
    }

    /// The sound server whose playback streams tell the arbiter who sounds.
    public enum SoundServer: Sendable, Hashable {
        /// None: other apps count only through MPRIS (as before the arbiter followed streams).
        case none
        /// libpulse's default (`PULSE_SERVER`, else the user's runtime directory): PulseAudio,
        /// or PipeWire's pipewire-pulse.
        case standard
        /// A server address, such as `unix:/run/user/1000/pulse/native`.
        case address(String)

        /// The address to connect to ("" for the default), or `nil` for none.
        var address: String? {
            switch self {
            case .none: nil
            case .standard: ""
            case .address(let address): address
            }
        }
    }

    public let connection: DBusConnection
    public let configuration: Configuration
    /// Where the ducked streams are kept for the next arbiter (`nil`: nowhere).
    let volumeStateFile: OtherAppsStateFile?
    let state: Mutex<State>
    /// Called with every event the arbiter applies, in the order it applies them (under its
    /// lock): the tests see here the order in which a session's calls reached the arbiter.
    let eventObserver = Mutex<(@Sendable (SessionPolicy.Event) -> Void)?>(nil)
    /// The time and the timers (the system's, or a test's).
    let clock: any ArbiterClock
    private let epoch: UInt64

    struct State {
        var policy: SessionPolicy
        var object: DBusExportedObject?
        var subscriptions: [SignalSubscription] = []
        var silenceTimers: [SessionID: UInt64] = [:]
        /// Re-registered sessions still interrupted by a session that has not registered
        /// again yet, by interrupter.
        var pendingRestores: [SessionID: [(victim: SessionID, wasPlaying: Bool)]] = [:]
        /// This arbiter has broadcast its properties once: its first broadcast states
        /// `Target` and `ScreenLocked` whatever they are, since clients may still hold the
        /// values of a previous host. After it, each is broadcast when it changes.
        var announcedOnce = false
        /// The lock state is known: an `ActiveChanged` arrived, or the screen savers have
        /// answered (or failed to) whether the screen is locked. Answers that arrive after
        /// a signal are stale.
        var lockStateKnown = false
        /// Re-registered sessions silenced by the screen lock, waiting for the lock state.
        var pendingSilenced: [(victim: SessionID, cause: InterruptionReason, wasPlaying: Bool)] = []
        /// The process of each session, and of each caller whose `Register` waits for the
        /// bus to say (-1: the bus could not say); removed when the connection leaves.
        var processes: [SessionID: Int64] = [:]
        /// Callers whose `Register` waits for their process id.
        var registering: Set<SessionID> = []
        /// A registration was refused for lack of room since the last `SessionsAvailable`.
        var refusedForRoom = false
        /// The unique names owning the screen savers' names.
        var screenSaverOwners: [String: String] = [:]
        /// Screen-saver names whose owner a `NameOwnerChanged` told (a `GetNameOwner`
        /// answer is older then).
        var screenSaverOwnersFollowed: Set<String> = []
        /// Every MPRIS player on the bus, by the unique name owning its names.
        var players: [String: ObservedPlayer] = [:]
        /// The sound server's playback streams, by index.
        var streams: [UInt32: PlaybackStream] = [:]
        var streamWatcher: PlaybackStreamWatcher?
        /// Lowers and restores other apps' streams through the watcher's connection.
        var ducker: ForeignStreamDucker?
        /// The connections queued for the arbiter's name when it started (Earshot sessions
        /// about to register again), with their processes.
        var earshotPeers: [String: Int64] = [:]
        /// What each session said it plays through (`SetOutput`); forgotten when it goes.
        var outputs: [SessionID: ArbiterRegistration.Output] = [:]
        /// Connections that left before the queue was known.
        var departed: Set<String> = []
        /// Whether the queue is known: until then no other app is reported to the policy.
        var othersReady = false
        /// When it became known (``Arbiter/tick``).
        var othersReadyTick: UInt64 = 0
        /// The watcher has listed the streams at least once.
        var streamsKnown = false
        /// No more volume changes: stopped, or the process is exiting.
        var volumesStopped = false
        /// Players a previous arbiter paused (its state file), by the session it paused
        /// them for, until this one knows them.
        var adoptedPauses: [String: SessionID] = [:]
        /// The paused players last written to the state file.
        var savedPauses: [String: SessionID] = [:]
        /// Players whose `PlaybackStatus` a ``Arbiter/readStatus(foreign:)`` is reading: one
        /// read each at a time, however often their processes fall silent and sound again.
        var statusReads: Set<String> = []
        /// The owner of gsd-media-keys' name, and whether a `NameOwnerChanged` told it
        /// (a `GetNameOwner` answer is older then).
        var keyDaemonOwner: String?
        var keyDaemonFollowed = false
        /// The arbiter's player for the desktop's keys, while gsd-media-keys runs.
        var keyCatcher: DBusExportedObject?
        /// A second has passed since it appeared (gsd has surely met it).
        var keyCatcherSettled = false
        var desktopKeys: Arbiter.DesktopKeys = .none
        /// Where gsd-media-keys sends its keys, as far as the arbiter can tell.
        var keyChoice = GnomeKeyChoice()
    }

    /// Exports the service on `connection` and starts watching processes and the screen
    /// saver, without waiting: it can run on the bus thread the moment the connection
    /// acquires ``ArbiterName/bus``, before any client's call is dispatched.
    public convenience init(connection: DBusConnection, configuration: Configuration = Configuration()) throws(DBusError) {
        try self.init(connection: connection, configuration: configuration, clock: SystemArbiterClock())
    }

    /// An arbiter that reads the time and sets its timers with `clock`, so that tests can
    /// move time instead of sleeping.
    package init(connection: DBusConnection, configuration: Configuration = Configuration(), clock: any ArbiterClock) throws(DBusError) {
        self.connection = connection
        self.clock = clock
        epoch = clock.now()
        self.configuration = configuration
        volumeStateFile = configuration.soundServer == .none ? nil : OtherAppsStateFile.standard()
        var policyConfiguration = configuration.policy
        policyConfiguration.pausesOthers = policyConfiguration.pausesOthers && configuration.others == .pause
        policyConfiguration.ducksOthers = policyConfiguration.ducksOthers && configuration.others != .observe
        state = Mutex(State(policy: SessionPolicy(configuration: policyConfiguration)))
        let object = try connection.export([interfaceDeclaration()], at: ArbiterName.path)
        var subscriptions = [try connection.watchNameOwnerNow { [weak self] change in
            guard let self else { return }
            if Arbiter.screenSavers.contains(where: { $0.name == change.name }) { self.screenSaverOwnerChanged(change) }
            if MPRISPlayerManager.isPlayerName(change.name) { self.mprisNameChanged(change.name, from: change.oldOwner, to: change.newOwner) }
            if change.name == Arbiter.gnomeKeyDaemon {
                self.state.withLock { $0.keyDaemonFollowed = true }
                self.keyDaemonOwnerChanged(to: change.newOwner)
            }
            guard change.newOwner == nil, change.name.hasPrefix(":") else { return }
            self.connectionLeft(SessionID(change.name))
        }]
        subscriptions += watchScreenSavers()
        state.withLock { s in
            s.object = object
            s.subscriptions = subscriptions
        }
        let others = startFollowingOthers()
        state.withLock { $0.subscriptions += others }
        adoptForeignVolumes()
        ArbiterExit.add(self)
        askScreenSaversWhetherLocked()
        askForKeyDaemon()
    }

    /// Stops serving: removes the object and the subscriptions.
    public func stop() {
        // What this arbiter ducked stays as it is: the next arbiter takes it over from the
        // state file.
        state.withLock { $0.volumesStopped = true }
        ArbiterExit.remove(self)
        let (object, subscriptions, timers, watcher, ducker) = state.withLock { s in
            defer { (s.object, s.subscriptions, s.silenceTimers, s.streamWatcher, s.ducker) = (nil, [], [:], nil, nil) }
            return (s.object, s.subscriptions, s.silenceTimers, s.streamWatcher, s.ducker)
        }
        ducker?.stop()
        watcher?.close()
        withdrawKeyCatcher()
        object?.unexport()
        subscriptions.forEach { $0.cancel() }
        timers.values.forEach { clock.cancel($0, on: connection) }
    }

    /// A snapshot of the policy (for status and tests).
    public var policy: SessionPolicy { state.withLock { $0.policy } }

    var tick: UInt64 { clock.now() - epoch }

    /// Applies an event and sends its decisions. Returns the decisions (a rejection is
    /// returned, not thrown; the method handlers turn it into an error reply).
    @discardableResult
    func handle(_ event: SessionPolicy.Event) -> [SessionPolicy.Decision] {
        let observer = eventObserver.withLock { $0 }
        let (decisions, object, needTimers, lockChanged) = state.withLock { s in
            observer?(event)
            let lockedBefore = s.policy.screenLocked
            let decisions = s.policy.apply(event)
            configuration.eventLog?(event, decisions)
            return (decisions, s.object, Arbiter.sessionsNeedingSilenceTimers(s.policy), s.policy.screenLocked != lockedBefore)
        }
        reconcileSilenceTimers(needTimers)
        savePausesAhead(of: decisions)
        // Sent before anything below can apply another event (reconcileForeignVolumes may):
        // clients see each event's decisions, the target among them, in the order applied.
        if let object {
            send(decisions, via: object)
            if !decisions.contains(where: { if case .rejected = $0 { true } else { false } }) {
                announceChanges(via: object, target: decisions.targetChange, screenLocked: lockChanged)
            }
        }
        reconcileForeignVolumes()
        return decisions
    }

    /// Active, silent sessions that interrupt someone: if they stay silent past the
    /// timeout, their interruptions end (as iOS ends them when the interrupter's app is
    /// suspended).
    static func sessionsNeedingSilenceTimers(_ policy: SessionPolicy) -> Set<SessionID> {
        let interrupters = Set(policy.sessions.values.flatMap { $0.interruptions.compactMap(\.interrupter) })
        return Set(interrupters.filter { id in policy[id].map { $0.isActive && !$0.isProducingSound } ?? false })
    }

    private func reconcileSilenceTimers(_ needed: Set<SessionID>) {
        let (stale, missing) = state.withLock { s in
            (s.silenceTimers.filter { !needed.contains($0.key) }, needed.subtracting(s.silenceTimers.keys))
        }
        for (id, token) in stale {
            clock.cancel(token, on: connection)
            state.withLock { _ = $0.silenceTimers.removeValue(forKey: id) }
        }
        for id in missing {
            let token = clock.schedule(after: configuration.silenceTimeout, on: connection) { [weak self] in
                guard let self else { return }
                self.state.withLock { _ = $0.silenceTimers.removeValue(forKey: id) }
                self.handle(.silenceTimeout(id))
            }
            state.withLock { $0.silenceTimers[id] = token }
        }
    }
}

