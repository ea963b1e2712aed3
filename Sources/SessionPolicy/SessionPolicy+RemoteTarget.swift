extension SessionPolicy {
    /// The remote-control target: among the eligible sessions
    /// (``Session/isEligibleRemoteTarget``), the one that last started producing sound
    /// (highest ``Session/lastSoundTick``, ties broken by arrival); `nil` if none has
    /// sounded. A session that vanishes or stops being eligible leaves the order, so
    /// the one that sounded before it takes over: the bus's most-recently-sounded
    /// stack (DESIGN, "The remote-control target"). Being interrupted does not remove
    /// a session from the order: a paused player keeps the media keys so play resumes
    /// it.
    func computeRemoteTarget() -> SessionID? {
        sessions.values
            .filter { $0.isEligibleRemoteTarget && $0.lastSoundTick != nil }
            .max { ($0.lastSoundTick!, $0.soundSequence) < ($1.lastSoundTick!, $1.soundSequence) }?
            .id
    }

    mutating func refreshRemoteTarget() {
        remoteTarget = computeRemoteTarget()
    }

    /// `remoteTargetChanged` when the target differs from `before`'s.
    func remoteTargetChange(since before: SessionPolicy) -> [Decision] {
        remoteTarget == before.remoteTarget ? [] : [.remoteTargetChanged(remoteTarget)]
    }
}
