import SessionPolicy
import Testing

@Suite("Categories and options")
struct CategoryTests {
    @Test func soloAmbientIsTheDefaultCategory() {
        var policy = SessionPolicy()
        policy.run(.register(game, appName: "game", tick: 1))
        let session = policy[game]!
        #expect(session.category == .soloAmbient)
        #expect(session.options.isEmpty)
        #expect(session.mode == .default)
        #expect(!session.isMixable)
        #expect(!session.isActive)
    }

    @Test func ambientMixesWithOtherAudio() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        let decisions = policy.add(game, .ambient, playing: true)
        #expect(decisions.interruptions.isEmpty)
        #expect(policy[music]!.isProducingSound && policy[game]!.isProducingSound)
        #expect(policy[game]!.isMixable)
    }

    @Test func ambientIsSilencedWhileTheScreenIsLocked() {
        var policy = SessionPolicy()
        policy.add(game, .ambient, playing: true)
        #expect(policy.apply(.screenLockChanged(locked: true)).interruptions
            == [.interruptionBegan(game, reason: .screenLocked)])
        #expect(!policy[game]!.isActive && !policy[game]!.isProducingSound)
        #expect(policy.apply(.screenLockChanged(locked: false)).interruptions
            == [.interruptionEnded(game, shouldResume: true)])
    }

    @Test func ambientIsSilencedInSilentMode() {
        var policy = SessionPolicy()
        policy.add(game, .ambient, active: true)
        #expect(policy.apply(.silentModeChanged(on: true)).interruptions
            == [.interruptionBegan(game, reason: .silentMode)])
        #expect(policy.apply(.silentModeChanged(on: false)).interruptions
            == [.interruptionEnded(game, shouldResume: false)])
    }

    @Test func soloAmbientIsSilencedLikeAmbient() {
        var policy = SessionPolicy()
        policy.add(game, .soloAmbient, playing: true)
        #expect(policy.apply(.silentModeChanged(on: true)).interruptions
            == [.interruptionBegan(game, reason: .silentMode)])
        policy.run(.silentModeChanged(on: false), .activate(game))
        #expect(policy.apply(.screenLockChanged(locked: true)).interruptions
            == [.interruptionBegan(game, reason: .screenLocked)])
    }

    @Test func soloAmbientInterruptsOtherNonMixableSessionsWhenItActivates() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(navigation, .playback, options: .mixWithOthers, playing: true)
        let decisions = policy.add(game, .soloAmbient, active: true)
        #expect(decisions.interruptions == [.interruptionBegan(music, reason: .sessionActivated(game))])
        #expect(policy[navigation]!.isProducingSound)
    }

    @Test func playbackInterruptsNonMixableSessions() {
        var policy = SessionPolicy()
        policy.add(game, .soloAmbient, playing: true)
        let decisions = policy.add(music, .playback, active: true)
        #expect(decisions.interruptions == [.interruptionBegan(game, reason: .sessionActivated(music))])
    }

    @Test func playbackWithMixWithOthersInterruptsNobody() {
        var policy = SessionPolicy()
        policy.add(game, .soloAmbient, playing: true)
        let decisions = policy.add(music, .playback, options: .mixWithOthers, playing: true)
        #expect(decisions.interruptions.isEmpty)
        #expect(policy[game]!.isProducingSound)
    }

    @Test func playbackKeepsPlayingWhenLockedAndInSilentMode() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        let decisions = policy.run(.screenLockChanged(locked: true), .silentModeChanged(on: true))
        #expect(decisions.interruptions.isEmpty)
        #expect(policy[music]!.isActive && policy[music]!.isProducingSound)
    }

    @Test func recordIsNonMixableAndInterruptsNonMixablePlayback() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(game, .ambient, playing: true)
        let decisions = policy.add(call, .record, active: true)
        #expect(decisions.interruptions == [.interruptionBegan(music, reason: .sessionActivated(call))])
        #expect(!policy[call]!.isMixable)
        #expect(policy[game]!.isProducingSound)
    }

    @Test func playbackActivationInterruptsRecord() {
        var policy = SessionPolicy()
        policy.add(call, .record, active: true)
        let decisions = policy.add(music, .playback, active: true)
        #expect(decisions.interruptions == [.interruptionBegan(call, reason: .sessionActivated(music))])
    }

    @Test func playAndRecordMixesOnlyWithMixWithOthers() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        #expect(policy.add(call, .playAndRecord, options: .mixWithOthers, active: true).interruptions.isEmpty)
        #expect(policy.apply(.setCategory(call, .playAndRecord)).interruptions
            == [.interruptionBegan(music, reason: .sessionActivated(call))])
    }

    @Test func recordAndPlayAndRecordKeepRunningWhenLocked() {
        var policy = SessionPolicy()
        policy.add(call, .playAndRecord, options: .mixWithOthers, playing: true)
        policy.add(podcast, .record, active: true)
        let decisions = policy.run(.screenLockChanged(locked: true), .silentModeChanged(on: true))
        #expect(decisions.interruptions.isEmpty)
        #expect(policy[call]!.isProducingSound && policy[podcast]!.isActive)
    }

    @Test func activatingWhileSilencedInterruptsTheSessionAtOnce() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(game, .soloAmbient)
        policy.run(.screenLockChanged(locked: true))
        let decisions = policy.apply(.activate(game))
        #expect(decisions.interruptions == [.interruptionBegan(game, reason: .screenLocked)])
        #expect(policy[music]!.isProducingSound, "a silenced session interrupts nobody")
        #expect(policy.apply(.screenLockChanged(locked: false)).interruptions.isEmpty,
                "resuming would interrupt the music, so the music holds the game until it stops")
        #expect(policy[game]!.interruptions == [.sessionActivated(music)])
        #expect(policy.apply(.deactivate(music, notifyOthers: true)).interruptions
            == [.interruptionEnded(game, shouldResume: false)])
    }

    @Test func mixingOptionsAreRejectedForCategoriesThatCannotMix() {
        var policy = SessionPolicy()
        policy.add(game)
        let before = policy
        for category in [Category.soloAmbient, .record] {
            for options in [CategoryOptions.mixWithOthers, .duckOthers, .interruptSpokenAudioAndMixWithOthers] {
                #expect(policy.apply(.setCategory(game, category, options: options))
                    == [.rejected(game, reason: .optionsNotAllowedForCategory)])
            }
        }
        #expect(policy.apply(.setCategory(game, .ambient, options: .interruptSpokenAudioAndMixWithOthers))
            == [.rejected(game, reason: .optionsNotAllowedForCategory)])
        #expect(policy == before)
        #expect(policy.apply(.setCategory(game, .ambient, options: .mixWithOthers)).isEmpty)
    }

    @Test func theRejectedOptionIsNamedForTheError() {
        #expect(CategoryOptions.duckOthers.firstDisallowed(with: .record) == .duckOthers)
        #expect(CategoryOptions([.mixWithOthers, .duckOthers]).firstDisallowed(with: .soloAmbient) == .duckOthers)
        #expect(CategoryOptions.mixWithOthers.firstDisallowed(with: .record) == .mixWithOthers)
        #expect(CategoryOptions.interruptSpokenAudioAndMixWithOthers.firstDisallowed(with: .ambient)
            == .interruptSpokenAudioAndMixWithOthers)
        #expect(CategoryOptions([.duckOthers, .allowBluetooth]).firstDisallowed(with: .ambient) == nil)
        #expect(CategoryOptions.duckOthers.firstDisallowed(with: .playback) == nil)
    }

    @Test func ambientAcceptsDuckOthersAndReadsBackMixWithOthers() {
        var policy = SessionPolicy()
        policy.add(game)
        #expect(policy.apply(.setCategory(game, .ambient, options: .duckOthers)).isEmpty)
        #expect(policy[game]!.options == [.duckOthers, .mixWithOthers])
        #expect(policy[game]!.ducksOthers)
    }

    @Test func routeOptionsAreAcceptedKeptAndReadBackWithEveryCategory() {
        let route: CategoryOptions = [.allowBluetooth, .allowBluetoothA2DP, .allowAirPlay, .defaultToSpeaker]
        for category in Category.allCases {
            var policy = SessionPolicy()
            policy.add(call)
            #expect(policy.apply(.setCategory(call, category, options: route)).isEmpty, "\(category)")
            #expect(policy[call]!.options == route.normalized(for: category))
            #expect(policy[call]!.options.isSuperset(of: route))
            #expect(policy[call]!.isMixable == (category == .ambient), "route options do not make \(category) mixable")
        }
    }

    @Test func everyModeIsKeptAndOnlySpokenAudioChangesARule() {
        for mode in Mode.allCases {
            var policy = SessionPolicy()
            policy.add(podcast, .playback, mode: mode, playing: true)
            #expect(policy[podcast]!.mode == mode)
            let prompt = policy.add(navigation, .playback, options: .interruptSpokenAudioAndMixWithOthers, active: true)
            #expect(prompt.interruptions.isEmpty == (mode != .spokenAudio), "\(mode)")
        }
        #expect(Set(Mode.allCases.map(\.rawValue)).isSuperset(of:
            ["default", "voiceChat", "videoChat", "gameChat", "videoRecording", "measurement", "moviePlayback", "spokenAudio"]))
    }

    @Test func duckOthersAndInterruptSpokenAudioImplyMixWithOthers() {
        var policy = SessionPolicy()
        policy.add(navigation, .playback, options: .duckOthers)
        #expect(policy[navigation]!.options == [.duckOthers, .mixWithOthers])
        policy.run(.setCategory(navigation, .playback, options: CategoryOptions(rawValue: 0x10)))
        #expect(policy[navigation]!.options == .interruptSpokenAudioAndMixWithOthers)
        policy.run(.setCategory(navigation, .ambient))
        #expect(policy[navigation]!.options == .mixWithOthers)
    }

    @Test func optionsResetWhenTheCategoryIsSet() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.add(navigation, .playback, options: .duckOthers, active: true)
        #expect(policy[music]!.isDucked)
        let decisions = policy.apply(.setCategory(navigation, .playAndRecord, options: .mixWithOthers))
        #expect(policy[navigation]!.options == .mixWithOthers)
        #expect(decisions.ducking.isEmpty, "the ducking already in force stays until deactivation")
        #expect(policy.apply(.deactivate(navigation, notifyOthers: false)).ducking == [.unduck(music)])
    }

    @Test func unmodelledOptionBitsAreKeptWithoutEffect() {
        var policy = SessionPolicy()
        let allowBluetooth = CategoryOptions(rawValue: 0x4)
        policy.add(call, .playAndRecord, options: allowBluetooth)
        #expect(policy[call]!.options == allowBluetooth)
        #expect(!policy[call]!.isMixable)
    }

    @Test("options print by their iOS names; interruptSpokenAudioAndMixWithOthers stands for the mixWithOthers bit it includes")
    func optionsDescribeThemselvesByName() {
        #expect("\(CategoryOptions())" == "[]")
        #expect("\(CategoryOptions([.duckOthers, .mixWithOthers, .allowAirPlay]))" == "[mixWithOthers, duckOthers, allowAirPlay]")
        #expect(CategoryOptions.interruptSpokenAudioAndMixWithOthers.names == ["interruptSpokenAudioAndMixWithOthers"])
        // Every named option reads back as its own name alone.
        for (name, option) in CategoryOptions.named { #expect(option.names == [name]) }
    }
}
