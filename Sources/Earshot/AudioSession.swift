package import AudioEngine
public import AudioRoutes
package import DBus
public import MPRIS
public import SessionPolicy
import Arbiter
public import Synchronization

/// The process's audio session (the `AVAudioSession` analog): its category and options,
/// activation, interruptions, ducking, routes, and whether other audio plays.
///
/// The rules are applied across processes by the arbiter (`org.earshot.AudioSession` on
/// the session bus), which runs embedded in the first Earshot process that finds none, or
/// as `earshot daemon`. ``AudioPlayer``s of a process whose session is connected pause
/// when it is interrupted and resume when the interruption ends with `shouldResume`;
/// ducking lowers the engine's process gain; when the process starts making sound in an
/// eligible session, its MPRIS name is claimed (last sound wins).
///
/// The session connects to the bus on first use of an `async` method (or
/// ``connect()``), or when a player first plays: as on iOS, a process that never calls
/// its session has one anyway, in the default category (soloAmbient), which the first
/// player that plays joins and activates, without delaying its sound. A process that
/// plays nothing (or only ``SystemSound``s) stays off the bus.
public final class AudioSession: Sendable {
    /// The process's session, on the session bus and the shared engine. It publishes the
    /// shared remote commands and now-playing info on MPRIS by itself, as iOS shows an app
    /// that has them (see ``publishRemoteControl(_:commands:nowPlaying:trackList:)``).
    public static let shared: AudioSession = {
        let session = AudioSession()
        session.publishSharedCentersImplicitly()
        return session
    }()

    /// How ``setActive(_:options:)-4wxrc`` acts (the `AVAudioSession.SetActiveOptions` analog).
    public struct SetActiveOptions: OptionSet, Sendable, Hashable {
        /// The options' bits.
        public let rawValue: Int
        /// Options from their bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// On deactivation, tell the sessions this one interrupted that they may resume.
        public static let notifyOthersOnDeactivation = SetActiveOptions(rawValue: 1)
    }

    /// An interruption's phase (the `AVAudioSession.InterruptionType` analog, with the
    /// reason and the resume option it carries).
    public enum InterruptionType: Sendable, Hashable {
        /// The session was interrupted: its players paused.
        case began(reason: InterruptionReason)
        /// The interruption ended; `shouldResume` says the app may play again (the
        /// `AVAudioSession.InterruptionOptions.shouldResume` analog).
        case ended(shouldResume: Bool)
    }

    /// What the session reports (the AVAudioSession notifications).
    public enum Notification: Sendable {
        /// An interruption began or ended (`interruptionNotification`).
        case interruption(InterruptionType)
        /// The route changed (`routeChangeNotification`).
        case routeChange(RouteChange)
        /// Another app started or stopped playing audio that secondary audio (a game's
        /// soundtrack) should give way to (`silenceSecondaryAudioHintNotification`).
        case silenceSecondaryAudioHint(shouldSilence: Bool)
        /// Media services were reset, as on iOS: the arbiter changed hosts (the session
        /// registered again with its state), or the sound server went away and came back
        /// (players paused where they were).
        case mediaServicesWereReset
        /// The arbiter deactivated the session: it stayed silent for the silence timeout
        /// (30 s) while interrupting others, who were told they may resume. ``isActive``
        /// reads false; the next `play()` activates the session again.
        case deactivatedAfterSilence
        /// ``isInputAvailable`` changed: the first input appeared (a microphone plugged, the
        /// sound server back) or the last one went away. When a microphone (not a monitor)
        /// is what changed, a `routeChange` for the inputs comes first.
        case inputAvailabilityChange(isInputAvailable: Bool)
        /// ``currentInputs`` changed (an input plugged or unplugged, the default source
        /// changed), once the session follows them (from the first read of the inputs or the
        /// first recording): the inputs now, the default first. Any `routeChange` and
        /// `inputAvailabilityChange` the change makes come first.
        case inputsChange(currentInputs: [AudioInputPort])
    }

