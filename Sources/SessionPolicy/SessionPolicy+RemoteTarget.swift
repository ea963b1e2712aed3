extension SessionPolicy {
    /// The rule of eligibility for the remote-control target, in one place: category
    /// `playback` or `playAndRecord`, no mixing option (not mixable), and at least one
    /// remote command enabled. The arbiter applies it to its sessions
    /// (``Session/isEligibleRemoteTarget``); a process asks it about its own session
    /// before claiming its MPRIS name, so both always agree.
    public static func isEligibleRemoteTarget(category: Category, options: CategoryOptions, hasEnabledRemoteCommand: Bool) -> Bool {
        category.acceptsMixingOptions && options.isDisjoint(with: CategoryOptions.mixingBits) && hasEnabledRemoteCommand
    }

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
        target = computeTarget()
    }

    /// The target across all apps: of the Earshot target and the other apps' processes
    /// that have a player, the one that last started sounding. Another app counts only by
    /// its sound (the sound server's word), never by what its player says, so a silent
    /// player that toggles its status or metadata never takes the keys.
    func computeTarget() -> RemoteTarget? {
        var best: (tick: UInt64, sequence: UInt64, target: RemoteTarget)?
        if let id = remoteTarget, let session = sessions[id], let tick = session.lastSoundTick {
            best = (tick, session.soundSequence, .session(id))
        }
        for sound in foreignSounds.values {
            guard let tick = sound.lastSoundTick, let player = foreignPlayer(of: sound.pid) else { continue }
            if best.map({ ($0.tick, $0.sequence) < (tick, sound.soundSequence) }) ?? true {
                best = (tick, sound.soundSequence, .foreign(player: player))
            }
        }
        return best?.target
    }

    /// A process's player: the playing one if any, else the first by name.
    func foreignPlayer(of pid: Int64) -> String? {
        let players = foreignPlayers.values.filter { $0.pid == pid }
        return (players.filter { $0.status == .playing }.map(\.id).min()) ?? players.map(\.id).min()
    }

    /// Whether the targets changed since `before`, decided here only: `remoteTargetChanged`
    /// when the Earshot target differs from `before`'s, then `targetChanged` when the
    /// target across all apps does.
    func targetChanges(since before: SessionPolicy) -> [Decision] {
        (remoteTarget == before.remoteTarget ? [] : [.remoteTargetChanged(remoteTarget)])
            + (target == before.target ? [] : [.targetChanged(target)])
    }
}
