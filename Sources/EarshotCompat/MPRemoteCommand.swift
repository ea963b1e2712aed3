// One remote command and its kinds, with MediaPlayer's names.

/// One remote command: whether it is enabled and who handles it.
///
/// Handlers are called on the main queue, one at a time, as on iOS; the MPRIS caller gets
/// its reply when the handler returns (or `commandFailed` when the main queue has not run
/// it within 5 seconds: a process whose main thread never runs `DispatchQueue.main` cannot
/// answer). The most recently added handler handles each event.
///
/// `@unchecked Sendable`: its mutable state (the handlers, whether it is enabled) lives
/// under a lock; the handlers themselves are only called on the main queue.
public class MPRemoteCommand: NSObject, @unchecked Sendable {
    private struct Target {
        let id: UInt64
        let handler: Unchecked<(MPRemoteCommandEvent) -> MPRemoteCommandHandlerStatus>
    }

    private struct State {
        var isEnabled = true
        var targets: [Target] = []
        var nextID: UInt64 = 1
    }

    private let state = Locked(State())
    /// Called after every change of the handlers or of ``isEnabled`` (the center links the
    /// command to Earshot's then).
    let changed = Locked<(@Sendable () -> Void)?>(nil)
    /// Whether MPRIS can deliver this command. The others are kept (handlers are added,
    /// enabled, removed) and never called.
    let isCarriedByMPRIS: Bool

    init(carriedByMPRIS: Bool = true) {
        isCarriedByMPRIS = carriedByMPRIS
    }

    private func notify() { changed.withLock { $0 }?() }

    /// Whether the command may be sent; a disabled command's handlers are not called and
    /// MPRIS does not advertise it.
    public var isEnabled: Bool {
        get { state.withLock { $0.isEnabled } }
        set {
            state.withLock { $0.isEnabled = newValue }
            notify()
        }
    }

    /// Adds a handler, called on the main queue for each event of the command.
    ///
    /// The first handler added to any command publishes the app on MPRIS (as iOS needs no
    /// call for the lock screen and Control Center to show it).
    ///
    /// - Returns: an opaque token for ``removeTarget(_:)``.
    @discardableResult
    public func addTarget(handler: @escaping (MPRemoteCommandEvent) -> MPRemoteCommandHandlerStatus) -> Any {
        let id = state.withLock { s -> UInt64 in
            let id = s.nextID
            s.nextID += 1
            s.targets.append(Target(id: id, handler: Unchecked(handler)))
            return id
        }
        notify()
        return MPRemoteCommandTarget(id: id)
    }

    /// Removes the handler `target` names (a token ``addTarget(handler:)`` returned), or
    /// every handler when `target` is nil.
    public func removeTarget(_ target: Any?) {
        state.withLock { s in
            if let token = target as? MPRemoteCommandTarget {
                s.targets.removeAll { $0.id == token.id }
            } else if target == nil {
                s.targets.removeAll()
            }
        }
        notify()
    }

    /// Whether the command has a handler.
    var hasTargets: Bool { state.withLock { !$0.targets.isEmpty } }
    /// Whether the command is enabled and has a handler.
    var isAvailable: Bool { state.withLock { $0.isEnabled && !$0.targets.isEmpty } }

    /// Calls the newest handler with `event` on the main queue and returns what it said;
    /// nil when the command is disabled or has no handler.
    func perform(_ event: MPRemoteCommandEvent) -> MPRemoteCommandHandlerStatus? {
        guard let handler = state.withLock({ s in s.isEnabled ? s.targets.last?.handler : nil }) else { return nil }
        if isOnMainQueue { return handler.value(event) }
        let status = Locked<MPRemoteCommandHandlerStatus?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.main.async {
            let answer = handler.value(event)
            status.withLock { $0 = answer }
            done.signal()
        }
        guard done.wait(timeout: .now() + 5) == .success else { return .commandFailed }
        return status.withLock { $0 }
    }
}

/// The token of a handler added with ``MPRemoteCommand/addTarget(handler:)``.
final class MPRemoteCommandTarget: NSObject, @unchecked Sendable {
    let id: UInt64
    init(id: UInt64) { self.id = id }
}

