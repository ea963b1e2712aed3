import Synchronization

/// Starved and refilled: whether a voice's source keeps up with playback.
///
/// A file on disk always does. A ``NetworkStream`` may not: when the reader needs frames and the
/// stream has none buffered (a stalled or slow server, or right after a seek), the voice is
/// *starved*; once the stream has refilled the voice's ring to half (0.25 s) it is *refilled*.
/// While starved, what is left in the ring plays out, then the voice is silent and its time
/// stands still; it resumes by itself when frames come.
///
/// Contract of the handler: called on the engine's event thread (never the render or reader
/// thread, never a bus thread), with the new state, only when it differs from the last one
/// reported (true = starved, false = refilled); quick changes may be coalesced into the last.
/// The end of a stream clears starvation (false is reported if true was). Meant for the
/// player's playback state (`waitingToPlay` while starved).
extension Voice {
    /// Sets (or, with nil, removes) the starved/refilled handler.
    package func setSupplyHandler(_ handler: (@Sendable (_ starved: Bool) -> Void)?) {
        onSupplyChange.withLock { $0 = handler }
    }

    /// Whether the source has run dry and not yet refilled (as last recorded by the reader).
    package var isStarved: Bool { supplyStarved.load(ordering: .acquiring) }
}
