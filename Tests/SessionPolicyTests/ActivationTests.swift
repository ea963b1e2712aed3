import SessionPolicy
import Testing

@Suite("Activation and deactivation")
struct ActivationTests {
    @Test func nonMixableActivationInterruptsEveryActiveNonMixableSession() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(game, .ambient, playing: true)
        policy.add(navigation, .playback, options: .mixWithOthers, playing: true)
        let decisions = policy.add(video, .playback, active: true)
        #expect(decisions.interruptions == [.interruptionBegan(music, reason: .sessionActivated(video))])
        #expect(policy[game]!.isProducingSound && policy[navigation]!.isProducingSound)
    }

    @Test func mixableActivationInterruptsNobody() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        for (id, category, options) in [(game, Category.ambient, CategoryOptions()),
                                        (navigation, .playback, .mixWithOthers),
                                        (call, .playAndRecord, .mixWithOthers)] {
            #expect(policy.add(id, category, options: options, playing: true).interruptions.isEmpty)
        }
        #expect(policy[music]!.isProducingSound)
    }

    @Test func inactiveSessionsAreNotInterrupted() {
        var policy = SessionPolicy()
        policy.add(music, .playback)
        #expect(policy.add(video, .playback, active: true).interruptions.isEmpty)
        #expect(!policy[music]!.isInterrupted)
    }

    @Test func categoryChangeOfAnActiveSessionIsEvaluatedAsActivation() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(game, .ambient, active: true)
        #expect(policy.apply(.setCategory(game, .soloAmbient)).interruptions
            == [.interruptionBegan(music, reason: .sessionActivated(game))])
    }

    @Test func categoryChangeOfAnInactiveSessionInterruptsNobody() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(game, .ambient)
        #expect(policy.apply(.setCategory(game, .playback)).interruptions.isEmpty)
    }

    @Test func deactivateWithNotifyOthersResumesTheSessionsThatWerePlaying() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(call, .playAndRecord, options: .interruptSpokenAudioAndMixWithOthers)
        policy.add(podcast, .playback, options: .mixWithOthers, mode: .spokenAudio, active: true)
        policy.add(video, .playback, active: true)
        policy.run(.activate(call))
        #expect(policy[music]!.wasPlayingWhenInterrupted && !policy[podcast]!.wasPlayingWhenInterrupted)
        #expect(policy.apply(.deactivate(video, notifyOthers: true)).interruptions
            == [.interruptionEnded(music, shouldResume: true)])
        #expect(policy.apply(.deactivate(call, notifyOthers: true)).interruptions
            == [.interruptionEnded(podcast, shouldResume: false)])
    }

    @Test func deactivateWithoutNotifyOthersNeverResumes() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(video, .playback, playing: true)
        #expect(policy.apply(.deactivate(video, notifyOthers: false)).interruptions
            == [.interruptionEnded(music, shouldResume: false)])
    }

    @Test func deactivationStopsRunningSound() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.run(.deactivate(music, notifyOthers: false))
        #expect(!policy[music]!.isActive && !policy[music]!.isProducingSound)
    }

    @Test func soundFromAnInactiveSessionActivatesIt() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(video, .playback)
        let decisions = policy.apply(.soundStarted(video, tick: 5))
        #expect(decisions.interruptions == [.interruptionBegan(music, reason: .sessionActivated(video))])
        #expect(policy[video]!.isActive && policy[video]!.isProducingSound)
        #expect(policy[video]!.lastSoundTick == 5)
    }

    @Test func soundFromASilencedSessionIsNotRecorded() {
        var policy = SessionPolicy()
        policy.add(game, .ambient)
        policy.run(.silentModeChanged(on: true))
        #expect(policy.apply(.soundStarted(game, tick: 3)).interruptions
            == [.interruptionBegan(game, reason: .silentMode)])
        #expect(!policy[game]!.isProducingSound && policy[game]!.lastSoundTick == nil)
    }

    @Test func silenceIsTimedFromTheFirstSoundStopped() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true, tick: 1)
        #expect(policy[music]!.silentSinceTick == nil)
        policy.run(.soundStopped(music, tick: 4), .soundStopped(music, tick: 6))
        #expect(policy[music]!.silentSinceTick == 4)
        policy.run(.soundStarted(music, tick: 8))
        #expect(policy[music]!.silentSinceTick == nil)
    }
}
