extension SessionPolicy {
    /// The sessions whose ducking reaches other apps' streams: every session that is
    /// ducking (``Session/isDucking``, from its activation with `duckOthers` until its
    /// deactivation), unless the configuration keeps the policy off other apps' volume
    /// (``Configuration/ducksOthers``).
    public var foreignDuckers: Set<SessionID> {
        guard configuration.ducksOthers else { return [] }
        return Set(ids { $0.isDucking })
    }

    /// The linear gain other apps' playing streams should have now, relative to the
    /// volume they had before: ``Configuration/duckGain`` while some session ducks
    /// them (``foreignDuckers``), `nil` when they should have their own volume back.
    public var foreignStreamGain: Float? {
        foreignDuckers.isEmpty ? nil : configuration.duckGain
    }
}
