import AudioEngine
import Synchronization

extension QueuePlayer {
    /// What a queue does when its current item ends (`AVPlayer.ActionAtItemEnd`).
    public enum ActionAtItemEnd: Sendable, Hashable {
        /// Moves on to the next item, gaplessly (the default, as `AVQueuePlayer`).
        case advance
        /// Stays on the item that ended and pauses; ``QueuePlayer/timeControlStatus``
        /// reads ``TimeControlStatus/paused`` and now playing shows the item's end.
        /// ``QueuePlayer/play()`` then plays it again from its start.
        case pause
        /// Does nothing: the item that ended stays current and the queue still means to
        /// play (``TimeControlStatus/playing``, as `AVPlayer` keeps its rate), while now
        /// playing shows the item's end, standing still; the app moves on, seeks or pauses.
        case none
    }

    /// Whether the queue plays, is paused, or waits to play (`AVPlayer.TimeControlStatus`).
    public enum TimeControlStatus: Sendable, Hashable {
        /// Not playing: paused by the app, a remote command, an interruption, the end of
        /// the queue or of an item (``ActionAtItemEnd/pause``).
        case paused
        /// Asked to play, but waiting, for the reason given.
        case waitingToPlayAtSpecifiedRate(WaitingReason)
        /// Playing.
        case playing
    }

    /// Why a queue that was asked to play does not play yet (`AVPlayer.WaitingReason`).
    public enum WaitingReason: String, Sendable, Hashable {
        /// The current item's data does not arrive as fast as it plays (a network stream
        /// stalls): the queue plays on by itself when it flows again.
        case toMinimizeStalls
    }

    /// What the queue does when an item ends; ``ActionAtItemEnd/advance`` by default.
    /// Set while playing, it applies to the current item's end.
    public var actionAtItemEnd: ActionAtItemEnd {
        get { state.withLock { $0.actionAtItemEnd } }
        set {
            let started = state.withLock { s -> [AudioPlayer] in
                s.actionAtItemEnd = newValue
                return s.dropAhead()
            }
            stopStarted(started)
            if newValue == .advance { prepareNextItem() }
        }
    }

    /// Whether the queue plays, is paused, or waits (and why). Every change is also an
    /// ``Event/timeControlStatusChanged(_:)``.
    public var timeControlStatus: TimeControlStatus {
        state.withLock { QueuePlayer.status(of: $0) }
    }

    /// Why the queue waits, when ``timeControlStatus`` is waiting (`AVPlayer.reasonForWaitingToPlay`).
    public var reasonForWaitingToPlay: WaitingReason? {
        if case .waitingToPlayAtSpecifiedRate(let reason) = timeControlStatus { return reason }
        return nil
    }

    /// Whether the queue plays again by itself when an interruption that paused it ends
    /// with `shouldResume` (true by default). When false it stays paused, hears
    /// ``Event/interruptionEnded(shouldResume:)``, and the app decides.
    public var automaticallyResumesAfterInterruption: Bool {
        get { state.withLock { $0.resumesAfterInterruption } }
        set {
            applyToPlayers({ $0.resumesAfterInterruption = newValue }) { $0.automaticallyResumesAfterInterruption = newValue }
        }
    }

    static func status(of s: State) -> TimeControlStatus {
        // An item left to open (``QueuePlayer/load(lazily:_:)``) plays as soon as it is open.
        guard s.player != nil || s.pending != nil, s.wantsToPlay, !s.suspended else { return .paused }
        return s.starved ? .waitingToPlayAtSpecifiedRate(.toMinimizeStalls) : .playing
    }

    /// Reports a change of ``timeControlStatus`` (called after every change of the queue).
    func reportTimeControlStatus() {
        let changed = state.withLock { s -> TimeControlStatus? in
            let now = QueuePlayer.status(of: s)
            guard now != s.reportedStatus else { return nil }
            s.reportedStatus = now
            return now
        }
        if let changed { continuation.yield(.timeControlStatusChanged(changed)) }
    }

    /// The decoder's supply of the current item (tests stand in for a stalling stream).
    var currentSupply: DataSupply? { state.withLock { $0.player }?.voice.supply }
}
