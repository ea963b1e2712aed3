/// Why a session is interrupted. A session may have several at once (see
/// ``Session/interruptions``).
public enum InterruptionReason: Sendable, Hashable {
    /// Another session activated (or became non-mixable while active) and its rules
    /// interrupt this one: a non-mixable session interrupts the other non-mixable ones,
    /// and one with ``CategoryOptions/interruptSpokenAudioAndMixWithOthers`` interrupts
    /// the ones in ``Mode/spokenAudio``.
    case sessionActivated(SessionID)
    /// The screen is locked, which silences ``Category/ambient`` and
    /// ``Category/soloAmbient``.
    case screenLocked
    /// Silent mode (the ring/silent switch) is on, which silences
    /// ``Category/ambient`` and ``Category/soloAmbient``.
    case silentMode
    /// The output a ``Category/playback`` session was playing to went away (headphones
    /// unplugged). This interruption begins and ends in the same step, with
    /// `shouldResume` false: pause, and stay paused.
    case routeDisconnected
    /// Another app's player (the unique name owning its MPRIS name) started playing. It
    /// ends, without `shouldResume`, when that player stops playing or leaves: another
    /// app cannot say notifyOthersOnDeactivation.
    case otherApp(player: String)

    /// The session that caused the interruption, if another session did.
    public var interrupter: SessionID? {
        if case let .sessionActivated(id) = self { id } else { nil }
    }
}
