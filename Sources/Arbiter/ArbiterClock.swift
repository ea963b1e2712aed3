package import DBus
import Platform

/// The time and the timers of an ``Arbiter``: the system's monotonic clock with timers on
/// the bus thread (``SystemArbiterClock``), or a test's clock that moves only when told, so
/// that a test of the silence timeout or the re-registration window advances it instead
/// of sleeping.
///
/// The arbiter reads ``now()`` for its sound ticks and windows, and sets every timer of
/// its own through ``schedule(after:on:_:)``. A timer's work must run on `connection`'s bus
/// thread, where the arbiter changes its state.
package protocol ArbiterClock: Sendable {
    /// Monotonic nanoseconds.
    func now() -> UInt64
    /// Runs `work` on `connection`'s bus thread once `delay` has passed on this clock;
    /// returns a token for ``cancel(_:on:)``.
    func schedule(after delay: Duration, on connection: DBusConnection, _ work: @escaping @Sendable () -> Void) -> UInt64
    /// Cancels a timer of ``schedule(after:on:_:)`` that has not run yet.
    func cancel(_ token: UInt64, on connection: DBusConnection)
}

/// The system's monotonic clock; timers are the bus loop's.
package struct SystemArbiterClock: ArbiterClock {
    package init() {}

    package func now() -> UInt64 { MonotonicClock.nanoseconds() }

    package func schedule(after delay: Duration, on connection: DBusConnection, _ work: @escaping @Sendable () -> Void) -> UInt64 {
        connection.schedule(after: delay, work)
    }

    package func cancel(_ token: UInt64, on connection: DBusConnection) {
        connection.cancelScheduled(token)
    }
}
