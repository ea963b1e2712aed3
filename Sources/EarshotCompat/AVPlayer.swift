internal import Earshot

/// The `userInfo` key of a ``AVPlayerItem/failedToPlayToEndTimeNotification``'s error.
public let AVPlayerItemFailedToPlayToEndTimeErrorKey = "AVPlayerItemFailedToPlayToEndTimeErrorKey"

/// Plays items one after another, with `AVPlayer`'s names over Earshot's `QueuePlayer`
/// (an `AVPlayer` is a queue of at most one item the app gives; ``AVQueuePlayer`` has the
/// queue's members).
///
/// As `AVPlayer` does on iOS, it pauses when the session is interrupted and does not resume
/// by itself: the app plays again on the interruption's end with `shouldResume`. There is
/// no key-value observing: ``timeControlStatus`` and ``rate`` are read, not observed; the
/// periodic and boundary time observers are called (while playing) as on iOS. Items
/// that cannot be opened get the `failed` status and are left out of the queue.
///
/// `@unchecked Sendable`: its mutable state (the items it made, its time observers) lives
/// under locks; the Earshot queue is `Sendable`.
public class AVPlayer: NSObject, @unchecked Sendable {
    /// What the player does when an item ends, with Apple's raw values.
    public enum ActionAtItemEnd: Int, Sendable {
        /// Go on to the next item (an ``AVQueuePlayer``'s default).
        case advance = 0
        /// Pause at the item's end.
        case pause = 1
        /// Do nothing: the item stays current.
        case none = 2
    }

    /// Whether the player plays, is paused, or waits, with Apple's raw values.
    public enum TimeControlStatus: Int, Sendable {
        /// Paused.
        case paused = 0
        /// Asked to play, waiting (see ``reasonForWaitingToPlay``).
        case waitingToPlayAtSpecifiedRate = 1
        /// Playing.
        case playing = 2
    }

    /// Why a player waits to play, with Apple's raw values.
    public struct WaitingReason: RawRepresentable, Hashable, Sendable {
        /// The reason's name, as iOS spells it.
        public let rawValue: String
        /// A reason from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The data does not arrive as fast as it plays (a network stream stalls).
        public static let toMinimizeStalls = WaitingReason(rawValue: "AVPlayerWaitingToMinimizeStallsReason")
        /// The player measures the buffering rate (never, on Linux).
        public static let evaluatingBufferingRate = WaitingReason(rawValue: "AVPlayerWaitingWhileEvaluatingBufferingRateReason")
        /// There is no item to play (never reported: an empty player reads `paused`).
        public static let noItemToPlay = WaitingReason(rawValue: "AVPlayerWaitingWithNoItemToPlayReason")
    }

    let queue: QueuePlayer
    /// The compat items, by the queue item they became.
    private let itemsByID = Locked<[UInt64: AVPlayerItem]>([:])
    private let stalling = Locked(true)

    /// A player with no item.
    public override convenience init() {
        self.init(startingWith: [])
    }

    /// A player of `url`.
    public convenience init(url: URL) {
        self.init(startingWith: [AVPlayerItem(url: url)])
    }

    /// A player of `item`, or of nothing.
    public convenience init(playerItem item: AVPlayerItem?) {
        self.init(startingWith: item.map { [$0] } ?? [])
    }

    init(startingWith items: [AVPlayerItem]) {
        // A queue of no file cannot fail to open one.
        queue = try! QueuePlayer(urls: [])
        super.init()
        queue.automaticallyResumesAfterInterruption = false
        queue.actionAtItemEnd = .pause
        for item in items { append(item, after: nil) }
        let events = queue.events
        Task.detached { [weak self] in
            for await event in events {
                guard let self else { return }
                self.handle(event)
            }
        }
    }

    // MARK: Transport

    /// A seek made before the current item was opened (Earshot's queue opens it at its
    /// first play and keeps no position before): made again once it plays.
    let pendingSeek = Locked<Double?>(nil)

    /// Plays (from a position sought before, if any).
    public func play() {
        queue.play()
        if let position = pendingSeek.withLock({ p in defer { p = nil }; return p }) { queue.currentTime = position }
    }
    /// Pauses.
    public func pause() { queue.pause() }

    /// The rate: 0 while paused, else the playback rate (0.5…2, the pitch kept). Setting 0
    /// pauses; another rate plays at it.
    public var rate: Float {
        get { queue.isPlaying ? queue.rate : 0 }
        set {
            if newValue == 0 {
                queue.pause()
            } else {
                queue.rate = newValue
                queue.play()
            }
        }
    }

    /// 0…1.
    public var volume: Float {
        get { queue.volume }
        set { queue.volume = newValue }
    }

