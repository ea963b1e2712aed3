package import Earshot

/// The process's audio session, with `AVAudioSession`'s names and shapes over Earshot's
/// `AudioSession.shared`.
///
/// The setters are synchronous and `throws`, as on iOS: each waits for the arbiter's answer
/// (Earshot's calls are `async`; see ``setCategory(_:mode:options:)``). The session's events
/// are posted on `NotificationCenter.default` with the session as `object` and Apple's
/// `userInfo` keys (see ``interruptionNotification``).
///
/// The interruption, secondary-hint and media-services notifications are posted as iOS
/// posts them, from the main thread, where the app's main thread drains the main queue (it
/// runs `RunLoop.main`). Where the main queue is drained by a pool thread instead (after
/// `dispatchMain()`, which an `async` main calls), they are posted from a serial queue after
/// it: observers registered with `queue: .main` still run on the main queue, those with no
/// queue run on that serial queue. Route changes are posted from a serial queue of their
/// own, as iOS posts them on a secondary thread. A process whose main queue is never
/// drained (a GLib main loop with no bridge to it) gets no main-queue notifications.
///
/// A class with mutable state shared across threads: `@unchecked Sendable` because its
/// only mutable state, the category, mode and options last asked for, lives under a lock;
/// everything else is Earshot's session, which is `Sendable`.
public final class AVAudioSession: NSObject, @unchecked Sendable {
    private static let shared = AVAudioSession(session: .shared)

    /// The process's session (iOS's singleton, made when first asked for).
    public static func sharedInstance() -> AVAudioSession { shared }

    /// The Earshot session this one wraps.
    let session: AudioSession
    /// What the app last set, so that the categories and modes Earshot applies as others
    /// (`multiRoute`, `voicePrompt`) and the options it does not know read back as set.
    private let requested = Locked<(category: Category, mode: Mode, options: CategoryOptions, policy: RouteSharingPolicy)?>(nil)
    private var observation: AnyObject?
    /// Route changes are posted on a thread of their own, in order (iOS posts them on a
    /// secondary thread).
    let routeChangeQueue = DispatchQueue(label: "EarshotCompat.AVAudioSession.routeChange")

    /// A session over `session`, posting its events (the package's tests wrap a session
    /// on a private bus; apps use ``sharedInstance()``).
    package init(session: AudioSession) {
        self.session = session
        super.init()
        observation = session.observe { [weak self] notification in self?.post(notification) }
    }

    // MARK: Category and mode

    /// The session's category (`soloAmbient` until set).
    public var category: Category {
        let actual = session.category
        if let requested = requested.withLock({ $0 }), requested.category.earshot == actual { return requested.category }
        return Category(actual)
    }

    /// The category's options, normalised as iOS normalises them (`ambient` and the mixing
    /// options carry `mixWithOthers`).
    public var categoryOptions: CategoryOptions {
        var options = CategoryOptions(rawValue: session.categoryOptions.rawValue)
        if let requested = requested.withLock({ $0 }) {
            options.formUnion(requested.options.intersection(.overrideMutedMicrophoneInterruption))
        }
        return options
    }

    /// The session's mode (`default` until set).
    public var mode: Mode {
        let actual = session.mode
        if let requested = requested.withLock({ $0 }), requested.mode.earshot == actual { return requested.mode }
        return Mode(actual)
    }

    /// The route-sharing policy last set (`default` until set; kept, not applied).
    public var routeSharingPolicy: RouteSharingPolicy { requested.withLock { $0?.policy } ?? .default }

    /// Sets the category, with no options and the current mode.
    ///
    /// - Throws: when the bus or the arbiter cannot be reached.
    public func setCategory(_ category: Category) throws {
        try setCategory(category, mode: mode, policy: routeSharingPolicy, options: [])
    }

    /// Sets the category and its options, keeping the current mode.
    ///
    /// - Throws: for options the category does not allow (`duckOthers` with
    ///   `soloAmbient`), or when the bus or the arbiter cannot be reached; nothing changes then.
    public func setCategory(_ category: Category, options: CategoryOptions = []) throws {
        try setCategory(category, mode: mode, policy: routeSharingPolicy, options: options)
    }

    /// Sets the category, mode and options together.
    ///
    /// The call blocks until the arbiter has answered (one round trip on the session bus):
    /// Earshot's `setCategory` is `async`, and this waits for it on a semaphore while it runs
    /// on Swift's global executor. It may be called from the main thread, as iOS code does.
    /// From a task it holds one thread of the global executor meanwhile, while the work
    /// needs another: as many blocking calls at once, from tasks, as there are cores hang.
    ///
    /// - Throws: for options the category does not allow, or when the bus or the arbiter
    ///   cannot be reached; nothing changes then.
    public func setCategory(_ category: Category, mode: Mode, options: CategoryOptions = []) throws {
        try setCategory(category, mode: mode, policy: routeSharingPolicy, options: options)
    }

    /// Sets the category, mode, route-sharing policy (kept, not applied: the sound server
    /// routes) and options together.
    ///
    /// - Throws: as ``setCategory(_:mode:options:)``.
    public func setCategory(_ category: Category, mode: Mode, policy: RouteSharingPolicy, options: CategoryOptions = []) throws {
        let session = self.session
        try session.setCategory(category.earshot, mode: mode.earshot, options: options.earshot)
        requested.withLock { $0 = (category, mode, options, policy) }
    }

