import SessionPolicy
import Testing

@Suite("Ducking")
struct DuckingTests {
    @Test func duckOthersDucksTheOtherActiveSessionsUntilDeactivation() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(game, .ambient, playing: true)
        policy.add(podcast, .playback)
        let activated = policy.add(navigation, .playback, options: .duckOthers, active: true)
        #expect(activated.interruptions.isEmpty)
        #expect(activated.ducking == [.duck(music, gain: 0.3), .duck(game, gain: 0.3)].sorted(by: byID))
        #expect(policy[music]!.duckedBy == [navigation])
        #expect(!policy[navigation]!.isDucked && !policy[podcast]!.isDucked)
        #expect(policy.apply(.deactivate(navigation, notifyOthers: true)).ducking
            == [.unduck(music), .unduck(game)].sorted(by: byID))
    }

    @Test func duckUsesTheConfiguredGain() {
        var policy = SessionPolicy(configuration: .init(duckGain: 0.5))
        policy.add(music, .playback, playing: true)
        #expect(policy.add(navigation, .playback, options: .duckOthers, active: true).ducking
            == [.duck(music, gain: 0.5)])
        #expect(SessionPolicy.Configuration(duckGain: .nan).duckGain == 0.3)
        #expect(SessionPolicy.Configuration(duckGain: 4).duckGain == 1)
    }

    @Test func aSessionActivatingWhileADuckerIsActiveIsDucked() {
        var policy = SessionPolicy()
        policy.add(navigation, .playback, options: .duckOthers, active: true)
        #expect(policy.add(music, .playback, playing: true).ducking == [.duck(music, gain: 0.3)])
    }

    @Test func aSessionStaysDuckedWhileAnyDuckerIsActive() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(navigation, .playback, options: .duckOthers, active: true)
        let second = policy.add(call, .playAndRecord, options: .duckOthers, active: true)
        #expect(second.ducking == [.duck(navigation, gain: 0.3), .duck(call, gain: 0.3)].sorted(by: byID),
                "duckers duck each other, and music is already ducked")
        #expect(policy[music]!.duckedBy == [navigation, call])
        #expect(policy.apply(.deactivate(navigation, notifyOthers: false)).ducking == [.unduck(navigation), .unduck(call)])
        #expect(policy[music]!.isDucked)
        #expect(policy.apply(.deactivate(call, notifyOthers: false)).ducking == [.unduck(music)])
    }

    @Test func duckingLiftsWhenTheDuckerVanishes() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(navigation, .playback, options: .duckOthers, active: true)
        #expect(policy.apply(.vanished(navigation)).ducking == [.unduck(music)])
    }

    @Test func removingDuckOthersTakesEffectAtTheNextDeactivation() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(navigation, .playback, options: .duckOthers, active: true)
        #expect(policy.apply(.setCategory(navigation, .ambient)).ducking.isEmpty,
                "Neuburg: the option must be removed and the session deactivated")
        #expect(policy[navigation]!.isDucking && policy[music]!.isDucked)
        #expect(policy.apply(.deactivate(navigation, notifyOthers: false)).ducking == [.unduck(music)])
        #expect(policy.apply(.activate(navigation)).ducking.isEmpty, "reactivated without the option: no ducking")
    }

    /// Neuburg's recipe: ambient; before a brief sound, ambient with duckOthers (the
    /// music ducks at once, before any sound); after it, ambient without the option and
    /// a deactivation, which brings the music back; reactivating then is harmless.
    @Test func neuburgsAmbientDuckingRecipe() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(game, .ambient, active: true)
        #expect(!policy[music]!.isDucked)
        #expect(policy.apply(.setCategory(game, .ambient, options: .duckOthers)).ducking == [.duck(music, gain: 0.3)])
        #expect(!policy[music]!.isInterrupted, "ambient mixes: the music keeps playing, ducked")
        policy.run(.soundStarted(game, tick: 2), .soundStopped(game, tick: 3))
        #expect(policy[music]!.isDucked, "ducking does not depend on whether the app sounds")
        #expect(policy.apply(.setCategory(game, .ambient)).ducking.isEmpty)
        #expect(policy.apply(.deactivate(game, notifyOthers: false)).ducking == [.unduck(music)])
        #expect(policy.apply(.activate(game)).ducking.isEmpty)
    }

    @Test func addingDuckOthersToAnActiveSessionDucksAtOnceWithoutSound() {
        var policy = SessionPolicy()
        policy.add(game, .ambient, playing: true)
        policy.add(navigation, .playback, active: true)
        #expect(policy.apply(.setCategory(navigation, .playback, options: .duckOthers)).ducking == [.duck(game, gain: 0.3)])
    }

    @Test func anInterruptedSessionIsNotDucked() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(navigation, .playback, options: .duckOthers, active: true)
        policy.add(video, .playback)
        let decisions = policy.apply(.activate(video))
        #expect(decisions.prefix(3) == [.interruptionBegan(music, reason: .sessionActivated(video)), .unduck(music),
                                        .duck(video, gain: 0.3)])
    }

    @Test func aSilentDuckerPastItsTimeoutStopsDucking() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(navigation, .playback, options: .duckOthers, active: true)
        #expect(policy.apply(.silenceTimeout(navigation)).ducking == [.unduck(music)],
                "a ducker that stays silent past its timeout is deactivated")
    }
}
