import DBus
import Synchronization
import Platform
#if canImport(Glibc)
import Glibc
#endif

/// The now-playing store (the `MPNowPlayingInfoCenter` analog).
///
/// Set ``nowPlayingInfo`` when the item, state, rate or position changes; between
/// updates ``currentElapsedTime`` extrapolates the position from the rate, so an app
/// need not update it continuously. An update whose position disagrees with the
/// extrapolation by more than ``discontinuityTolerance`` is a seek: observers see it as
/// a discontinuity (MPRIS sends `Seeked`).
public final class NowPlayingInfoCenter: Sendable {
    /// The process-wide center.
    public static let `default` = NowPlayingInfoCenter()

    /// How far (seconds) a new position may differ from the extrapolated one before it
    /// counts as a seek.
    public static let discontinuityTolerance = 0.1

    /// One change, as observers see it.
    public struct Change: Sendable {
        /// The info after the change; `nil` when nothing plays any more.
        public let info: NowPlayingInfo?
        /// The item changed (or appeared, or went away).
        public let itemChanged: Bool
        /// The position jumped within the same item (seek, loop, restart).
        public let discontinuity: Bool
    }

    private struct State {
        var info: NowPlayingInfo?
        /// Monotonic nanoseconds at which `info.elapsedTime` was true.
        var stamp: UInt64 = 0
        /// Counts items, for track ids of items without an app-given id.
        var itemNumber: UInt64 = 0
    }

    private let state = Mutex(State())
    private let observers = Observers<Change>()
    /// Monotonic nanoseconds: the system's clock, or a test's.
    private let now: @Sendable () -> UInt64

    /// A center on the monotonic clock.
    public convenience init() { self.init(clock: MonotonicClock.nanoseconds) }

    /// A center that reads the time from `clock` (monotonic nanoseconds), so that tests
    /// can move time instead of sleeping.
    package init(clock: @escaping @Sendable () -> UInt64) { now = clock }

    /// The current item, with `elapsedTime` as of the last update. Setting it stamps the
    /// position with the current time.
    public var nowPlayingInfo: NowPlayingInfo? {
        get { state.withLock { $0.info } }
        set { apply { $0 = newValue } }
    }

    /// Modifies the current info in place, starting from the extrapolated position, so
    /// that changing only the title or the state does not move the position.
    public func update(_ body: @Sendable (inout NowPlayingInfo?) -> Void) {
        apply(body)
    }

    /// The position now, extrapolated from the last update with the playback rate and
    /// clamped to the duration. Zero when nothing is loaded.
    public var currentElapsedTime: Double {
        let now = self.now()
        return state.withLock { NowPlayingInfoCenter.extrapolate($0, at: now) }
    }

    /// A number identifying the current item, stable while it plays.
    public var itemNumber: UInt64 { state.withLock { $0.itemNumber } }

    /// Calls `handler` after every update, on the updating thread.
    public func observe(_ handler: @escaping @Sendable (Change) -> Void) -> ObservationToken {
        observers.add(handler)
    }

    private func apply(_ body: (inout NowPlayingInfo?) -> Void) {
        let change = state.withLock { state -> Change? in
            let now = self.now()
            let old = state.info
            var rebased = old
            let predicted = NowPlayingInfoCenter.extrapolate(state, at: now)
            rebased?.elapsedTime = predicted
            var new = rebased
            body(&new)
            if var sanitized = new {
                sanitized.sanitize()
                new = sanitized
            }
            state.info = new
            state.stamp = now
            let itemChanged: Bool
            switch (old, new) {
            case (nil, nil): itemChanged = false
            case (let a?, let b?): itemChanged = !a.isSameItem(as: b)
            default: itemChanged = true
            }
            if itemChanged { state.itemNumber &+= 1 }
            guard new != rebased || itemChanged else { return nil }
            let jumped = !itemChanged && new != nil
                && abs((new?.elapsedTime ?? 0) - predicted) > NowPlayingInfoCenter.discontinuityTolerance
            return Change(info: new, itemChanged: itemChanged, discontinuity: jumped)
        }
        if let change { observers.notify(change) }
    }

    private static func extrapolate(_ state: State, at now: UInt64) -> Double {
        guard let info = state.info else { return 0 }
        var position = info.elapsedTime
        if info.playbackState == .playing, info.playbackRate > 0, now > state.stamp {
            position += Double(now - state.stamp) / 1e9 * info.playbackRate
        }
        if let duration = info.duration { position = min(position, duration) }
        return max(0, position)
    }
}

extension NowPlayingInfo {
    /// Replaces values no player can be in (NaN or negative times and rates) with safe ones.
    mutating func sanitize() {
        if !elapsedTime.isFinite || elapsedTime < 0 { elapsedTime = 0 }
        if let d = duration, !d.isFinite || d < 0 { duration = nil }
        if !playbackRate.isFinite || playbackRate < 0 { playbackRate = 0 }
        if !defaultPlaybackRate.isFinite || defaultPlaybackRate <= 0 { defaultPlaybackRate = 1 }
        if !volume.isFinite || volume < 0 { volume = 0 }
    }
}