    /// Sets the mode, keeping the category and its options.
    ///
    /// - Throws: as ``setCategory(_:mode:options:)``.
    public func setMode(_ mode: Mode) throws {
        try setCategory(category, mode: mode, policy: routeSharingPolicy, options: categoryOptions)
    }

    // MARK: Activation

    /// Activates or deactivates the session, blocking until the arbiter has answered (see
    /// ``setCategory(_:mode:options:)``).
    ///
    /// - Throws: an `NSError` in `NSOSStatusErrorDomain` with code `560030580` (`'!act'`,
    ///   iOS's `isBusy`) when deactivating while players of the process are running;
    ///   Earshot's error when the bus or the arbiter cannot be reached.
    public func setActive(_ active: Bool, options: SetActiveOptions = []) throws {
        let session = self.session
        let earshotOptions: AudioSession.SetActiveOptions = options.contains(.notifyOthersOnDeactivation) ? .notifyOthersOnDeactivation : []
        do {
            try session.setActive(active, options: earshotOptions)
        } catch let error as AudioSessionError {
            guard case .isBusy = error else { throw error }
            throw NSError(domain: NSOSStatusErrorDomain, code: 560_030_580,
                          userInfo: [NSLocalizedDescriptionKey: error.description])
        }
    }

    // MARK: State

    /// Whether another session, or another app on the desktop, is playing audio now.
    public var isOtherAudioPlaying: Bool { session.isOtherAudioPlaying }
    /// Whether another app plays audio that secondary audio should give way to now.
    public var secondaryAudioShouldBeSilencedHint: Bool { session.secondaryAudioShouldBeSilencedHint }

    // MARK: Routes and hardware

    /// The current route: its outputs and inputs.
    public var currentRoute: AVAudioSessionRouteDescription { AVAudioSessionRouteDescription(session.currentRoute) }
    /// Whether something can be recorded (a source other than a monitor exists).
    public var isInputAvailable: Bool { session.isInputAvailable }
    /// The inputs a recording could use, the default one first.
    public var availableInputs: [AVAudioSessionPortDescription]? {
        session.availableInputs.map(AVAudioSessionPortDescription.init(input:))
    }
    /// The input set with ``setPreferredInput(_:)``, if any.
    public var preferredInput: AVAudioSessionPortDescription? {
        session.preferredInput.map(AVAudioSessionPortDescription.init(input:))
    }
    /// Prefers an input of ``availableInputs`` (matched by its `uid`) for recordings, or
    /// none with `nil`. An input that is not available is ignored.
    public func setPreferredInput(_ inPort: AVAudioSessionPortDescription?) throws {
        session.setPreferredInput(inPort.flatMap { port in session.availableInputs.first { $0.name == port.uid } })
    }
    /// The channels of the current input.
    public var inputNumberOfChannels: Int { session.inputNumberOfChannels }
    /// The channels of the current output (2 when there is none).
    public var outputNumberOfChannels: Int { session.currentRoute.outputs.first?.channels ?? 2 }

    /// The sample rate in use.
    public var sampleRate: Double { session.sampleRate }
    /// The sample rate set with ``setPreferredSampleRate(_:)``, or 0 (as on iOS) if none.
    public var preferredSampleRate: Double { session.preferredSampleRate ?? 0 }
    /// Prefers a sample rate for the output; read ``sampleRate`` back for the one in use.
    ///
    /// - Throws: for a rate outside 8000…384000 Hz.
    public func setPreferredSampleRate(_ sampleRate: Double) throws { try session.setPreferredSampleRate(sampleRate) }

    /// The IO buffer duration the output granted, in seconds.
    public var ioBufferDuration: TimeInterval { session.ioBufferDuration }
    /// The IO buffer duration set with ``setPreferredIOBufferDuration(_:)``, or 0 if none.
    public var preferredIOBufferDuration: TimeInterval { session.preferredIOBufferDuration ?? 0 }
    /// Prefers an IO buffer duration; read ``ioBufferDuration`` back for the one granted.
    ///
    /// - Throws: for a duration outside 0…1 s.
    public func setPreferredIOBufferDuration(_ duration: TimeInterval) throws {
        try session.setPreferredIOBufferDuration(duration)
    }
    /// The output latency, in seconds.
    public var outputLatency: TimeInterval { session.outputLatency }
    /// The input latency, in seconds (not measured: 0).
    public var inputLatency: TimeInterval { 0 }

    /// Overrides the output of a `playAndRecord` session (to the speaker). Does nothing on a
    /// desktop, where the sound server routes and there is no receiver; it does not throw.
    public func overrideOutputAudioPort(_ portOverride: PortOverride) throws {}

    // MARK: Recording permission

    /// Whether the app may record: always `granted` on a desktop.
    public var recordPermission: RecordPermission { .granted }

    /// Asks for permission to record: `response` is called at once with `true`, on the
    /// calling thread (a desktop has no such permission; iOS calls it on any thread).
    public func requestRecordPermission(_ response: @escaping (Bool) -> Void) { response(true) }
}