    let appName: String
    let bus: DBusConnection.Bus
    let engine: AudioEngine
    let state = Mutex(SessionState())
    let observers = Observers<Notification>()
    let remoteCommandsAvailability = Mutex<RemoteCommandCenter?>(nil)
    /// The remote control published without a call (see `AudioSession+ImplicitRemoteControl.swift`).
    let implicitRemoteControl = Mutex(ImplicitRemoteControl())
    /// The one path to the arbiter (see `AudioSession+Events.swift`): its steps run one at
    /// a time, in the order they were enqueued.
    let steps: AsyncStream<Step>.Continuation

    struct SessionState {
        var category: Category = .soloAmbient
        var options: CategoryOptions = []
        var mode: Mode = .default
        /// What the session tells the arbiter of its sound, whether it is interrupted, and its
        /// registration (see `SessionClient`): fed on the state lock by `feed(_:_:)`.
        var client = SessionClient()
        var otherAudioPlaying = false
        var secondaryHint = false
        var duckGain = 1.0
        /// The output last told to the arbiter (`SetOutput`, or `Register`), for
        /// `earshot status`; nil before the first.
        var outputReported: ArbiterRegistration.Output?
        var preferredSampleRate: Double?
        var preferredIOBufferDuration: Double?
        var connection: DBusConnection?
        /// The connection that queues for the arbiter's name and serves the arbiter while
        /// this process hosts it.
        var arbiterConnection: DBusConnection?
        var connecting: Task<DBusConnection, any Error>?
        var hosted: Arbiter?
        var subscriptions: [SignalSubscription] = []
        var routes: RouteMonitor?
        var mpris: MPRISPlayer?
        var commandObservation: ObservationToken?
        var players: [ObjectIdentifier: WeakPlayer] = [:]
        var soundObserver: UInt64?
        /// The process's recorders that are recording: a recording session is in use, as a sounding one is.
        var recorders: Set<ObjectIdentifier> = []
        /// A player's start is connecting the implicit session (see `joinImplicitly`).
        var joiningImplicitly = false
        /// The implicit session could not connect (no session bus): players do not try
        /// again before this.
        var implicitRetryAt: ContinuousClock.Instant?
    }

    struct WeakPlayer { weak var player: AudioPlayer? }

    /// A session for `appName` (default: the process name) on the session bus, driving
    /// the process's shared audio engine. Most apps use ``shared`` instead.
    public convenience init(appName: String? = nil) {
        self.init(appName: appName, bus: .session, engine: .shared)
    }

