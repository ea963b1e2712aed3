import SessionPolicy
import Testing

@Suite("Interruptions")
struct InterruptionTests {
    @Test func anInterruptedSessionIsInactiveAndSilent() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(video, .playback, active: true)
        let session = policy[music]!
        #expect(session.isInterrupted && !session.isActive && !session.isProducingSound)
        #expect(session.interruptions == [.sessionActivated(video)])
        #expect(session.wasPlayingWhenInterrupted)
    }

    @Test func interruptSpokenAudioInterruptsSpokenSessionsAndMixesWithOthers() {
        var policy = SessionPolicy()
        policy.add(podcast, .playback, mode: .spokenAudio, playing: true)
        policy.add(game, .ambient, mode: .spokenAudio, playing: true)
        policy.add(music, .playback, options: .mixWithOthers, playing: true)
        let decisions = policy.add(navigation, .playback, options: .interruptSpokenAudioAndMixWithOthers, active: true)
        #expect(decisions.interruptions == [.interruptionBegan(podcast, reason: .sessionActivated(navigation)),
                                            .interruptionBegan(game, reason: .sessionActivated(navigation))].sorted(by: byID))
        #expect(policy[music]!.isProducingSound)
        #expect(policy.apply(.deactivate(navigation, notifyOthers: true)).interruptions
            == [.interruptionEnded(podcast, shouldResume: true), .interruptionEnded(game, shouldResume: true)].sorted(by: byID))
    }

    @Test func silenceTimeoutEndsTheInterruptionsOfASilentInterrupter() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(video, .playback, playing: true)
        policy.run(.soundStopped(video, tick: 9))
        #expect(policy.apply(.silenceTimeout(video)).interruptions == [.interruptionEnded(music, shouldResume: true)])
        #expect(!policy[video]!.isActive, "the silent interrupter is deactivated, as iOS does to a suspended app")
    }

    @Test func silenceTimeoutIsIgnoredWhileTheInterrupterProducesSound() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(video, .playback, playing: true)
        let before = policy
        #expect(policy.apply(.silenceTimeout(video)).isEmpty)
        #expect(policy == before)
    }

    @Test func interrupterVanishingEndsItsInterruptionsWithShouldResume() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(video, .playback, active: true)
        #expect(policy.apply(.vanished(video)).interruptions == [.interruptionEnded(music, shouldResume: true)])
        #expect(!policy[music]!.isInterrupted)
    }

    @Test func interrupterBecomingMixableEndsItsInterruptions() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(video, .playback, active: true)
        #expect(policy.apply(.setCategory(video, .playback, options: .mixWithOthers)).interruptions
            == [.interruptionEnded(music, shouldResume: true)])
    }

    @Test func victimBecomingMixableIsNoLongerInterrupted() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(video, .playback, active: true)
        #expect(policy.apply(.setCategory(music, .ambient)).interruptions
            == [.interruptionEnded(music, shouldResume: true)])
    }

    @Test func severalCausesGiveOneBeganAndOneEnded() {
        var policy = SessionPolicy()
        policy.add(game, .soloAmbient, playing: true)
        policy.add(music, .playback, active: true)
        #expect(policy.apply(.screenLockChanged(locked: true)).interruptions.isEmpty)
        #expect(policy[game]!.interruptions == [.sessionActivated(music), .screenLocked])
        #expect(policy.apply(.deactivate(music, notifyOthers: true)).interruptions.isEmpty)
        #expect(policy.apply(.screenLockChanged(locked: false)).interruptions
            == [.interruptionEnded(game, shouldResume: true)])
    }

    @Test func theFinalEndedFollowsTheLastCausesRule() {
        var policy = SessionPolicy()
        policy.add(game, .soloAmbient, playing: true)
        policy.add(music, .playback, active: true)
        policy.run(.screenLockChanged(locked: true), .screenLockChanged(locked: false))
        #expect(policy.apply(.deactivate(music, notifyOthers: false)).interruptions
            == [.interruptionEnded(game, shouldResume: false)])

        var other = SessionPolicy()
        other.add(game, .soloAmbient, playing: true)
        other.add(music, .playback, active: true)
        other.run(.screenLockChanged(locked: true), .deactivate(music, notifyOthers: false))
        #expect(other.apply(.screenLockChanged(locked: false)).interruptions
            == [.interruptionEnded(game, shouldResume: true)])
    }

    @Test func reactivatingAfterAnInterruptionInterruptsTheInterrupter() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(video, .playback, playing: true)
        #expect(policy.apply(.activate(music)).interruptions
            == [.interruptionEnded(music, shouldResume: false),
                .interruptionBegan(video, reason: .sessionActivated(music))])
        #expect(policy[music]!.isActive && !policy[music]!.isInterrupted)
    }

    @Test func soundWhileInterruptedIsRejected() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(video, .playback, active: true)
        let before = policy
        #expect(policy.apply(.soundStarted(music, tick: 3)) == [.rejected(music, reason: .soundWhileInterrupted)])
        #expect(policy == before)
    }

    @Test func interruptionsPassToTheNextActiveInterrupter() {
        // Music is interrupted by a video, the video by a call. The video giving up must
        // not resume the music over the call: the call holds it until it ends.
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(video, .playback, playing: true)
        policy.add(call, .playAndRecord, playing: true)
        #expect(policy.apply(.deactivate(video, notifyOthers: true)).interruptions.isEmpty)
        #expect(policy[music]!.interruptions == [.sessionActivated(call)])
        #expect(policy.apply(.deactivate(call, notifyOthers: true)).interruptions
            == [.interruptionEnded(music, shouldResume: true), .interruptionEnded(video, shouldResume: true)])
    }

    @Test func anInterruptedInterrupterKeepsItsVictimsInterrupted() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(video, .playback, playing: true)
        policy.add(call, .playAndRecord, active: true)
        #expect(policy[music]!.interruptions == [.sessionActivated(video)])
        #expect(policy[video]!.interruptions == [.sessionActivated(call)])
        #expect(policy.apply(.deactivate(call, notifyOthers: true)).interruptions
            == [.interruptionEnded(video, shouldResume: true)])
    }

    @Test func screenLockChangesOnlyActOnChange() {
        var policy = SessionPolicy()
        policy.add(game, .ambient, active: true)
        policy.run(.screenLockChanged(locked: true))
        #expect(policy.apply(.screenLockChanged(locked: true)).isEmpty)
        #expect(policy.apply(.silentModeChanged(on: false)).isEmpty)
    }
}

/// Orders decisions by the session they name.
func byID(_ lhs: Decision, _ rhs: Decision) -> Bool {
    (lhs.sessionID?.rawValue ?? "") < (rhs.sessionID?.rawValue ?? "")
}
