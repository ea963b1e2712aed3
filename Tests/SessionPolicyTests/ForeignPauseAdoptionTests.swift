import SessionPolicy
import Testing

/// A new arbiter takes over the players a killed one paused (from its state file): resumed
/// when nobody holds them any more, held by the session that paused them if it registered
/// again, and left alone when the user changed them.
@Suite("Other apps: players a previous arbiter paused")
struct ForeignPauseAdoptionTests {
    @Test func aPlayerStillPausedWhoseSessionIsGoneIsResumed() {
        var policy = SessionPolicy()
        policy.foreign(.paused)
        #expect(policy.apply(.adoptForeignPause(player: mpv, pausedBy: music)).foreign == [.resumeForeign(player: mpv)])
        #expect(policy.foreignPlayers[mpv]?.expected == .playing)
        // Its Playing, when it comes, is the arbiter's own change.
        policy.foreign(.playing)
        #expect(policy.foreignPlayers[mpv]?.expected == nil && policy.foreignPlayers[mpv]?.pausedBy == nil)
    }

    @Test func theSessionThatPausedItHoldsItAgainAndResumesItWhenItDeactivates() {
        var policy = SessionPolicy()
        policy.add(music, .playback, active: true)
        policy.foreign(.paused)
        #expect(policy.apply(.adoptForeignPause(player: mpv, pausedBy: music)).foreign.isEmpty)
        #expect(policy.foreignPlayers[mpv]?.pausedBy == music)
        #expect(policy.apply(.deactivate(music, notifyOthers: true)).foreign == [.resumeForeign(player: mpv)])
    }

    @Test func anotherActiveNonMixableSessionHoldsItInstead() {
        var policy = SessionPolicy()
        policy.add(podcast, .playback, active: true)
        policy.foreign(.paused)
        #expect(policy.apply(.adoptForeignPause(player: mpv, pausedBy: music)).foreign.isEmpty)
        #expect(policy.foreignPlayers[mpv]?.pausedBy == podcast)
        #expect(policy.apply(.vanished(podcast)).foreign == [.resumeForeign(player: mpv)])
    }

    @Test func aMixableSessionDoesNotHoldIt() {
        var policy = SessionPolicy()
        policy.add(podcast, .playback, options: .mixWithOthers, active: true)
        policy.foreign(.paused)
        #expect(policy.apply(.adoptForeignPause(player: mpv, pausedBy: podcast)).foreign == [.resumeForeign(player: mpv)])
    }

    @Test(arguments: [ForeignPlaybackStatus.playing, .stopped])
    func aPlayerNoLongerAsItWasLeftIsTheUsers(status: ForeignPlaybackStatus) {
        var policy = SessionPolicy()
        policy.foreign(status)
        #expect(policy.apply(.adoptForeignPause(player: mpv, pausedBy: music)).isEmpty)
        #expect(policy.foreignPlayers[mpv]?.pausedBy == nil)
    }

    @Test func aPlayerThatCannotPauseWasStoppedAndIsPlayedAgain() {
        var policy = SessionPolicy()
        policy.foreign(.stopped, canPause: false)
        #expect(policy.apply(.adoptForeignPause(player: mpv, pausedBy: music)).foreign == [.resumeForeign(player: mpv)])
    }

    @Test func anUnknownPlayerIsIgnored() {
        var policy = SessionPolicy()
        #expect(policy.apply(.adoptForeignPause(player: mpv, pausedBy: music)).isEmpty)
    }
}
