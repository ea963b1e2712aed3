import SessionPolicy
import Testing

/// The seed scenario: a background player in category playback, active and producing
/// sound, is interrupted when an ambient app (active) switches to playback and plays.
@Suite("Seed scenario: an ambient app switches to playback over a background player")
struct SeedScenarioTests {
    let player = music
    let app = video

    /// The player plays in the background; the app is active in `ambient`, mixing with it.
    func background(playerPlaying: Bool = true) -> SessionPolicy {
        var policy = SessionPolicy()
        policy.add(player, .playback, active: true, playing: playerPlaying, remote: true, tick: 1)
        policy.add(app, .ambient, active: true, tick: 2)
        return policy
    }

    /// The app switches to playback and plays; returns the interruption decisions.
    func switchAndPlay(_ policy: inout SessionPolicy) -> [Decision] {
        policy.run(.setCategory(app, .playback), .soundStarted(app, tick: 3)).interruptions
    }

    @Test func backgroundPlayerResumesWhenTheAppDeactivatesWithNotifyOthers() {
        var policy = background()
        #expect(policy[player]!.isProducingSound, "ambient mixes with the player")
        #expect(switchAndPlay(&policy) == [.interruptionBegan(player, reason: .sessionActivated(app))])
        #expect(!policy[player]!.isActive && !policy[player]!.isProducingSound)
        #expect(policy.apply(.deactivate(app, notifyOthers: true)).interruptions
            == [.interruptionEnded(player, shouldResume: true)])
        #expect(policy.apply(.activate(player)).interruptions.isEmpty)
    }

    @Test func backgroundPlayerIsNotResumedWithoutNotifyOthers() {
        var policy = background()
        _ = switchAndPlay(&policy)
        #expect(policy.apply(.deactivate(app, notifyOthers: false)).interruptions
            == [.interruptionEnded(player, shouldResume: false)])
    }

    @Test func backgroundPlayerResumesWhenTheAppVanishes() {
        var policy = background()
        _ = switchAndPlay(&policy)
        #expect(policy.apply(.vanished(app)).interruptions == [.interruptionEnded(player, shouldResume: true)])
    }

    @Test func aPausedBackgroundPlayerIsNotResumed() {
        var policy = background(playerPlaying: false)
        #expect(switchAndPlay(&policy) == [.interruptionBegan(player, reason: .sessionActivated(app))])
        #expect(policy.apply(.deactivate(app, notifyOthers: true)).interruptions
            == [.interruptionEnded(player, shouldResume: false)])
    }
}
