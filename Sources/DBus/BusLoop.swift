internal import CDBus
import Synchronization
import Platform
#if canImport(Glibc)
import Glibc
#endif


/// Owns one libdbus connection and the thread that drives it.
///
/// Invariant: after ``start()``, libdbus is called for this connection only on the bus
/// thread. Other threads hand work over with ``perform(_:)``, which queues a job and
/// wakes the loop through an eventfd. The loop is a plain `poll()` over the watches
/// libdbus asks for plus the eventfd, because a thread blocked in
/// `dbus_connection_read_write_dispatch` does not notice sends queued by other threads.
/// That invariant is what makes the `@unchecked Sendable` sound.
final class BusLoop: @unchecked Sendable {
    let connection: OpaquePointer
    let uniqueName: String
    private let wakeFD: Int32

    // Bus-thread state (touched by libdbus callbacks, which run on the bus thread).
    private var watches: [OpaquePointer] = []
    private var timeouts: [(timeout: OpaquePointer, deadline: UInt64)] = []
    /// The bus thread's id, 0 until the loop runs. Written once, on the bus thread; read
    /// from any thread by `isOnBusThread`, hence atomic.
    private let threadID = Atomic<UInt>(0)

    // Cross-thread state.
    private struct Shared {
        var jobs: [@Sendable () -> Void] = []
        var timers: [UInt64: (deadline: UInt64, work: @Sendable () -> Void)] = [:]
        var nextTimerID: UInt64 = 1
        var stopRequested = false
        var closed = false
    }
    private let shared = Mutex(Shared())

    /// Incoming messages go here, on the bus thread. Set before ``start()``.
    nonisolated(unsafe) var messageHandler: (DBusMessage) -> Bool = { _ in false }
    /// Called on the bus thread once when the connection is lost or closed.
    nonisolated(unsafe) var disconnectHandler: () -> Void = {}

    init(address: String?) throws(DBusError) {
        dbus_threads_init_default()
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }

        let opened: OpaquePointer?
        if let address {
            opened = address.withCString { dbus_connection_open_private($0, &error) }
            if let opened, dbus_bus_register(opened, &error) == 0 {
                dbus_connection_close(opened)
                dbus_connection_unref(opened)
                throw BusLoop.translate(&error, "cannot register with the bus at \(address)")
            }
        } else {
            opened = dbus_bus_get_private(DBUS_BUS_SESSION, &error)
        }
        guard let opened else {
            throw BusLoop.translate(&error, "cannot connect to \(address ?? "the session bus")")
        }
        connection = opened
        uniqueName = dbus_bus_get_unique_name(opened).map { String(cString: $0) } ?? ""
        dbus_connection_set_exit_on_disconnect(opened, 0)

        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else {
            dbus_connection_close(opened)
            dbus_connection_unref(opened)
            throw .failed("cannot create the bus thread's wakeup eventfd: \(String(cString: strerror(errno)))")
        }
        wakeFD = fd
    }

    private static func translate(_ error: inout CDBus.DBusError, _ context: String) -> DBusError {
        let name = error.name.map { String(cString: $0) } ?? DBusError.Name.failed
        let message = error.message.map { String(cString: $0) } ?? "unknown reason"
        return DBusError(name, "\(context): \(message)")
    }

    /// Installs the libdbus callbacks and starts the bus thread.
    func start() {
        let context = { Unmanaged.passRetained(self).toOpaque() }
        let release: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
            Unmanaged<BusLoop>.fromOpaque(data!).release()
        }
        dbus_connection_set_watch_functions(
            connection,
            { watch, data in BusLoop.from(data).watches.append(watch!); return 1 },
            { watch, data in BusLoop.from(data).watches.removeAll { $0 == watch } },
            { _, _ in },  // toggles are read at each poll from dbus_watch_get_enabled
            context(), release)
        dbus_connection_set_timeout_functions(
            connection,
            { timeout, data in
                let loop = BusLoop.from(data)
                loop.timeouts.append((timeout!, BusLoop.deadline(of: timeout!)))
                return 1
            },
            { timeout, data in BusLoop.from(data).timeouts.removeAll { $0.timeout == timeout } },
            { timeout, data in
                let loop = BusLoop.from(data)
                if let i = loop.timeouts.firstIndex(where: { $0.timeout == timeout }) {
                    loop.timeouts[i].deadline = BusLoop.deadline(of: timeout!)
                }
            },
            context(), release)
        dbus_connection_set_wakeup_main_function(
            connection, { data in BusLoop.from(data).wake() }, context(), release)
        dbus_connection_add_filter(
            connection,
            { _, message, data in
                let loop = BusLoop.from(data)
                dbus_message_ref(message)
                let handled = loop.messageHandler(DBusMessage(taking: message!))
                return handled ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
            },
            context(), release)

        startThread(name: "dbus-loop") { self.run() }
    }

    private static func from(_ data: UnsafeMutableRawPointer?) -> BusLoop {
        Unmanaged<BusLoop>.fromOpaque(data!).takeUnretainedValue()
    }

    private static func deadline(of timeout: OpaquePointer) -> UInt64 {
        MonotonicClock.nanoseconds() + UInt64(max(0, dbus_timeout_get_interval(timeout))) * 1_000_000
    }

    var isOnBusThread: Bool {
        let id = threadID.load(ordering: .acquiring)
        return id != 0 && pthread_equal(pthread_t(id), pthread_self()) != 0
    }

    var isClosed: Bool { shared.withLock { $0.closed || $0.stopRequested } }

    /// Runs `job` on the bus thread: inline when already there, queued otherwise.
    /// Returns false when the loop has stopped and the job will never run.
    @discardableResult
    func perform(_ job: @escaping @Sendable () -> Void) -> Bool {
        if isOnBusThread {
            job()
            return true
        }
        let accepted = shared.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.jobs.append(job)
            return true
        }
        if accepted { wake() }
        return accepted
    }

    /// Runs `work` on the bus thread after `delay` nanoseconds; returns an id for ``cancelTimer(_:)``.
    @discardableResult
    func schedule(afterNanos delay: UInt64, _ work: @escaping @Sendable () -> Void) -> UInt64 {
        let id = shared.withLock { state -> UInt64 in
            let id = state.nextTimerID
            state.nextTimerID += 1
            state.timers[id] = (MonotonicClock.nanoseconds() + delay, work)
            return id
        }
        if !isOnBusThread { wake() }
        return id
    }

    func cancelTimer(_ id: UInt64) {
        _ = shared.withLock { $0.timers.removeValue(forKey: id) }
    }

    /// Flushes what is queued, closes the connection and ends the thread.
    func stop() {
        shared.withLock { $0.stopRequested = true }
        wake()
    }

    deinit { close(wakeFD) }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    // MARK: The loop

    private func run() {
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        var pollfds: [pollfd] = []
        var polled: [OpaquePointer] = []
        while true {
            runJobsAndTimers()
            dispatchAll()
            if shared.withLock({ $0.stopRequested }) { break }

            pollfds.removeAll(keepingCapacity: true)
            polled.removeAll(keepingCapacity: true)
            pollfds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
            for watch in watches where dbus_watch_get_enabled(watch) != 0 {
                let flags = dbus_watch_get_flags(watch)
                var events: Int16 = 0
                if flags & DBUS_WATCH_READABLE.rawValue != 0 { events |= Int16(POLLIN) }
                if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events |= Int16(POLLOUT) }
                pollfds.append(pollfd(fd: dbus_watch_get_unix_fd(watch), events: events, revents: 0))
                polled.append(watch)
            }
            let ready = poll(&pollfds, nfds_t(pollfds.count), nextPollTimeoutMillis())
            if ready < 0 && errno != EINTR { break }

            if pollfds[0].revents != 0 {
                var counter: UInt64 = 0
                _ = read(wakeFD, &counter, 8)
            }
            for (index, watch) in polled.enumerated() {
                let revents = pollfds[index + 1].revents
                guard revents != 0, watches.contains(watch) else { continue }
                var flags: UInt32 = 0
                if revents & Int16(POLLIN) != 0 { flags |= DBUS_WATCH_READABLE.rawValue }
                if revents & Int16(POLLOUT) != 0 { flags |= DBUS_WATCH_WRITABLE.rawValue }
                if revents & Int16(POLLERR) != 0 { flags |= DBUS_WATCH_ERROR.rawValue }
                if revents & Int16(POLLHUP) != 0 { flags |= DBUS_WATCH_HANGUP.rawValue }
                dbus_watch_handle(watch, flags)
            }
            let now = MonotonicClock.nanoseconds()
            for entry in timeouts where entry.deadline <= now {
                guard let i = timeouts.firstIndex(where: { $0.timeout == entry.timeout }) else { continue }
                timeouts[i].deadline = BusLoop.deadline(of: entry.timeout)
                if dbus_timeout_get_enabled(entry.timeout) != 0 { dbus_timeout_handle(entry.timeout) }
            }
        }
        shutdown()
    }

    private func dispatchAll() {
        while dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS {
            dbus_connection_dispatch(connection)
        }
    }

    private func runJobsAndTimers() {
        let jobs = shared.withLock { state -> [@Sendable () -> Void] in
            let jobs = state.jobs
            state.jobs.removeAll()
            return jobs
        }
        for job in jobs { job() }

        let now = MonotonicClock.nanoseconds()
        let due = shared.withLock { state -> [@Sendable () -> Void] in
            let ids = state.timers.filter { $0.value.deadline <= now }.sorted { $0.value.deadline < $1.value.deadline }
            return ids.compactMap { state.timers.removeValue(forKey: $0.key)?.work }
        }
        for work in due { work() }
    }

    private func nextPollTimeoutMillis() -> Int32 {
        var earliest = timeouts.filter { dbus_timeout_get_enabled($0.timeout) != 0 }.map(\.deadline).min()
        let timer = shared.withLock { state -> UInt64? in
            state.jobs.isEmpty ? state.timers.values.map(\.deadline).min() : 0
        }
        if let timer { earliest = min(earliest ?? timer, timer) }
        guard let earliest else { return -1 }
        let now = MonotonicClock.nanoseconds()
        if earliest <= now { return 0 }
        return Int32(min((earliest - now + 999_999) / 1_000_000, UInt64(Int32.max)))
    }

    private func shutdown() {
        if dbus_connection_get_is_connected(connection) != 0 {
            dbus_connection_flush(connection)
        }
        dbus_connection_close(connection)
        let leftover = shared.withLock { state -> [@Sendable () -> Void] in
            state.closed = true
            let jobs = state.jobs
            state.jobs.removeAll()
            state.timers.removeAll()
            return jobs
        }
        // Jobs still queued run once more so that they can fail their waiters.
        for job in leftover { job() }
        dispatchAll()
        disconnectHandler()
        // No thread is the bus thread from here on. glibc reuses an ended thread's
        // descriptor, and so its `pthread_t`, for the next thread it starts: left set, the id
        // made such a thread pass `isOnBusThread`, and `perform` ran its job inline on the
        // connection released below (`earshot play`'s flush after its bus went away, on a
        // task thread started since: a lock of a freed mutex, glibc's assertion in
        // `__pthread_tpp_change_priority`).
        threadID.store(0, ordering: .releasing)
        // Releases the callback contexts (each holds a reference to self).
        dbus_connection_unref(connection)
    }
}