    /// Whether the player plays, is paused, or waits.
    public var timeControlStatus: TimeControlStatus {
        switch queue.timeControlStatus {
        case .paused: .paused
        case .waitingToPlayAtSpecifiedRate: .waitingToPlayAtSpecifiedRate
        case .playing: .playing
        }
    }

    /// Why the player waits, when it does.
    public var reasonForWaitingToPlay: WaitingReason? {
        queue.reasonForWaitingToPlay.map { _ in .toMinimizeStalls }
    }

    /// Whether the player waits for data rather than stall (kept; Earshot's queue always waits).
    public var automaticallyWaitsToMinimizeStalling: Bool {
        get { stalling.withLock { $0 } }
        set { stalling.withLock { $0 = newValue } }
    }

    /// What the player does when an item ends (`pause` for an `AVPlayer`, `advance` for an
    /// ``AVQueuePlayer``, as on iOS).
    public var actionAtItemEnd: ActionAtItemEnd {
        get {
            switch queue.actionAtItemEnd {
            case .advance: .advance
            case .pause: .pause
            case .none: .none
            }
        }
        set {
            queue.actionAtItemEnd = switch newValue {
            case .advance: .advance
            case .pause: .pause
            case .none: .none
            }
        }
    }

    // MARK: Items and time

    /// The item playing or to play.
    public var currentItem: AVPlayerItem? { queue.currentItem.map(compatItem) }

    /// Replaces the current item with `item` (nil: removes it); the items after it stay.
    public func replaceCurrentItem(with item: AVPlayerItem?) {
        pendingSeek.withLock { $0 = nil }
        let current = queue.currentItem
        if let item { append(item, after: current) }
        if let current { remove(queueItem: current) }
    }

    /// The position in the current item.
    public func currentTime() -> CMTime {
        CMTime(seconds: pendingSeek.withLock { $0 } ?? queue.currentTime, preferredTimescale: 600)
    }

    /// Moves to `time` in the current item. Before the item has first played, the position
    /// is kept and taken when it plays (Earshot's queue opens an item at its first play: its
    /// first frames may be heard before the seek lands).
    public func seek(to time: CMTime) {
        guard time.isNumeric else { return }
        let position = max(time.seconds, 0)
        queue.currentTime = position
        let missed = queue.currentItem != nil && abs(queue.currentTime - position) > 0.001
        pendingSeek.withLock { $0 = missed ? position : nil }
    }

    /// Moves to `time`; the tolerances are ignored (Earshot seeks to the frame).
    public func seek(to time: CMTime, toleranceBefore: CMTime, toleranceAfter: CMTime) { seek(to: time) }

    /// Moves to `time`, then calls `completionHandler` with `true` on the main queue.
    public func seek(to time: CMTime, completionHandler: @escaping (Bool) -> Void) {
        seek(to: time)
        let handler = Unchecked(completionHandler)
        onMainQueue { handler.value(true) }
    }

    // MARK: Time observers

    /// Calls `block` every `interval` while the player plays, on `queue` (the main queue if
    /// nil), with the current time.
    ///
    /// - Returns: a token for ``removeTimeObserver(_:)``; the observer lasts until then.
    public func addPeriodicTimeObserver(forInterval interval: CMTime, queue: DispatchQueue?,
                                        using block: @escaping (CMTime) -> Void) -> Any {
        let period = interval.isNumeric ? max(interval.seconds, 0.01) : 1
        let block = Unchecked(block)
        return TimeObserver(period: period, queue: queue ?? .main) { [weak self] _ in
            guard let self, self.timeControlStatus == .playing else { return nil }
            let now = self.currentTime()
            return { block.value(now) }
        }
    }

    /// Calls `block` on `queue` (the main queue if nil) when playback crosses one of
    /// `times`. iOS takes the times boxed in `NSValue`s (`NSValue(time:)`), which need Core
    /// Media's `NSValue` extension; here they are `CMTime`s.
    ///
    /// - Returns: a token for ``removeTimeObserver(_:)``; the observer lasts until then.
    public func addBoundaryTimeObserver(forTimes times: [CMTime], queue: DispatchQueue?,
                                        using block: @escaping () -> Void) -> Any {
        let boundaries = times.filter(\.isNumeric).map(\.seconds)
        let block = Unchecked(block)
        let last = Locked<Double?>(nil)
        return TimeObserver(period: 0.02, queue: queue ?? .main) { [weak self] _ in
            guard let self else { return nil }
            let now = self.queue.currentTime
            let playing = self.timeControlStatus == .playing
            let before = last.withLock { l -> Double? in
                defer { l = now }
                return l
            }
            guard playing, let before, now > before else { return nil }
            guard boundaries.contains(where: { $0 > before && $0 <= now }) else { return nil }
            return { block.value() }
        }
    }

