#if canImport(Glibc)
import Glibc
#endif

/// `CLOCK_MONOTONIC`: the one clock for deadlines, timers, positions and measurements
/// across the package (it does not jump when the wall clock is set, and it is the clock
/// Python's `time.monotonic()` and libpulse's timing info agree with).
package enum MonotonicClock {
    /// Nanoseconds since an unspecified start (boot, on Linux).
    @inline(__always)
    package static func nanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Seconds since the same start, as a `Double`.
    @inline(__always)
    package static func seconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
