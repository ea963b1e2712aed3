import SessionPolicy
import Testing

// Other apps, named for what they stand for: a music player (mpv) of process 500, a
// browser of process 600 whose tab toggles its metadata but makes no sound.
let mpv = ":1.50"
let mpvProcess: Int64 = 500
let browser = ":1.60"
let browserProcess: Int64 = 600

extension SessionPolicy {
    /// Another app's player with `status`.
    @discardableResult
    mutating func foreign(_ status: ForeignPlaybackStatus, player: String = mpv, pid: Int64 = mpvProcess,
                          canPause: Bool = true, seenAt: UInt64? = nil) -> [Decision] {
        apply(.foreignPlayer(player: player, pid: pid, status: status, canPause: canPause, seenAt: seenAt))
    }
}

extension Array where Element == Decision {
    /// Only the decisions for other apps' players, in order.
    var foreign: [Decision] {
        filter {
            switch $0 {
            case .pauseForeign, .resumeForeign, .readForeignStatus: true
            default: false
            }
        }
    }
}

@Suite("Other apps: pausing and resuming their players")
struct ForeignPauseTests {
    @Test func aNonMixableSessionPausesPlayingPlayersAndResumesThemAfterNotifyOthers() {
        var policy = SessionPolicy()
        policy.foreign(.playing)
        policy.foreign(.paused, player: browser, pid: browserProcess)
        let activated = policy.add(music, .playback, active: true)
        #expect(activated.foreign == [.pauseForeign(player: mpv, stop: false)], "only the playing player")
        #expect(policy.foreignPlayers[mpv]?.pausedBy == music)
        #expect(policy.foreign(.paused).interruptions.isEmpty, "the arbiter's own pause interrupts nobody")
        #expect(policy.foreignPlayers[mpv]?.pausedBy == music, "its own change keeps the memory")
        #expect(policy.apply(.deactivate(music, notifyOthers: true)).foreign == [.resumeForeign(player: mpv)])
        #expect(policy.foreign(.playing).interruptions.isEmpty, "the resumption is the arbiter's own, not the user's")
        #expect(policy.foreignPlayers[mpv]?.pausedBy == nil)
    }

    @Test func aPlayerThatCannotPauseIsStoppedAndResumedFromStopped() {
        var policy = SessionPolicy()
        policy.foreign(.playing, canPause: false)
        #expect(policy.add(music, .soloAmbient, active: true).foreign == [.pauseForeign(player: mpv, stop: true)])
        policy.foreign(.stopped, canPause: false)
        #expect(policy.apply(.vanished(music)).foreign == [.resumeForeign(player: mpv)])
    }

    @Test func deactivatingWithoutNotifyOthersLeavesThemPaused() {
        var policy = SessionPolicy()
        policy.foreign(.playing)
        policy.add(music, .playback, active: true)
        policy.foreign(.paused)
        #expect(policy.apply(.deactivate(music, notifyOthers: false)).foreign.isEmpty)
        #expect(policy.foreignPlayers[mpv]?.pausedBy == nil)
    }

    @Test func aPlayerTheUserTouchedIsNotResumed() {
        var policy = SessionPolicy()
        policy.foreign(.playing)
        policy.add(music, .playback, active: true)
        policy.foreign(.paused)
        // The user plays it by hand (which interrupts the session), then pauses it.
        let played = policy.foreign(.playing)
        #expect(played.interruptions == [.interruptionBegan(music, reason: .otherApp(player: mpv))])
        let paused = policy.foreign(.paused)
        #expect(paused.interruptions == [.interruptionEnded(music, shouldResume: false)])
        #expect(policy.apply(.deactivate(music, notifyOthers: true)).foreign.isEmpty)
    }

    @Test func aPlayerTheUserStoppedIsNotResumed() {
        var policy = SessionPolicy()
        policy.foreign(.playing)
        policy.add(music, .playback, active: true)
        policy.foreign(.paused)
        policy.foreign(.stopped)
        #expect(policy.apply(.vanished(music)).foreign.isEmpty)
    }

    @Test func mixableAndAmbientSessionsPauseNobody() {
        var policy = SessionPolicy()
        policy.foreign(.playing)
        #expect(policy.add(game, .ambient, active: true).foreign.isEmpty)
        #expect(policy.add(navigation, .playback, options: .mixWithOthers, active: true).foreign.isEmpty)
        #expect(policy.add(podcast, .playback, options: .duckOthers, active: true).foreign.isEmpty)
    }