/// A skip by an interval (MPRIS `Seek`: a positive offset is a skip forward, a negative one
/// a skip backward, by its size).
public class MPSkipIntervalCommand: MPRemoteCommand, @unchecked Sendable {
    private let intervals = Locked<[NSNumber]>([15])
    /// The intervals the app offers, in seconds (kept; MPRIS sends its own offsets).
    public var preferredIntervals: [NSNumber] {
        get { intervals.withLock { $0 } }
        set { intervals.withLock { $0 = newValue } }
    }
}

/// A change of the playback rate (MPRIS `Rate`).
public class MPChangePlaybackRateCommand: MPRemoteCommand, @unchecked Sendable {
    /// Sets Earshot's supported rates (MPRIS `MinimumRate`, `MaximumRate`).
    let ratesChanged = Locked<(@Sendable ([Double]) -> Void)?>(nil)
    private let rates = Locked<[NSNumber]>([0.5, 1.0, 1.5, 2.0])
    /// The rates the player supports; MPRIS publishes their extremes.
    public var supportedPlaybackRates: [NSNumber] {
        get { rates.withLock { $0 } }
        set {
            rates.withLock { $0 = newValue }
            ratesChanged.withLock { $0 }?(newValue.map(\.doubleValue))
        }
    }
}

/// A jump to a position (MPRIS `SetPosition`).
public class MPChangePlaybackPositionCommand: MPRemoteCommand, @unchecked Sendable {}

/// A change of the repeat mode (MPRIS `LoopStatus`).
public class MPChangeRepeatModeCommand: MPRemoteCommand, @unchecked Sendable {
    private let current = Locked(MPRepeatType.off)
    /// The repeat mode the app shows; MPRIS's `LoopStatus` reads it.
    public var currentRepeatType: MPRepeatType {
        get { current.withLock { $0 } }
        set {
            current.withLock { $0 = newValue }
            MPNowPlayingInfoCenter.default().modesChanged()
        }
    }
}

/// A change of the shuffle mode (MPRIS `Shuffle`).
public class MPChangeShuffleModeCommand: MPRemoteCommand, @unchecked Sendable {
    private let current = Locked(MPShuffleType.off)
    /// The shuffle mode the app shows; MPRIS's `Shuffle` reads it.
    public var currentShuffleType: MPShuffleType {
        get { current.withLock { $0 } }
        set {
            current.withLock { $0 = newValue }
            MPNowPlayingInfoCenter.default().modesChanged()
        }
    }
}

/// Feedback (like, dislike, bookmark). MPRIS has no such call: present and inert.
public class MPFeedbackCommand: MPRemoteCommand, @unchecked Sendable {
    private let fields = Locked((isActive: false, title: "", shortTitle: ""))
    /// Whether the feedback is given for the current item.
    public var isActive: Bool {
        get { fields.withLock { $0.isActive } }
        set { fields.withLock { $0.isActive = newValue } }
    }
    /// The command's title.
    public var localizedTitle: String {
        get { fields.withLock { $0.title } }
        set { fields.withLock { $0.title = newValue } }
    }
    /// The command's short title.
    public var localizedShortTitle: String {
        get { fields.withLock { $0.shortTitle } }
        set { fields.withLock { $0.shortTitle = newValue } }
    }
}

/// A rating. MPRIS has no such call: present and inert.
public class MPRatingCommand: MPRemoteCommand, @unchecked Sendable {
    private let range = Locked((minimum: Float(0), maximum: Float(1)))
    /// The lowest rating.
    public var minimumRating: Float {
        get { range.withLock { $0.minimum } }
        set { range.withLock { $0.minimum = newValue } }
    }
    /// The highest rating.
    public var maximumRating: Float {
        get { range.withLock { $0.maximum } }
        set { range.withLock { $0.maximum = newValue } }
    }
}

/// A language-option change. MPRIS has no such call: present and inert.
public class MPChangeLanguageOptionCommand: MPRemoteCommand, @unchecked Sendable {}
