import SessionPolicy
import Testing

@Suite("The remote-control target")
struct RemoteTargetTests {
    @Test func theTargetIsTheEligibleSessionThatLastProducedSound() {
        var policy = SessionPolicy()
        #expect(policy.add(music, .playback, playing: true, remote: true, tick: 1).targetChanges
            == [.remoteTargetChanged(music)])
        #expect(policy.add(video, .playback, playing: true, remote: true, tick: 2).targetChanges
            == [.remoteTargetChanged(video)])
        #expect(policy.run(.activate(music), .soundStarted(music, tick: 3)).targetChanges
            == [.remoteTargetChanged(music)])
        #expect(policy.remoteTarget == music)
    }

    @Test func theTargetIsNilUntilAnEligibleSessionSounds() {
        var policy = SessionPolicy()
        policy.add(music, .playback, active: true, remote: true)
        #expect(policy.remoteTarget == nil)
        #expect(policy.apply(.soundStarted(music, tick: 2)).targetChanges == [.remoteTargetChanged(music)])
    }

    @Test func ambientAndMixableSessionsNeverTakeTheMediaKeys() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true, remote: true, tick: 1)
        let later = policy.run(.register(game, appName: "game", tick: 2), .setCategory(game, .ambient),
                               .remoteCommandsChanged(game, anyEnabled: true), .soundStarted(game, tick: 3))
        policy.add(navigation, .playback, options: .mixWithOthers, playing: true, remote: true, tick: 4)
        policy.add(call, .soloAmbient, playing: true, remote: true, tick: 5)
        #expect(later.targetChanges.isEmpty)
        #expect(policy.remoteTarget == music)
        #expect(!policy[game]!.isEligibleRemoteTarget && !policy[navigation]!.isEligibleRemoteTarget)
        #expect(!policy[call]!.isEligibleRemoteTarget)
    }

    @Test func aSessionWithoutEnabledCommandsIsNotEligible() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true, remote: true, tick: 1)
        policy.add(video, .playAndRecord, playing: true, tick: 2)
        #expect(policy.remoteTarget == music)
        #expect(policy.apply(.remoteCommandsChanged(video, anyEnabled: true)).targetChanges
            == [.remoteTargetChanged(video)])
        #expect(policy.apply(.remoteCommandsChanged(video, anyEnabled: false)).targetChanges
            == [.remoteTargetChanged(music)])
    }

    @Test func aVanishedTargetHandsOverToThePreviousSounder() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true, remote: true, tick: 1)
        policy.add(podcast, .playback, playing: true, remote: true, tick: 2)
        policy.add(video, .playback, playing: true, remote: true, tick: 3)
        #expect(policy.apply(.vanished(video)).targetChanges == [.remoteTargetChanged(podcast)])
        #expect(policy.apply(.vanished(music)).targetChanges.isEmpty)
        #expect(policy.apply(.vanished(podcast)).targetChanges == [.remoteTargetChanged(nil)])
    }

    @Test func aTargetThatBecomesMixableHandsOver() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true, remote: true, tick: 1)
        policy.add(video, .playback, playing: true, remote: true, tick: 2)
        #expect(policy.apply(.setCategory(video, .playback, options: .mixWithOthers)).targetChanges
            == [.remoteTargetChanged(music)])
    }

    @Test func anInterruptedTargetKeepsTheMediaKeysUntilAnotherSounds() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true, remote: true, tick: 1)
        policy.add(call, .playAndRecord, active: true, tick: 2)
        #expect(policy.remoteTarget == music)
    }

    @Test func remoteTargetChangedIsSentOnlyOnChange() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true, remote: true, tick: 1)
        #expect(policy.run(.soundStopped(music, tick: 2), .soundStarted(music, tick: 3)).targetChanges.isEmpty)
    }

    @Test func equalTicksGoToTheLaterSound() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true, remote: true, tick: 7)
        policy.add(video, .playback, playing: true, remote: true, tick: 7)
        #expect(policy.remoteTarget == video)
    }
}