    /// A session for `appName` on `bus`, driving `engine`: for the package's tools and
    /// tests, which use private buses and engines; the bus and engine types are not part
    /// of the public surface.
    package init(appName: String?, bus: DBusConnection.Bus, engine: AudioEngine = .shared) {
        self.appName = appName ?? CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "earshot") } ?? "earshot"
        self.bus = bus
        self.engine = engine
        let (stream, continuation) = AsyncStream.makeStream(of: Step.self)
        steps = continuation
        // The consumer holds the stream only: a session that goes away finishes it (deinit).
        Task { for await step in stream { await step() } }
    }

    deinit { steps.finish() }

    // MARK: Category and activation

    /// The session's category (soloAmbient until ``setCategory(_:mode:options:)-2n7tw``).
    public var category: Category { state.withLock { $0.category } }
    /// The category's options, normalised as on iOS.
    public var categoryOptions: CategoryOptions { state.withLock { $0.options } }
    /// The session's mode.
    public var mode: Mode { state.withLock { $0.mode } }
    /// Whether the session is active: activated, and not interrupted since.
    public var isActive: Bool { state.withLock { $0.client.active } }
    /// Whether another session, or another app on the desktop, is playing audio now.
    public var isOtherAudioPlaying: Bool { state.withLock { $0.otherAudioPlaying } }
    /// Whether another app plays audio that secondary audio should give way to now.
    public var secondaryAudioShouldBeSilencedHint: Bool { state.withLock { $0.secondaryHint } }
    /// Whether the session is interrupted now.
    public var isInterrupted: Bool { state.withLock { $0.client.interrupted } }

    /// How many interruptions have begun in this session so far: read before a play that
    /// comes later (``QueuePlayer/play(askedAfter:)``, ``playerWillStart(_:askedAfter:)``).
    package var interruptionsBegun: UInt64 { state.withLock { $0.client.interruptionsBegun } }
    /// The gain the arbiter applies while another session ducks this one (1 when not ducked).
    public var duckGain: Double { state.withLock { $0.duckGain } }

    /// Sets the category; the options replace the previous ones, as on iOS.
    ///
    /// - Throws: ``AudioSessionError/optionNotAllowed(option:category:)`` for options the
    ///   category does not allow (such as `duckOthers` with `soloAmbient`),
    ///   ``AudioSessionError/arbiterUnreachable(reason:)`` when the bus or the arbiter
    ///   cannot be reached, ``AudioSessionError/rejected(reason:)`` when the arbiter
    ///   refuses; nothing changes then.
    ///
    /// The options read back normalised, as on iOS: `ambient` and the mixing options
    /// carry `mixWithOthers`. The route options (`allowBluetooth`, `defaultToSpeaker`, …)
    /// are kept and read back but change nothing on a desktop.
    public func setCategory(_ category: Category, mode: Mode = .default, options: CategoryOptions = []) async throws {
        // Refused here too: while the session waits for room in the arbiter no call is
        // made, and the refused options must not be kept.
        if let option = WireFormat.refusedOption(of: options, with: category) {
            throw AudioSessionError.optionNotAllowed(option: option, category: category)
        }
        try await AudioSessionError.mapping { try await onPath {
            try await self.call(.setCategory(category, options: options, mode: mode))
            self.state.withLock { s in (s.category, s.options, s.mode) = (category, options.normalized(for: category), mode) }
            self.applyRecordingCategory()
            self.routeMonitor()?.reportCategoryChange()
            try await self.sendRemoteCommands()
        } }
    }

    /// Activates or deactivates the session.
    ///
    /// - Throws: ``AudioSessionError/isBusy(runningPlayers:)`` when deactivating while
    ///   players of the process are running, as iOS refuses it; nothing changes then
    ///   (the sessions this one interrupted stay interrupted).
    ///   ``AudioSessionError/arbiterUnreachable(reason:)`` when the bus or the arbiter
    ///   cannot be reached, ``AudioSessionError/rejected(reason:)`` when the arbiter refuses.
    public func setActive(_ active: Bool, options: SetActiveOptions = []) async throws {
        if !active {
            let running = state.withLock { s in s.players.values.count { $0.player?.isPlaying == true } }
            if running > 0 { throw AudioSessionError.isBusy(runningPlayers: running) }
        }
        let notify = options.contains(.notifyOthersOnDeactivation)
        try await AudioSessionError.mapping { try await onPath { try await self.sendActivation(active, notifyOthers: notify) } }
    }

    // MARK: Route and hardware

    /// The current route: its outputs (from PulseAudio/PipeWire, or ALSA jacks) and its
    /// inputs (the sound server's sources, the default first; see ``currentInputs``).
    public var currentRoute: AudioRoute { (routeMonitor()?.currentRoute ?? .empty).with(inputs: currentInputs) }

    /// The sample rate in use: the engine's voices are made for it and its output opened
    /// at it. Unless a rate was asked for, it is the sound server's default sink's (learnt
    /// when the first player is made; before that, 48 kHz), so that the server has nothing
    /// to resample, as an iOS app runs at the hardware's rate.
    public var sampleRate: Double { Double(engine.sampleRate) }
    /// The sample rate set with ``setPreferredSampleRate(_:)``, if any.
    public var preferredSampleRate: Double? { state.withLock { $0.preferredSampleRate } }
    /// Asks the engine for a sample rate, clamped to 8000…192000 Hz
    /// (`AudioEngine.sampleRateRange`). Players are made for the engine's rate, so the
    /// rate changes only while the process has no player: at once if it has none, otherwise
    /// when the next player is made after all were released; the output then plays at it
    /// from its next start after silence. ``sampleRate`` says the rate in use (as on iOS,
    /// read it back rather than assume the preference was granted).
    ///
    /// - Throws: ``AudioSessionError/outOfRange(setting:value:allowed:)`` for a rate
    ///   outside 8000…384000 Hz.
    public func setPreferredSampleRate(_ rate: Double) throws(AudioSessionError) {
        guard rate.isFinite, rate >= 8000, rate <= 384_000 else {
            throw .outOfRange(setting: "sample rate in Hz", value: rate, allowed: "8000…384000 Hz")
        }
        state.withLock { $0.preferredSampleRate = rate }
        engine.setPreferredSampleRate(Int(rate.rounded()))
    }

    /// The IO buffer duration the output granted: the sound server's request size (its
    /// `minreq`, as the server answered) or the ALSA period, in seconds. The output buffers
    /// `AudioEngine.Configuration.periods` of them (3 by default).
    public var ioBufferDuration: Double { engine.ioBufferDuration }
    /// The IO buffer duration set with ``setPreferredIOBufferDuration(_:)``, if any.
    public var preferredIOBufferDuration: Double? { state.withLock { $0.preferredIOBufferDuration } }
    /// Asks the engine for an IO buffer duration (its period), clamped to 2.5…100 ms
    /// (`AudioEngine.ioBufferDurationRange`; as on iOS, whose hardware period is at most
    /// 4096 frames; an ALSA device named with `--device` keeps at least 512 frames). It
    /// applies to the next output the engine opens, or to the open one when its stream
    /// next starts after silence (the next play after everything was paused, stopped or
    /// had finished); a stream that keeps playing keeps its period until then.
    /// ``ioBufferDuration`` then says what the server granted. A long period costs fewer
    /// wakeups; a short one lets a new sound start sooner.
    ///
    /// - Throws: ``AudioSessionError/outOfRange(setting:value:allowed:)`` for a duration
    ///   outside 0…1 s.
    public func setPreferredIOBufferDuration(_ duration: Double) throws(AudioSessionError) {
        guard duration.isFinite, duration > 0, duration <= 1 else {
            throw .outOfRange(setting: "IO buffer duration in seconds", value: duration, allowed: "more than 0, at most 1 s")
        }
        state.withLock { $0.preferredIOBufferDuration = duration }
        engine.setPreferredIOBufferDuration(duration)
    }
    /// The output latency of the engine.
    public var outputLatency: Double { engine.outputLatency }

    // MARK: Notifications

    /// Notifications as an async sequence; each call makes a new one.
    public func notifications() -> AsyncStream<Notification> {
        let (stream, continuation) = AsyncStream.makeStream(of: Notification.self)
        let token = observers.add { continuation.yield($0) }
        continuation.onTermination = { _ in token.cancel() }
        return stream
    }

    /// Calls `handler` for every notification.
    public func observe(_ handler: @escaping @Sendable (Notification) -> Void) -> ObservationToken {
        observers.add(handler)
    }

    /// Tells the observers of `notification` (`package`: the package's tests post events
    /// that a bus and a sound server would otherwise have to cause).
    package func post(_ notification: Notification) { observers.notify(notification) }

    /// Receives timestamped milestones (sound started, name claimed, activation sent,
    /// interruption received) for measurements; `earshot` sets it when `EARSHOT_TRACE=1`.
    public static let trace = Mutex<(@Sendable (String) -> Void)?>(nil)

    static func trace(_ event: @autoclosure () -> String) {
        if let handler = trace.withLock({ $0 }) { handler(event()) }
    }

    /// Receives each event the arbiter applies, with what the policy decided, while this
    /// process hosts it (on the arbiter's bus thread, under its lock: the handler must not
    /// wait); `earshot` sets it when `EARSHOT_ARBITER_TRACE=1`, as `earshot daemon --trace`
    /// does for the daemon. Read when hosting begins.
    package static let arbiterEventLog = Mutex<(@Sendable (SessionPolicy.Event, [SessionPolicy.Decision]) -> Void)?>(nil)
}
