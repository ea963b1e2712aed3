import SessionPolicy
import Testing

/// A session told to resume that is interrupted again before its first sound (issue 7,
/// item 5: a burst of interrupters that come and go).
@Suite("Resuming after an interruption")
struct ResumingTests {
    @Test func aSessionInterruptedAgainBeforeItsSoundIsStillOwedItsResumption() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(video, .playback, playing: true)
        #expect(policy.apply(.vanished(video)).interruptions == [.interruptionEnded(music, shouldResume: true)])
        #expect(policy[music]!.isResuming)
        // The player reactivates; before its sound starts, another interrupter comes and goes.
        policy.run(.activate(music))
        policy.add(game, .playback, playing: true)
        #expect(policy[music]!.isInterrupted && policy[music]!.wasPlayingWhenInterrupted)
        #expect(policy.apply(.vanished(game)).interruptions == [.interruptionEnded(music, shouldResume: true)])
    }

    @Test func theResumptionIsSpentBySoundOrDeactivation() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(video, .playback, playing: true)
        policy.run(.vanished(video), .activate(music), .soundStarted(music, tick: 5), .soundStopped(music, tick: 6))
        #expect(!policy[music]!.isResuming, "it sounded")
        policy.add(game, .playback, active: true)
        #expect(policy.apply(.vanished(game)).interruptions == [.interruptionEnded(music, shouldResume: false)],
                "paused by its user before the second interruption")

        var other = SessionPolicy()
        other.add(music, .playback, playing: true)
        other.add(video, .playback, playing: true)
        other.run(.vanished(video), .deactivate(music, notifyOthers: false))
        #expect(!other[music]!.isResuming, "it gave up")
        other.run(.activate(music))
        other.add(game, .playback, active: true)
        #expect(other.apply(.vanished(game)).interruptions == [.interruptionEnded(music, shouldResume: false)])
    }

    @Test func anInterruptionEndedWithoutResumeOwesNothing() {
        var policy = SessionPolicy()
        policy.add(music, .playback, active: true)
        policy.add(video, .playback, active: true)
        #expect(policy.apply(.vanished(video)).interruptions == [.interruptionEnded(music, shouldResume: false)])
        #expect(!policy[music]!.isResuming)
    }

    @Test func aSessionThatTakesOverItsInterruptionWhilePlayingIsResuming() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(video, .playback, playing: true)
        // The player activates again while interrupted (its own activation takes over).
        #expect(policy.apply(.activate(music)).interruptions.first == .interruptionEnded(music, shouldResume: false))
        #expect(policy[music]!.isResuming, "it was playing when interrupted")
        policy.add(game, .playback, active: true)
        #expect(policy.apply(.vanished(game)).interruptions == [.interruptionEnded(music, shouldResume: true)],
                "interrupted again before its sound came back: still owed")
    }
}
