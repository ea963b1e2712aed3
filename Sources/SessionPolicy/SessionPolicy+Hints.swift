extension SessionPolicy {
    /// `AVAudioSession.isOtherAudioPlaying` for session `id`: some other session is
    /// producing sound (and so is not interrupted).
    public func otherAudioPlaying(for id: SessionID) -> Bool {
        sessions.values.contains { $0.id != id && $0.isProducingSound && !$0.isInterrupted }
    }

    /// `AVAudioSession.secondaryAudioShouldBeSilencedHint` for session `id`: some other
    /// non-mixable session is producing sound, that is another app's primary audio, so
    /// a game should mute its soundtrack.
    public func secondaryAudioShouldBeSilencedHint(for id: SessionID) -> Bool {
        sessions.values.contains { $0.id != id && $0.isProducingSound && !$0.isMixable }
    }

    /// The hints that changed, for every registered session. A new session's hints
    /// count as false before it registered, so it learns at once that others play.
    func hintChanges(since before: SessionPolicy) -> [Decision] {
        let ids = sessionIDs
        let other = ids.compactMap { id -> Decision? in
            let now = otherAudioPlaying(for: id)
            let was = before.sessions[id] != nil && before.otherAudioPlaying(for: id)
            return now == was ? nil : .otherAudioPlaying(id, now)
        }
        let secondary = ids.compactMap { id -> Decision? in
            let now = secondaryAudioShouldBeSilencedHint(for: id)
            let was = before.sessions[id] != nil && before.secondaryAudioShouldBeSilencedHint(for: id)
            return now == was ? nil : .secondaryAudioShouldBeSilenced(id, now)
        }
        return other + secondary
    }
}
