/// One of another app's streams whose volume is being lowered, held low, or put back
/// (an entry of ``ForeignDuckRamp``).
package struct DuckedStream: Sendable, Hashable {
    /// What is under way for the stream.
    package enum Phase: Sendable, Hashable {
        /// Nothing: the next step may go.
        case idle
        /// Its volume before is being read (``ladder`` is empty until it comes).
        case reading
        /// A compare-and-set towards `rung` is under way.
        case setting(rung: Int)
        /// The pause between two steps of its ramp, until this tick (nanoseconds).
        case resting(until: UInt64)
    }

    /// Its process: the stream at this index belongs to it.
    package let pid: Int64
    /// Its volume before (`ladder[0]`), then the volumes of the ramp down, the last one
    /// fully ducked. Empty while its volume before is being read.
    package var ladder: [[UInt32]]
    /// The rung it has (set by the arbiter), or `nil` when unknown: an entry taken over
    /// from the state file may be on any rung.
    package var position: Int?
    /// The rung it should have: the last while ducked, 0 to restore.
    package var target = 0
    /// What is under way.
    package var phase: Phase = .idle
    /// Taken over from the state file (a previous arbiter ducked it).
    package var adopted = false
    /// The server's restore group of the stream (``PlaybackStream/group``).
    package var group: String?

    /// A stream of `pid` with `ladder`, on `position`.
    package init(pid: Int64, ladder: [[UInt32]], position: Int?, phase: Phase = .idle, adopted: Bool = false, group: String? = nil) {
        self.pid = pid
        self.ladder = ladder
        self.position = position
        self.phase = phase
        self.adopted = adopted
        self.group = group
    }

    /// Its fully ducked rung.
    package var top: Int { max(ladder.count - 1, 0) }

    /// Whether its volume is below its own now, as far as the arbiter knows (for
    /// `earshot status`).
    package var isLowered: Bool { !ladder.isEmpty && (position ?? 1) > 0 }
}
