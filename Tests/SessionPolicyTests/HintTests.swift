import SessionPolicy
import Testing

@Suite("otherAudioPlaying and secondaryAudioShouldBeSilencedHint")
struct HintTests {
    @Test func otherAudioPlayingMeansAnotherSessionProducesSound() {
        var policy = SessionPolicy()
        policy.add(game, .ambient, active: true)
        policy.add(music, .playback, active: true)
        #expect(!policy.otherAudioPlaying(for: game))
        let started = policy.apply(.soundStarted(music, tick: 2))
        #expect(started.contains(.otherAudioPlaying(game, true)))
        #expect(!started.contains { if case .otherAudioPlaying(music, _) = $0 { true } else { false } })
        #expect(policy.otherAudioPlaying(for: game) && !policy.otherAudioPlaying(for: music))
        #expect(policy.apply(.soundStopped(music, tick: 3)).contains(.otherAudioPlaying(game, false)))
    }

    @Test func hintDecisionsAreSentOnlyOnChange() {
        var policy = SessionPolicy()
        policy.add(game, .ambient, active: true)
        policy.add(music, .playback, playing: true)
        policy.add(navigation, .playback, options: .mixWithOthers, active: true)
        let second = policy.apply(.soundStarted(navigation, tick: 4))
        #expect(second == [.otherAudioPlaying(music, true)], "game already knew other audio plays")
    }

    @Test func secondaryAudioHintFollowsNonMixableSoundOnly() {
        var policy = SessionPolicy()
        policy.add(game, .ambient, active: true)
        let mixable = policy.add(navigation, .playback, options: .mixWithOthers, playing: true)
        #expect(!mixable.contains(.secondaryAudioShouldBeSilenced(game, true)))
        let primary = policy.add(music, .playback, playing: true)
        #expect(primary.contains(.secondaryAudioShouldBeSilenced(game, true)))
        #expect(primary.contains(.secondaryAudioShouldBeSilenced(navigation, true)))
        #expect(!policy.secondaryAudioShouldBeSilencedHint(for: music))
        #expect(policy.apply(.deactivate(music, notifyOthers: false))
            .contains(.secondaryAudioShouldBeSilenced(game, false)))
    }

    @Test func aNewSessionLearnsTheHintsWhenItRegisters() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        #expect(policy.apply(.register(game, appName: "game", tick: 3))
            == [.otherAudioPlaying(game, true), .secondaryAudioShouldBeSilenced(game, true)])
        #expect(policy.apply(.register(podcast, appName: "podcast", tick: 4)).count == 2)
    }

    @Test func hintsChangeWhenTheSoundingSessionIsInterrupted() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(game, .ambient, active: true)
        let decisions = policy.add(video, .playback, active: true)
        #expect(decisions.contains(.otherAudioPlaying(game, false)))
        #expect(decisions.contains(.secondaryAudioShouldBeSilenced(game, false)))
    }
}
