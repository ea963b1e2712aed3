import Dispatch
import Platform
import Synchronization

/// The thread that opens the items a queue's remote `Next` and `Previous` moved it to
/// (`QueuePlayer.load(lazily:_:)`): started at the first request, ended with the queue.
///
/// Requests made while it works come to one more run, which opens whatever is current
/// then: the items a burst of moves passed over in the meantime are never opened. It runs
/// 5 nice steps below the process, as the MPRIS command thread that made the moves does, so
/// that the bus thread is scheduled before it (a pooled dispatch thread cannot be lowered:
/// see `CommandThread`).
final class QueueOpener: Sendable {
    private final class Storage: Sendable {
        struct Flags {
            /// A run was asked for since the last one started.
            var requested = false
            /// The thread was started.
            var started = false
            /// The queue is gone: the thread ends.
            var ended = false
        }
        let flags = Mutex(Flags())
        /// Signalled once per request that set `requested`, and once at the end.
        let wake = DispatchSemaphore(value: 0)
        /// What a run does (open the queue's pending item); holds the queue weakly.
        let body = Mutex<(@Sendable () -> Void)?>(nil)
    }
    private let storage = Storage()

    /// What each run does; set once, by the queue that owns the opener.
    var body: (@Sendable () -> Void)? {
        get { storage.body.withLock { $0 } }
        set { storage.body.withLock { $0 = newValue } }
    }

    /// Asks for a run of ``body`` after every move made so far.
    func request() {
        let (signal, start) = storage.flags.withLock { f -> (Bool, Bool) in
            guard !f.requested, !f.ended else { return (false, false) }
            f.requested = true
            defer { f.started = true }
            return (true, !f.started)
        }
        if start {
            startThread(name: "earshot-queue-open") { [storage] in
                lowerCurrentThreadPriority(by: 5)
                while true {
                    storage.wake.wait()
                    let ended = storage.flags.withLock { f -> Bool in
                        f.requested = false
                        return f.ended
                    }
                    if ended { return }
                    storage.body.withLock { $0 }?()
                }
            }
        }
        if signal { storage.wake.signal() }
    }

    /// Ends the thread once its current run (if any) is over.
    deinit {
        storage.flags.withLock { $0.ended = true }
        storage.wake.signal()
    }
}
