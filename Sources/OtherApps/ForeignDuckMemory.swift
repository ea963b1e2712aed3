/// The volumes the arbiter set on other apps' streams, by the sound server's restore group,
/// so that a stream the server starts at one of them is known for what it is.
///
/// PulseAudio's module-stream-restore and WirePlumber's restore-stream (under PipeWire)
/// remember the volume last set on a stream of a group (``group(of:)``) and give it to the
/// group's next stream. While the arbiter ducks an app, that is a ducked volume: the app's
/// new stream starts lowered, and its own volume, the one to duck from and to restore, is
/// the volume the group had before the duck. ``inherited(by:in:)`` tells such a stream
/// from one that brings a volume of its own.
///
/// The group, not the process: the server keys its memory by the group alone, so two
/// processes of one app name share it (two `paplay --client-name=radio`), and two streams
/// of one process with different roles do not.
package struct ForeignDuckMemory: Sendable, Hashable {
    /// How far (in volume units, per channel) a stream's volume may be from a volume the
    /// arbiter set and still be that volume: the server may keep it in another form
    /// (PipeWire keeps floats) and give it back rounded.
    package static let tolerance: UInt32 = 2
    /// At most this many groups are remembered (the least recently remembered go first).
    package static let capacity = 64

    /// A stream that came in at a volume the arbiter set on a stream of its group.
    package struct Inheritance: Sendable, Hashable {
        /// The group's ladder (its volume before, then the ramp down), in the stream's
        /// channels, with the stream's volume at ``rung``.
        package let ladder: [[UInt32]]
        /// The rung the stream is on (at least 1: below the volume before).
        package let rung: Int

        /// A stream on `rung` of `ladder`.
        package init(ladder: [[UInt32]], rung: Int) {
            self.ladder = ladder
            self.rung = rung
        }
    }

    /// The ladders set on each group's streams, the latest first.
    package private(set) var ladders: [String: [[[UInt32]]]] = [:]
    /// The groups, least recently remembered first.
    private var order: [String] = []

    /// A memory that holds nothing.
    package init() {}

    /// The properties ``group(of:)`` looks at, in its order.
    package static let groupKeys = ["media.role", "application.id", "application.name", "media.name", "node.name"]

    /// The key under which the sound server remembers a playback stream's volume, from the
    /// stream's properties: the first of `media.role`, `application.id`, `application.name`,
    /// `media.name` that it has (PulseAudio's `pa_proplist_get_stream_group`; WirePlumber's
    /// restore-stream goes on to `node.name`), or `nil` when it has none.
    package static func group(of properties: [String: String]) -> String? {
        for key in groupKeys {
            if let value = properties[key], !value.isEmpty { return "\(key):\(value)" }
        }
        return nil
    }

    /// Notes a ladder the arbiter is about to set on a stream of `group`.
    package mutating func remember(_ ladder: [[UInt32]], for group: String) {
        guard ladder.count > 1 else { return }
        var known = ladders[group] ?? []
        known.removeAll { $0 == ladder }
        known.insert(ladder, at: 0)
        ladders[group] = known
        order.removeAll { $0 == group }
        order.append(group)
        while order.count > Self.capacity { ladders[order.removeFirst()] = nil }
    }

    /// Forgets a group: the server no longer holds a volume the arbiter set for it.
    package mutating func forget(_ group: String) {
        ladders[group] = nil
        order.removeAll { $0 == group }
    }

    /// Whether anything is remembered for `group`.
    package func remembers(_ group: String) -> Bool { ladders[group] != nil }

    /// A new stream of `group` that has `volume`: if that is (within ``tolerance``) a
    /// volume below the first that the arbiter set on a stream of the group, the ladder of
    /// that duck in the stream's channels and the rung it is on; `nil` when the volume is
    /// the stream's own. Of several matches, the nearest wins, then the latest ladder, then
    /// the lowest rung.
    package func inherited(by volume: [UInt32], in group: String) -> Inheritance? {
        guard !volume.isEmpty, let known = ladders[group] else { return nil }
        var best: (distance: UInt32, ladder: [[UInt32]], rung: Int)?
        for ladder in known {
            guard let fitted = Self.fitted(ladder, channels: volume.count) else { continue }
            for rung in fitted.indices.dropFirst() where fitted[rung] != fitted[0] {
                let distance = zip(fitted[rung], volume).map { $0 > $1 ? $0 - $1 : $1 - $0 }.max() ?? 0
                if distance <= Self.tolerance && (best == nil || distance < best!.distance) {
                    best = (distance, fitted, rung)
                }
            }
        }
        guard let (_, ladder, rung) = best else { return nil }
        let matched = ladder[rung]
        return Inheritance(ladder: ladder.map { $0 == matched ? volume : $0 }, rung: rung)
    }

    /// `ladder` in `channels` channels: as it is, or each rung's one volume repeated when
    /// every rung is one volume on all its channels (the server maps a remembered volume
    /// to the new stream's channels); `nil` otherwise.
    static func fitted(_ ladder: [[UInt32]], channels: Int) -> [[UInt32]]? {
        guard let first = ladder.first else { return nil }
        if first.count == channels { return ladder.allSatisfy { $0.count == channels } ? ladder : nil }
        guard ladder.allSatisfy({ rung in rung.allSatisfy { $0 == rung.first } && !rung.isEmpty }) else { return nil }
        return ladder.map { Array(repeating: $0[0], count: channels) }
    }
}
