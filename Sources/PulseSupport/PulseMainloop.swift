internal import CPulse
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// libpulse's threaded main loop: one thread of libpulse's that runs every callback, and the
/// lock under which any other thread calls libpulse.
///
/// `@unchecked Sendable`: the loop's pointer never changes, and libpulse makes `lock`,
/// `unlock`, `wait` and `signal` safe from any thread; everything else is called on the
/// loop's thread or with its lock held, as each method says.
package final class PulseMainloop: @unchecked Sendable {
    /// The `pa_threaded_mainloop`.
    package let pointer: OpaquePointer
    /// Its `pa_mainloop_api`, for contexts and timers.
    let api: UnsafeMutablePointer<pa_mainloop_api>
    private let stopped = Atomic<Bool>(false)

    /// A main loop whose thread (once started) is called `name` (nil: libpulse's name); nil
    /// when libpulse cannot make one (out of memory).
    package init?(name: String?) {
        guard let pointer = pa_threaded_mainloop_new() else { return nil }
        guard let api = pa_threaded_mainloop_get_api(pointer) else {
            pa_threaded_mainloop_free(pointer)
            return nil
        }
        // Named before it starts: libpulse names its thread from this once the loop runs.
        if let name { pa_threaded_mainloop_set_name(pointer, name) }
        self.pointer = pointer
        self.api = api
    }

    /// Starts the loop's thread; false when the system refused it.
    package func start() -> Bool { pa_threaded_mainloop_start(pointer) >= 0 }

    /// Takes the loop's lock (not on the loop's thread, which holds it already).
    package func lock() { pa_threaded_mainloop_lock(pointer) }

    /// Lets the loop's lock go.
    package func unlock() { pa_threaded_mainloop_unlock(pointer) }

    /// With the lock held: sleeps until a callback calls ``signal()``.
    package func wait() { pa_threaded_mainloop_wait(pointer) }

    /// Wakes the threads in ``wait()``; on the loop's thread or with the lock held.
    package func signal() { pa_threaded_mainloop_signal(pointer, 0) }

    /// Runs `body` with the loop's lock held.
    package func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Whether the calling thread is the loop's own.
    package var isLoopThread: Bool { pa_threaded_mainloop_in_thread(pointer) != 0 }

    /// Stops the loop's thread and frees the loop, once (later calls do nothing). Without the
    /// lock, never on the loop's thread, after every context on it was released; a loop
    /// never started is freed alike.
    package func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        precondition(!isLoopThread, "PulseMainloop.stop on its own thread")
        pa_threaded_mainloop_stop(pointer)
        pa_threaded_mainloop_free(pointer)
    }

    /// Calls `fire` on the loop's thread after `seconds` (of the wall clock, as libpulse's
    /// timers count without a context), unless cancelled first. On the loop's thread or with
    /// the lock held.
    package func timer(after seconds: Double, _ fire: @escaping () -> Void) -> PulseTimer {
        var time = timeval()
        pa_gettimeofday(&time)
        pa_timeval_add(&time, pa_usec_t(max(0, seconds) * 1_000_000))
        return PulseTimer(api: api, at: time, fire)
    }
}

/// A one-shot timer on a ``PulseMainloop``: it fires once, on the loop's thread, unless
/// ``cancel()`` came first. It keeps itself (and what `fire` holds) until then.
///
/// `@unchecked Sendable`: touched only on the loop's thread or with its lock held.
package final class PulseTimer: @unchecked Sendable {
    private let api: UnsafeMutablePointer<pa_mainloop_api>
    private var event: OpaquePointer?
    private var fire: (() -> Void)?
    /// The reference the loop holds while the timer is pending.
    private var pending: Unmanaged<PulseTimer>?

    /// A timer at `time` of the wall clock (libpulse's timers without a context).
    convenience init(api: UnsafeMutablePointer<pa_mainloop_api>, at time: timeval, _ fire: @escaping () -> Void) {
        self.init(api: api, fire) { callback, userdata in
            var time = time
            return api.pointee.time_new(api, &time, callback, userdata)
        }
    }

    /// A timer at `usec` of libpulse's monotonic clock (`pa_rtclock_now`), made through
    /// `context`.
    convenience init(context: OpaquePointer, api: UnsafeMutablePointer<pa_mainloop_api>, at usec: pa_usec_t, _ fire: @escaping () -> Void) {
        self.init(api: api, fire) { callback, userdata in pa_context_rttime_new(context, usec, callback, userdata) }
    }

    private init(api: UnsafeMutablePointer<pa_mainloop_api>, _ fire: @escaping () -> Void,
                 make: (pa_time_event_cb_t, UnsafeMutableRawPointer) -> OpaquePointer?) {
        self.api = api
        self.fire = fire
        let pending = Unmanaged.passRetained(self)
        event = make({ _, _, _, userdata in
            Unmanaged<PulseTimer>.fromOpaque(userdata!).takeUnretainedValue().fired()
        }, pending.toOpaque())
        if event == nil { pending.release() } else { self.pending = pending }
    }

    /// Whether it can still fire.
    package var isPending: Bool { event != nil }

    /// Frees the timer without firing it (nothing if it fired already).
    package func cancel() {
        guard let event else { return }
        api.pointee.time_free(event)
        self.event = nil
        fire = nil
        pending?.release()
        pending = nil
    }

    private func fired() {
        // (The caller's reference keeps the timer until this returns.)
        let fire = self.fire
        cancel()
        fire?()
    }
}