    @Test func observingPausesNobody() {
        var policy = SessionPolicy(configuration: .init(pausesOthers: false))
        policy.foreign(.playing)
        #expect(policy.add(music, .playback, active: true).foreign.isEmpty)
        #expect(policy.foreignPlayers[mpv]?.pausedBy == nil)
    }

    @Test func anotherActiveNonMixableSessionKeepsThePlayerPaused() {
        var policy = SessionPolicy()
        policy.foreign(.playing)
        policy.add(music, .playback, active: true)
        policy.foreign(.paused)
        policy.add(video, .playback, active: true)  // interrupts music
        #expect(policy.apply(.vanished(music)).foreign.isEmpty, "resuming would play over video")
        #expect(policy.foreignPlayers[mpv]?.pausedBy == video)
        #expect(policy.apply(.deactivate(video, notifyOthers: true)).foreign == [.resumeForeign(player: mpv)])
    }

    /// mpv-mpris sends its changes every 100 ms: a play within that window of the
    /// arbiter's pause reaches the bus as one `Playing`, or as nothing new. The sound
    /// server still saw the pause (the stream fell silent) and the play (it sounds again).
    @Test func aPlayerSoundingAgainBeforeItSaidItPausedHasItsStatusReadAgain() {
        var policy = SessionPolicy()
        policy.foreign(.playing)
        _ = policy.apply(.foreignSound(pid: mpvProcess, sounding: true, tick: 1))
        policy.add(music, .playback, playing: true)
        #expect(policy.foreignPlayers[mpv]?.expected == .paused)
        #expect(policy.apply(.foreignSound(pid: mpvProcess, sounding: false, tick: 2)).foreign.isEmpty)
        #expect(policy.apply(.foreignSound(pid: mpvProcess, sounding: true, tick: 3)).foreign == [.readForeignStatus(player: mpv)])
        #expect(policy.apply(.foreignSound(pid: mpvProcess, sounding: false, tick: 4)).foreign.isEmpty)
        // Once per silence: the next one, after another fall, reads again.
        #expect(policy.apply(.foreignSound(pid: mpvProcess, sounding: true, tick: 5)).foreign == [.readForeignStatus(player: mpv)])
        // The arbiter reports the pause it missed, then the play: the user's, an interruption.
        #expect(policy.foreign(.paused).interruptions.isEmpty)
        #expect(policy.foreignPlayers[mpv]?.pausedBy == music)
        #expect(policy.foreign(.playing).interruptions == [.interruptionBegan(music, reason: .otherApp(player: mpv))])
        #expect(policy.foreignPlayers[mpv]?.pausedBy == nil)
    }

    @Test func aPlayerThatSaidItPausedOrNeverFellSilentIsNotReadAgain() {
        var policy = SessionPolicy()
        policy.foreign(.playing)
        _ = policy.apply(.foreignSound(pid: mpvProcess, sounding: true, tick: 1))
        policy.add(music, .playback, playing: true)
        // Sounding through the pause (a stream that stays uncorked): no fall, no read.
        #expect(policy.apply(.foreignSound(pid: mpvProcess, sounding: true, tick: 2)).foreign.isEmpty)
        _ = policy.apply(.foreignSound(pid: mpvProcess, sounding: false, tick: 3))
        policy.foreign(.paused)  // said, as asked
        #expect(policy.foreignPlayers[mpv]?.expected == nil)
        #expect(policy.apply(.foreignSound(pid: mpvProcess, sounding: true, tick: 4)).foreign.isEmpty, "its Playing will say it")
    }

    @Test func aVanishedPlayerIsForgotten() {
        var policy = SessionPolicy()
        policy.foreign(.playing)
        policy.add(music, .playback, active: true)
        policy.foreign(.paused)
        _ = policy.apply(.foreignPlayerVanished(player: mpv))
        #expect(policy.foreignPlayers.isEmpty)
        #expect(policy.apply(.deactivate(music, notifyOthers: true)).foreign.isEmpty)
    }
}