    /// Removes a time observer (a token the `add…TimeObserver` methods returned).
    public func removeTimeObserver(_ observer: Any) {
        (observer as? TimeObserver)?.cancel()
    }

    // MARK: Bookkeeping

    /// Inserts `item` after `after` (at the end if nil); an item that cannot be opened fails.
    func append(_ item: AVPlayerItem, after: QueuePlayer.Item?) {
        do {
            let queued = try queue.insert(item.url, after: after ?? queue.items.last)
            itemsByID.withLock { $0[queued.id] = item }
            item.attach(queued, to: self)
        } catch {
            item.fail(error)
        }
    }

    func remove(queueItem: QueuePlayer.Item) {
        queue.remove(queueItem)
        itemsByID.withLock { $0.removeValue(forKey: queueItem.id) }?.detach()
    }

    /// The compat item for a queue item (made for one the app did not add: MPRIS's `AddTrack`).
    func compatItem(_ queued: QueuePlayer.Item) -> AVPlayerItem {
        if let item = itemsByID.withLock({ $0[queued.id] }) { return item }
        let item = AVPlayerItem(url: queued.url)
        item.attach(queued, to: self)
        itemsByID.withLock { $0[queued.id] = item }
        return item
    }

    private func handle(_ event: QueuePlayer.Event) {
        switch event {
        case .itemDidPlayToEnd(let queued):
            let item = compatItem(queued)
            postFromMainQueue { NotificationCenter.default.post(name: AVPlayerItem.didPlayToEndTimeNotification, object: item) }
        case .itemFailed(let queued, let message), .itemEndedEarly(let queued, let message):
            let item = compatItem(queued)
            let error = NSError(domain: "EarshotCompat.AVPlayerItem", code: -11800, userInfo: [NSLocalizedDescriptionKey: message])
            item.fail(error)
            postFromMainQueue {
                NotificationCenter.default.post(name: AVPlayerItem.failedToPlayToEndTimeNotification, object: item,
                                                userInfo: [AVPlayerItemFailedToPlayToEndTimeErrorKey: error])
            }
        default:
            break
        }
    }
}

/// A timer calling an observer's block while it lasts. `@unchecked Sendable`: its timer is
/// set once and cancelled under the dispatch source's own rules.
final class TimeObserver: NSObject, @unchecked Sendable {
    private let timer: DispatchSourceTimer

    /// Every `period` seconds, asks `tick` for a call to make and makes it on `queue`.
    init(period: Double, queue: DispatchQueue, tick: @escaping @Sendable (Double) -> (() -> Void)?) {
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "EarshotCompat.AVPlayer.timeObserver"))
        super.init()
        let target = queue
        timer.setEventHandler {
            guard let call = tick(period) else { return }
            let work = Unchecked(call)
            target.async { work.value() }
        }
        timer.schedule(deadline: .now() + period, repeating: period)
        timer.resume()
    }

    func cancel() { timer.cancel() }
    deinit { timer.cancel() }
}

/// A queue of items, with `AVQueuePlayer`'s names over Earshot's `QueuePlayer`: gapless,
/// and published on MPRIS as a `TrackList` when the app publishes.
public final class AVQueuePlayer: AVPlayer, @unchecked Sendable {
    /// A queue of `items`, advancing at each item's end.
    public convenience init(items: [AVPlayerItem]) {
        self.init(startingWith: items)
        actionAtItemEnd = .advance
    }

    /// The items from the current one on, as on iOS (the played ones are not listed).
    public func items() -> [AVPlayerItem] {
        let all = queue.items
        let start = queue.currentIndex ?? all.count
        return all[min(start, all.count)...].map(compatItem)
    }

    /// Ends the current item and plays the next.
    public func advanceToNextItem() {
        pendingSeek.withLock { $0 = nil }
        _ = queue.advanceToNextItem()
    }

    /// Whether `item` can be inserted (it is not in a player yet).
    public func canInsert(_ item: AVPlayerItem, after afterItem: AVPlayerItem?) -> Bool { item.queueItem == nil }

    /// Inserts `item` after `afterItem`, or at the end if nil.
    public func insert(_ item: AVPlayerItem, after afterItem: AVPlayerItem?) {
        append(item, after: afterItem?.queueItem)
    }

    /// Removes `item` from the queue.
    public func remove(_ item: AVPlayerItem) {
        if item === currentItem { pendingSeek.withLock { $0 = nil } }
        if let queued = item.queueItem { remove(queueItem: queued) }
    }

    /// Removes every item.
    public func removeAllItems() {
        pendingSeek.withLock { $0 = nil }
        for item in queue.items { remove(queueItem: item) }
    }
}
