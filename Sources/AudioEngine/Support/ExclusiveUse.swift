import Synchronization

/// Checks the contract of a type that is `@unchecked Sendable` because it is used by one
/// thread at a time, not by one thread for good: it may be handed from thread to thread
/// (an `AudioFile` opened on the caller's thread and read on the reader thread), but two
/// threads must never be inside it at once. Each guarded call enters and leaves; a second
/// thread entering while the first is inside stops the process with the type's name,
/// instead of corrupting a decoder's state.
///
/// One atomic exchange per call: no lock, no allocation, safe on the reader thread.
package struct ExclusiveUse: ~Copyable, Sendable {
    private let inside = Atomic<Bool>(false)
    private let owner: StaticString

    package init(_ owner: StaticString) { self.owner = owner }

    /// Runs `body` as the only thread inside.
    @inline(__always)
    package func run<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let (exchanged, _) = inside.compareExchange(expected: false, desired: true, ordering: .acquiring)
        precondition(exchanged, "\(owner) used by two threads at once (it is used by one thread at a time)")
        defer { inside.store(false, ordering: .releasing) }
        return try body()
    }
}
