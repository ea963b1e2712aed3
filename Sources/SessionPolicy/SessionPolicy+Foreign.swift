extension SessionPolicy {
    /// A player appeared or changed. Its status changes are the user's (or its app's)
    /// unless it is the status the arbiter asked for:
    /// - starting to play interrupts every active non-mixable session (reason
    ///   `otherApp`) and makes the player forget who paused it. A session activated
    ///   after the status was seen (`seenAt`) found the player playing: the first of
    ///   them pauses it, as its activation would have, and none is interrupted by it;
    /// - any other change away from what the arbiter asked for means the user touched
    ///   it: it is no longer remembered as paused by a session;
    /// - stopping playing ends the interruptions it caused, without `shouldResume`.
    mutating func updateForeignPlayer(_ id: String, pid: Int64, status: ForeignPlaybackStatus, canPause: Bool,
                                      seenAt: UInt64? = nil) -> [Decision] {
        let previous = foreignPlayers[id]
        var player = previous ?? ForeignPlayer(id: id, pid: pid, status: status, canPause: canPause)
        player.pid = pid
        player.canPause = canPause
        player.status = status
        var decisions: [Decision] = []
        let changed = previous.map { $0.status != status } ?? true
        if changed {
            if let expected = player.expected, expected == status {
                // The arbiter's own change, now seen. A resumed player is the app's again.
                if status == .playing { player.pausedBy = nil }
                player.expected = nil
                foreignPlayers[id] = player
            } else {
                player.expected = nil
                player.pausedBy = nil
                foreignPlayers[id] = player
                if status == .playing {
                    let foundItPlaying = { (session: Session) in seenAt.map { session.activation > $0 } ?? false }
                    let victims = ids { $0.isActive && !$0.isMixable && !foundItPlaying($0) }
                    decisions += victims.compactMap { interrupt($0, because: .otherApp(player: id)) }
                    let holders = sessions.values.filter { $0.isActive && !$0.isMixable && foundItPlaying($0) }
                    if let first = holders.min(by: { $0.activation < $1.activation }) {
                        decisions += [pauseForeignPlayer(id, for: first.id)].compactMap { $0 }
                    }
                }
            }
            if previous?.status == .playing, status != .playing {
                decisions += endInterruptions(causedBy: id)
            }
        } else {
            foreignPlayers[id] = player
        }
        return decisions
    }

    /// A player left the bus: forgotten, and the interruptions it caused end.
    mutating func removeForeignPlayer(_ id: String) -> [Decision] {
        guard foreignPlayers.removeValue(forKey: id) != nil else { return [] }
        return endInterruptions(causedBy: id)
    }

    /// The sound server says whether another app's process sounds.
    ///
    /// A player of the process that the arbiter asked to pause (or stop), and that has not
    /// said it did, is watched through its sound: silent, it did pause; sounding again
    /// after that, someone may have played it before it reported the pause, and its status
    /// is read again (``Decision/readForeignStatus(player:)``), once per silence.
    mutating func foreignSound(_ pid: Int64, sounding: Bool, tick: UInt64) -> [Decision] {
        var sound = foreignSounds[pid] ?? ForeignSound(pid: pid)
        let resumed = sounding && !sound.isSounding
        if resumed {
            soundStarts += 1
            sound.lastSoundTick = tick
            sound.soundSequence = soundStarts
        }
        let fell = !sounding && sound.isSounding
        sound.isSounding = sounding
        foreignSounds[pid] = sound
        var decisions: [Decision] = []
        guard fell || resumed else { return decisions }
        for key in foreignPlayers.keys.sorted() {
            guard var player = foreignPlayers[key], player.pid == pid, player.status == .playing,
                  let expected = player.expected, expected != .playing else { continue }
            if fell {
                player.fellSilentWhileExpected = true
            } else if resumed, player.fellSilentWhileExpected {
                player.fellSilentWhileExpected = false
                decisions.append(.readForeignStatus(player: key))
            }
            foreignPlayers[key] = player
        }
        return decisions
    }

    /// Another app's process is gone (or is an Earshot process after all).
    mutating func removeForeignProcess(_ pid: Int64) -> [Decision] {
        foreignSounds[pid] = nil
        let players = foreignPlayers.values.filter { $0.pid == pid }.map(\.id).sorted()
        return players.flatMap { removeForeignPlayer($0) }
    }

    /// Ends `player`'s part in the interruptions it caused; no `shouldResume`.
    private mutating func endInterruptions(causedBy player: String) -> [Decision] {
        let cause = InterruptionReason.otherApp(player: player)
        return ids { $0.interruptions.contains(cause) }.compactMap { lift(cause, from: $0, resume: .never) }
    }

    /// A non-mixable session became active: every other app's player that plays (or is
    /// about to, after the arbiter's `Play`) is paused, or stopped if it cannot pause, and
    /// remembered as paused by `id`.
    mutating func pauseForeignPlayers(for id: SessionID) -> [Decision] {
        foreignPlayers.keys.sorted().compactMap { pauseForeignPlayer($0, for: id) }
    }

    /// Player `key`, if it plays (or is about to), paused for session `id` as
    /// ``pauseForeignPlayers(for:)`` says.
    private mutating func pauseForeignPlayer(_ key: String, for id: SessionID) -> Decision? {
        guard configuration.pausesOthers, let session = sessions[id], session.isActive, !session.isMixable,
              var player = foreignPlayers[key] else { return nil }
        let playing = player.expected == .playing || (player.expected == nil && player.status == .playing)
        guard playing else { return nil }
        player.pausedBy = id
        player.expected = player.canPause ? .paused : .stopped
        player.fellSilentWhileExpected = false
        foreignPlayers[key] = player
        return .pauseForeign(player: key, stop: !player.canPause)
    }

    /// Session `id` lets go of the players it paused: with `resume`, each one still as
    /// the arbiter left it plays again, unless another active non-mixable session would
    /// pause it at once (that session holds it instead); without, they are forgotten.
    mutating func releaseForeignPlayers(of id: SessionID, resume: Bool) -> [Decision] {
        let holder = ids { $0.id != id && $0.isActive && !$0.isMixable }.first
        var decisions: [Decision] = []
        for key in foreignPlayers.keys.sorted() {
            guard var player = foreignPlayers[key], player.pausedBy == id else { continue }
            let untouched = player.status == (player.canPause ? .paused : .stopped) || player.expected != nil
            if resume, untouched, let holder {
                player.pausedBy = holder
            } else if resume, untouched {
                player.pausedBy = nil
                player.expected = .playing
                decisions.append(.resumeForeign(player: key))
            } else {
                player.pausedBy = nil
            }
            foreignPlayers[key] = player
        }
        return decisions
    }

    /// A player a previous arbiter paused for `pausedBy` (``Event/adoptForeignPause(player:pausedBy:)``).
    mutating func adoptForeignPause(_ key: String, pausedBy: SessionID) -> [Decision] {
        guard var player = foreignPlayers[key], player.pausedBy == nil, player.expected == nil,
              player.status == (player.canPause ? .paused : .stopped) else { return [] }
        let holds = { (session: Session) in session.isActive && !session.isMixable }
        if let session = sessions[pausedBy], holds(session) {
            player.pausedBy = pausedBy
        } else if let holder = ids(where: holds).first {
            player.pausedBy = holder
        } else {
            player.expected = .playing
            foreignPlayers[key] = player
            return [.resumeForeign(player: key)]
        }
        foreignPlayers[key] = player
        return []
    }
}
