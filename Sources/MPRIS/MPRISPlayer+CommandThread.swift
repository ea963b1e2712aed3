import Dispatch
import Synchronization
import Platform
#if canImport(Glibc)
import Glibc
#endif

/// The serial queue of an ``MPRISPlayer``'s commands: a thread of its own, below the bus
/// thread in CPU priority.
///
/// A command may open and decode files; on a small machine that work competes for the CPU
/// with the bus thread, which serves every other caller of the connection (the embedded
/// arbiter among them). The thread runs at a nice value 5 above the process's, so that
/// the bus thread is scheduled first; the commands still run as soon as a core is free.
/// (A pooled dispatch thread cannot be lowered like this: a thread's nice value cannot be
/// raised back without privileges, and the pool reuses its threads for other work.)
final class CommandThread: Sendable {
    /// The jobs waiting; `nil` tells the thread to end.
    private final class Storage: Sendable {
        let jobs = Mutex<[(@Sendable () -> Void)?]>([])
        let available = DispatchSemaphore(value: 0)
        /// The thread's `pthread_self`, set by the thread before its first job.
        let threadID = Atomic<UInt>(0)
    }
    private let storage = Storage()

    /// Starts the thread.
    init() {
        let storage = self.storage
        let body: @Sendable () -> Void = {
            storage.threadID.store(UInt(pthread_self()), ordering: .releasing)
            lowerCurrentThreadPriority(by: 5)
            while true {
                storage.available.wait()
                guard let job = storage.jobs.withLock({ $0.removeFirst() }) else { return }
                job()
            }
        }
        startThread(name: "mpris-commands", body)
    }

    /// Waits (at most `timeout` seconds) until the jobs queued so far have run; returns at
    /// once on the command thread itself (a job cannot wait for itself). Whether they ran.
    @discardableResult
    func waitForQueuedJobs(timeout: Double) -> Bool {
        guard storage.threadID.load(ordering: .acquiring) != UInt(pthread_self()) else { return false }
        let done = DispatchSemaphore(value: 0)
        async { done.signal() }
        return done.wait(timeout: .now() + timeout) == .success
    }

    /// Ends the thread once the jobs already queued have run.
    deinit {
        storage.jobs.withLock { $0.append(nil) }
        storage.available.signal()
    }

    /// Runs `job` after every job queued before it.
    func async(_ job: @escaping @Sendable () -> Void) {
        storage.jobs.withLock { $0.append(job) }
        storage.available.signal()
    }
}