@Suite("Other apps: interruptions, hints and the target")
struct ForeignInterruptionTests {
    @Test func aPlayerStartingInterruptsNonMixableSessionsWithoutResume() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(game, .ambient, active: true)
        policy.foreign(.paused)
        let started = policy.foreign(.playing)
        #expect(started.interruptions == [.interruptionBegan(music, reason: .otherApp(player: mpv))],
                "the ambient game mixes")
        #expect(policy.foreign(.paused).interruptions == [.interruptionEnded(music, shouldResume: false)])
    }

    @Test func aPlayerLeavingWhilePlayingEndsItsInterruption() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.foreign(.playing)
        #expect(policy[music]!.isInterrupted)
        #expect(policy.apply(.foreignProcessVanished(pid: mpvProcess)).interruptions
            == [.interruptionEnded(music, shouldResume: false)])
    }

    @Test func aPlayerSeenPlayingBeforeAnActivationButReportedAfterIsPausedNotAnInterrupter() {
        var policy = SessionPolicy()
        let seen = policy.activations  // the arbiter saw mpv play, then asked for its process
        policy.add(music, .playback, playing: true)
        let late = policy.foreign(.playing, seenAt: seen)
        #expect(late.interruptions.isEmpty, "music activated after mpv played: \(late)")
        #expect(late.foreign == [.pauseForeign(player: mpv, stop: false)])
        #expect(policy.foreignPlayers[mpv]?.pausedBy == music)
        #expect(policy.foreign(.paused, seenAt: policy.activations).interruptions.isEmpty)
        #expect(policy.apply(.deactivate(music, notifyOthers: true)).foreign == [.resumeForeign(player: mpv)])
    }

    @Test func observingAPlayerSeenPlayingBeforeAnActivationNeitherPausesItNorInterrupts() {
        var policy = SessionPolicy(configuration: .init(pausesOthers: false))
        let seen = policy.activations
        policy.add(music, .playback, playing: true)
        let late = policy.foreign(.playing, seenAt: seen)
        #expect(late.interruptions.isEmpty && late.foreign.isEmpty, "\(late)")
        #expect(policy[music]!.isActive)
    }

    @Test func aPlayerSeenStartingAfterAnActivationInterruptsItHoweverLateItIsReported() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        let seen = policy.activations
        policy.add(game, .ambient, active: true)  // counts an activation, but mixes
        let started = policy.foreign(.playing, seenAt: seen)
        #expect(started.interruptions == [.interruptionBegan(music, reason: .otherApp(player: mpv))])
        #expect(started.foreign.isEmpty)
    }

    @Test func anInterruptedSessionActivatingAgainPausesThePlayer() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.foreign(.playing)
        let again = policy.apply(.activate(music))
        #expect(again.interruptions == [.interruptionEnded(music, shouldResume: false)])
        #expect(again.foreign == [.pauseForeign(player: mpv, stop: false)])
    }

    @Test func foreignSoundCountsAsOtherAudioButEventSoundsNeverReachThePolicy() {
        var policy = SessionPolicy()
        policy.add(game, .ambient, active: true)
        let sounding = policy.apply(.foreignSound(pid: mpvProcess, sounding: true, tick: 5))
        #expect(sounding.contains(.otherAudioPlaying(game, true)))
        #expect(sounding.contains(.secondaryAudioShouldBeSilenced(game, true)))
        #expect(policy.otherAudioPlaying(for: game))
        let silent = policy.apply(.foreignSound(pid: mpvProcess, sounding: false, tick: 6))
        #expect(silent.contains(.otherAudioPlaying(game, false)))
        #expect(!policy.otherAudioPlaying(for: game))
    }

    @Test func theTargetIsWhoeverLastStartedSoundingAcrossApps() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true, remote: true, tick: 1)
        #expect(policy.target == .session(music))
        policy.foreign(.paused)
        // mpv's status alone does not make it the target…
        policy.foreign(.playing)
        _ = policy.apply(.activate(music))
        #expect(policy.target == .session(music))
        // …its sound does.
        let sounded = policy.apply(.foreignSound(pid: mpvProcess, sounding: true, tick: 7))
        #expect(sounded.last == .targetChanged(.foreign(player: mpv)))
        #expect(policy.target?.busName == mpv)
        _ = policy.apply(.foreignSound(pid: mpvProcess, sounding: false, tick: 8))
        #expect(policy.target == .foreign(player: mpv), "stopping does not give the keys away")
        _ = policy.apply(.soundStarted(music, tick: 9))
        #expect(policy.target == .session(music))
    }

    @Test func aSilentPlayerTogglingItsStatusNeverBecomesTheTarget() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true, remote: true, tick: 1)
        for i in 0..<20 {
            policy.foreign(i % 2 == 0 ? .playing : .paused, player: browser, pid: browserProcess)
            #expect(policy.target == .session(music), "after status change \(i)")
        }
    }

    @Test func soundWithoutAPlayerIsNoTarget() {
        var policy = SessionPolicy()
        _ = policy.apply(.foreignSound(pid: 700, sounding: true, tick: 3))
        #expect(policy.target == nil)
    }
}
