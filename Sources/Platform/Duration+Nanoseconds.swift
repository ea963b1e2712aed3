extension Duration {
    /// Whole nanoseconds, 0 for a negative duration: what a timer's deadline or a
    /// `dispatch_time` offset takes.
    package var wholeNanoseconds: UInt64 {
        UInt64(max(0, components.seconds)) * 1_000_000_000 + UInt64(max(0, components.attoseconds / 1_000_000_000))
    }
}
