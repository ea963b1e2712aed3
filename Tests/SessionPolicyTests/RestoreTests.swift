import SessionPolicy
import Testing

/// After the arbiter changed hosts, sessions register again; one that was interrupted
/// says by whom, and the interruption carries on if its interrupter still interrupts it.
@Suite("Restoring interruptions after a host change")
struct RestoreTests {
    /// A fresh arbiter: the interrupter (a game in playback, active) and the re-registered
    /// victim (a podcast in playback, inactive because it is interrupted).
    func afterHostChange(gameActive: Bool = true) -> SessionPolicy {
        var policy = SessionPolicy()
        policy.add(game, .playback, active: gameActive, playing: gameActive, tick: 1)
        policy.add(podcast, .playback, remote: true, tick: 2)
        return policy
    }

    @Test func aRestoredInterruptionIsSilentAndEndsWhenTheInterrupterDeactivates() {
        var policy = afterHostChange()
        #expect(policy.apply(.restoreInterruption(podcast, reason: .sessionActivated(game), wasPlaying: true)).interruptions.isEmpty,
                "the podcast already knows it is interrupted")
        #expect(policy[podcast]!.isInterrupted && !policy[podcast]!.isActive)
        #expect(policy.apply(.deactivate(game, notifyOthers: true)).interruptions
            == [.interruptionEnded(podcast, shouldResume: true)])
    }

    @Test func aRestoreEndsAtOnceWhenTheInterrupterNoLongerInterrupts() {
        var policy = afterHostChange(gameActive: false)
        #expect(policy.apply(.restoreInterruption(podcast, reason: .sessionActivated(game), wasPlaying: true)).interruptions
            == [.interruptionEnded(podcast, shouldResume: true)])
        #expect(!policy[podcast]!.isInterrupted)
        var paused = afterHostChange(gameActive: false)
        #expect(paused.apply(.restoreInterruption(podcast, reason: .sessionActivated(game), wasPlaying: false)).interruptions
            == [.interruptionEnded(podcast, shouldResume: false)])
    }

    @Test func aMixableInterrupterDoesNotRestore() {
        var policy = SessionPolicy()
        policy.add(game, .playback, options: .mixWithOthers, active: true, playing: true, tick: 1)
        policy.add(podcast, .playback, tick: 2)
        #expect(policy.apply(.restoreInterruption(podcast, reason: .sessionActivated(game), wasPlaying: true)).interruptions
            == [.interruptionEnded(podcast, shouldResume: true)])
    }

    @Test func aRestoreNamingAnUnknownSessionIsRejected() {
        var policy = afterHostChange()
        let before = policy
        #expect(policy.apply(.restoreInterruption(podcast, reason: .sessionActivated(stranger), wasPlaying: true)) == [.rejected(stranger, reason: .unknownSession)])
        #expect(policy.apply(.restoreInterruption(stranger, reason: .sessionActivated(game), wasPlaying: true)) == [.rejected(stranger, reason: .unknownSession)])
        #expect(policy == before)
    }

    @Test func aScreenLockInterruptionCarriesOnWhileLockedAndEndsWithResumeOnUnlock() {
        var policy = SessionPolicy()
        _ = policy.apply(.screenLockChanged(locked: true))
        policy.add(game, .ambient, tick: 1)
        #expect(policy.apply(.restoreInterruption(game, reason: .screenLocked, wasPlaying: true)).interruptions.isEmpty,
                "the game already knows it is silenced")
        #expect(policy[game]!.interruptions == [.screenLocked] && !policy[game]!.isActive)
        #expect(policy.apply(.screenLockChanged(locked: false)).interruptions == [.interruptionEnded(game, shouldResume: true)])
    }

    @Test func aScreenLockInterruptionEndsAtOnceWhenTheScreenIsNoLongerLocked() {
        var policy = SessionPolicy()
        policy.add(game, .ambient, tick: 1)
        #expect(policy.apply(.restoreInterruption(game, reason: .screenLocked, wasPlaying: true)).interruptions
            == [.interruptionEnded(game, shouldResume: true)])
        #expect(!policy[game]!.isInterrupted)
        #expect(policy.apply(.restoreInterruption(game, reason: .silentMode, wasPlaying: false)).interruptions
            == [.interruptionEnded(game, shouldResume: false)])
    }

    @Test func aScreenLockInterruptionEndsForACategoryTheLockDoesNotSilence() {
        var policy = SessionPolicy()
        _ = policy.apply(.screenLockChanged(locked: true))
        policy.add(music, .playback, tick: 1)
        #expect(policy.apply(.restoreInterruption(music, reason: .screenLocked, wasPlaying: true)).interruptions
            == [.interruptionEnded(music, shouldResume: true)])
    }
}
