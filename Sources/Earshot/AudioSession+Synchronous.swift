import Dispatch
public import SessionPolicy

/// The synchronous shapes of the session's calls, as iOS code makes them: `setCategory` and
/// `setActive` that return once the arbiter has answered, callable from code that is not
/// `async` (an app's main thread, a GLib callback, an iOS port's `viewDidLoad`). In `async`
/// code the `async` overloads are chosen, and should be: they wait without holding a thread.
extension AudioSession {
    /// Sets the category, blocking until the arbiter has answered: the synchronous form of
    /// ``setCategory(_:mode:options:)-2n7tw``, with its errors and its effects.
    ///
    /// The call runs on Swift's global executor while the calling thread waits: it may be
    /// called from the main thread. Called from a task of the global executor, it holds one
    /// of that executor's threads (one per core) for a round trip on the bus while the call
    /// needs another: as many such calls at once as there are cores never return. From a
    /// task, use the `async` form.
    ///
    /// - Throws: as the `async` form.
    public func setCategory(_ category: Category, mode: Mode = .default, options: CategoryOptions = []) throws {
        try AudioSession.waitFor { try await self.setCategory(category, mode: mode, options: options) }
    }

    /// Activates or deactivates the session, blocking until the arbiter has answered: the
    /// synchronous form of ``setActive(_:options:)-4wxrc`` (see
    /// ``setCategory(_:mode:options:)-2n7tw`` for where it may be called).
    ///
    /// - Throws: as the `async` form.
    public func setActive(_ active: Bool, options: SetActiveOptions = []) throws {
        try AudioSession.waitFor { try await self.setActive(active, options: options) }
    }

    /// Runs `work` in a detached task to its end and returns its result, blocking the calling
    /// thread on a semaphore. It cannot deadlock on the work itself: the session's calls run on
    /// its path task and the bus's thread, never on the thread the caller holds.
    package static func waitFor<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
        let outcome = Outcome<T>()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                outcome.result = .success(try await work())
            } catch {
                outcome.result = .failure(error)
            }
            done.signal()
        }
        done.wait()
        return try outcome.result!.get()
    }
}

/// The result of ``AudioSession/waitFor(_:)``'s task. `@unchecked Sendable`: written once by
/// the task before it signals the semaphore, read once by the caller after its wait, which
/// the semaphore orders; nothing else touches it.
private final class Outcome<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
