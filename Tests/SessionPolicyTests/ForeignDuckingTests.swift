import SessionPolicy
import Testing

@Suite("Foreign ducking")
struct ForeignDuckingTests {
    @Test func aDuckingSessionLowersOtherAppsFromActivationToDeactivation() {
        var policy = SessionPolicy()
        policy.add(music, .playback)
        #expect(policy.foreignStreamGain == nil)
        policy.add(navigation, .playback, options: .duckOthers, active: true)
        #expect(policy.foreignDuckers == [navigation])
        #expect(policy.foreignStreamGain == 0.3)
        _ = policy.apply(.deactivate(navigation, notifyOthers: true))
        #expect(policy.foreignDuckers.isEmpty)
        #expect(policy.foreignStreamGain == nil)
    }

    @Test func aSessionWithoutDuckOthersLeavesOtherAppsAlone() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(game, .ambient, options: .mixWithOthers, playing: true)
        #expect(policy.foreignDuckers.isEmpty)
        #expect(policy.foreignStreamGain == nil)
    }

    @Test func theConfiguredGainAppliesToOtherApps() {
        var policy = SessionPolicy(configuration: .init(duckGain: 0.5))
        policy.add(navigation, .playback, options: .duckOthers, active: true)
        #expect(policy.foreignStreamGain == 0.5)
    }

    @Test func observingOnlyNeverLowersOtherApps() {
        var policy = SessionPolicy(configuration: .init(pausesOthers: false, ducksOthers: false))
        policy.add(navigation, .playback, options: .duckOthers, active: true)
        #expect(policy[navigation]!.isDucking)
        #expect(policy.foreignDuckers.isEmpty)
        #expect(policy.foreignStreamGain == nil)
    }

    @Test func otherAppsStayDuckedUntilTheLastDuckerGoes() {
        var policy = SessionPolicy()
        policy.add(navigation, .playback, options: .duckOthers, active: true)
        policy.add(podcast, .playback, options: .duckOthers, active: true)
        #expect(policy.foreignDuckers == [navigation, podcast])
        _ = policy.apply(.deactivate(navigation, notifyOthers: false))
        #expect(policy.foreignDuckers == [podcast])
        #expect(policy.foreignStreamGain == 0.3)
        _ = policy.apply(.vanished(podcast))
        #expect(policy.foreignStreamGain == nil)
    }
}
