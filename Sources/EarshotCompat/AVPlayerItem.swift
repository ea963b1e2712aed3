internal import Earshot

/// A timed resource (the asset behind a player item). Only URL assets exist here.
public class AVAsset: NSObject, @unchecked Sendable {
    override init() {}
}

/// A file or HTTP stream to play, by URL.
public final class AVURLAsset: AVAsset, @unchecked Sendable {
    /// The asset's URL.
    public let url: URL

    /// An asset for `url`.
    public init(url: URL) {
        self.url = url
    }

    /// An asset for `url`; the options are ignored.
    public convenience init(url: URL, options: [String: Any]?) {
        self.init(url: url)
    }
}

/// An item a player plays: a URL, with the position and duration the player knows.
///
/// `@unchecked Sendable`: its mutable state (the queue item it became, its status) lives
/// under a lock.
public final class AVPlayerItem: NSObject, @unchecked Sendable {
    /// Whether the item can play.
    public enum Status: Int, Sendable {
        /// Not yet in a player.
        case unknown = 0
        /// In a player, opened.
        case readyToPlay = 1
        /// Could not be opened (``error`` says why).
        case failed = 2
    }

    /// The item played to its end. Posted with the item as `object`, from the main queue.
    public static let didPlayToEndTimeNotification = Notification.Name("AVPlayerItemDidPlayToEndTimeNotification")
    /// The item failed before its end. Posted with the item as `object`, from the main queue.
    public static let failedToPlayToEndTimeNotification = Notification.Name("AVPlayerItemFailedToPlayToEndTimeNotification")

    /// The item's asset.
    public let asset: AVAsset
    let url: URL
    private let state = Locked<(item: QueuePlayer.Item?, player: WeakPlayer, status: Status, error: (any Error)?)>(
        (nil, WeakPlayer(), .unknown, nil))

    struct WeakPlayer { weak var player: AVPlayer? }

    /// An item for `url`.
    public convenience init(url: URL) {
        self.init(asset: AVURLAsset(url: url))
    }

    /// An item for `asset` (a URL asset).
    public init(asset: AVAsset) {
        self.asset = asset
        url = (asset as? AVURLAsset)?.url ?? URL(fileURLWithPath: "/dev/null")
    }

    /// Whether the item can play.
    public var status: Status { state.withLock { $0.status } }
    /// Why the item failed, if it did.
    public var error: (any Error)? { state.withLock { $0.error } }

    /// The item's length (`indefinite` until a player has opened it, and for a stream).
    public var duration: CMTime {
        guard let item = state.withLock({ $0.item }), item.duration > 0, item.duration.isFinite else { return .indefinite }
        return CMTime(seconds: item.duration, preferredTimescale: 600)
    }

    /// The position in the item: the player's while it is the current item, else zero.
    public func currentTime() -> CMTime {
        guard let player = state.withLock({ $0.player.player }), player.currentItem === self else { return .zero }
        return player.currentTime()
    }

    // MARK: The player's bookkeeping

    /// The queue item this item became in `player`.
    var queueItem: QueuePlayer.Item? { state.withLock { $0.item } }

    func attach(_ item: QueuePlayer.Item, to player: AVPlayer) {
        state.withLock { $0 = (item, WeakPlayer(player: player), .readyToPlay, nil) }
    }

    func fail(_ error: any Error) {
        state.withLock { s in
            s.status = .failed
            s.error = error
        }
    }

    func detach() {
        state.withLock { s in
            s.item = nil
            s.player = WeakPlayer()
        }
    }
}

extension Notification.Name {
    /// ``AVPlayerItem/didPlayToEndTimeNotification`` by its older name.
    public static let AVPlayerItemDidPlayToEndTime = AVPlayerItem.didPlayToEndTimeNotification
    /// ``AVPlayerItem/failedToPlayToEndTimeNotification`` by its older name.
    public static let AVPlayerItemFailedToPlayToEndTime = AVPlayerItem.failedToPlayToEndTimeNotification
}
