extension SessionPolicy {
    /// `AVAudioSession.isOtherAudioPlaying` for session `id`: some other session is
    /// producing sound (and so is not interrupted).
    /// Another app's sound counts too (event sounds never reach the policy).
    public func otherAudioPlaying(for id: SessionID) -> Bool {
        sessions.values.contains { $0.id != id && $0.isProducingSound && !$0.isInterrupted } || isForeignAudioPlaying
    }

    /// Whether another app's process is sounding.
    public var isForeignAudioPlaying: Bool { foreignSounds.values.contains(where: \.isSounding) }

    /// `AVAudioSession.secondaryAudioShouldBeSilencedHint` for session `id`: some other
    /// non-mixable session is producing sound, that is another app's primary audio, so
    /// a game should mute its soundtrack.
    /// Another app's sound counts as primary audio: the policy cannot know it mixes.
    public func secondaryAudioShouldBeSilencedHint(for id: SessionID) -> Bool {
        sessions.values.contains { $0.id != id && $0.isProducingSound && !$0.isMixable } || isForeignAudioPlaying
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
