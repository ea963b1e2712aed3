import Dispatch
import Synchronization

/// Whether a source's data arrives as fast as it plays: the decoder's side of a player's
/// "waiting to play" state.
///
/// A decoder that reads from somewhere slower than the disk (an HTTP stream) says
/// ``starved()`` when it has nothing to give and must wait for the network, and
/// ``refilled()`` when data flows again. Both may be called from any thread (the engine's
/// reader thread among them), as often as convenient: they never block, and only a change
/// wakes the observer, on a serial queue shared by all supplies, with the state current
/// then (so it may see the same state twice after a quick starve and refill). The render
/// thread never calls them.
///
/// Every ``AudioFile`` has one (``AudioFile/supply``); a player's queue shows it as
/// `QueuePlayer.TimeControlStatus.waitingToPlayAtSpecifiedRate(.toMinimizeStalls)`.
package final class DataSupply: Sendable {
    private let starvedFlag = Atomic<Bool>(false)
    private let observer = Mutex<(@Sendable (Bool) -> Void)?>(nil)
    /// One queue for every supply: observers are told in order, away from the decoder.
    private static let queue = DispatchQueue(label: "earshot.data-supply", qos: .userInitiated)

    package init() {}

    /// Whether the decoder said it is starved and has not said it is refilled since.
    package var isStarved: Bool { starvedFlag.load(ordering: .acquiring) }

    /// The decoder has no data to give now (a stall): the player is waiting for data.
    package func starved() { set(true) }

    /// Data flows again after ``starved()``.
    package func refilled() { set(false) }

    /// Calls `handler` with the new state at each change (one observer: a new one
    /// replaces the previous).
    package func observe(_ handler: (@Sendable (Bool) -> Void)?) {
        observer.withLock { $0 = handler }
    }

    private func set(_ starved: Bool) {
        guard starvedFlag.exchange(starved, ordering: .acquiringAndReleasing) != starved else { return }
        DataSupply.queue.async { [self] in
            // The latest state, not the one of this call: a starve and refill in quick
            // succession end as "refilled" for the observer too.
            let now = starvedFlag.load(ordering: .acquiring)
            observer.withLock { $0 }?(now)
        }
    }
}

extension Voice {
    /// The supply of the voice's file, when a decoder reads it (in-memory sounds never stall).
    package var supply: DataSupply? { (file as? AudioFile)?.supply }
}
