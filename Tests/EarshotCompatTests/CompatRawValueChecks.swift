#if canImport(AVFoundation)
import AVFoundation
import MediaPlayer
#else
import EarshotCompat
#endif
import Testing

/// Apple's raw values, which apps store, compare and pass through `userInfo`. Nothing here
/// needs a bus or a sound server; on iOS the same checks pass against the SDK.
@Suite("EarshotCompat: Apple's raw values")
struct CompatRawValueChecks {
    @Test func sessionTypes() {
        #expect(AVAudioSession.InterruptionType.began.rawValue == 1)
        #expect(AVAudioSession.InterruptionType.ended.rawValue == 0)
        #expect(AVAudioSession.InterruptionOptions.shouldResume.rawValue == 1)
        #expect(AVAudioSession.SetActiveOptions.notifyOthersOnDeactivation.rawValue == 1)
        #expect(AVAudioSession.SilenceSecondaryAudioHintType.begin.rawValue == 1)
        #expect(AVAudioSession.SilenceSecondaryAudioHintType.end.rawValue == 0)
        #expect(AVAudioSession.PortOverride.speaker.rawValue == 0x7370_6B72)
        #expect(AVAudioSession.RecordPermission.granted.rawValue == 0x6772_6E74)
        #expect(AVAudioSession.InterruptionReason.routeDisconnected.rawValue == 4)
    }

    @Test func categoryOptions() {
        typealias Options = AVAudioSession.CategoryOptions
        #expect(Options.mixWithOthers.rawValue == 1)
        #expect(Options.duckOthers.rawValue == 2)
        #expect(Options.allowBluetooth.rawValue == 4)
        #expect(Options.defaultToSpeaker.rawValue == 8)
        #expect(Options.interruptSpokenAudioAndMixWithOthers.rawValue == 0x11)
        #expect(Options.allowBluetoothA2DP.rawValue == 0x20)
        #expect(Options.allowAirPlay.rawValue == 0x40)
        #expect(Options.overrideMutedMicrophoneInterruption.rawValue == 0x80)
        #expect(Options.interruptSpokenAudioAndMixWithOthers.contains(.mixWithOthers))
        let options: Options = [.duckOthers, .allowBluetooth]
        #expect(options.rawValue == 6)
    }

    @Test func routeChangeReasons() {
        let reasons: [(AVAudioSession.RouteChangeReason, UInt)] = [
            (.unknown, 0), (.newDeviceAvailable, 1), (.oldDeviceUnavailable, 2), (.categoryChange, 3),
            (.override, 4), (.wakeFromSleep, 6), (.noSuitableRouteForCategory, 7), (.routeConfigurationChange, 8),
        ]
        for (reason, value) in reasons {
            #expect(reason.rawValue == value)
            #expect(AVAudioSession.RouteChangeReason(rawValue: value) == reason)
        }
        #expect(AVAudioSession.RouteChangeReason(rawValue: 5) == nil)
    }

    @Test func categoriesModesAndPorts() {
        #expect(AVAudioSession.Category.playback.rawValue == "AVAudioSessionCategoryPlayback")
        #expect(AVAudioSession.Category.ambient.rawValue == "AVAudioSessionCategoryAmbient")
        #expect(AVAudioSession.Category(rawValue: "AVAudioSessionCategorySoloAmbient") == .soloAmbient)
        #expect(AVAudioSession.Mode.spokenAudio.rawValue == "AVAudioSessionModeSpokenAudio")
        #expect(AVAudioSession.Mode.default.rawValue == "AVAudioSessionModeDefault")
        #expect(AVAudioSession.Port.headphones.rawValue == "Headphones")
        #expect(AVAudioSession.Port.builtInSpeaker.rawValue == "Speaker")
    }

    @Test func mediaPlayerTypes() {
        #expect(MPRemoteCommandHandlerStatus.success.rawValue == 0)
        #expect(MPRemoteCommandHandlerStatus.noSuchContent.rawValue == 100)
        #expect(MPRemoteCommandHandlerStatus.noActionableNowPlayingItem.rawValue == 110)
        #expect(MPRemoteCommandHandlerStatus.deviceNotFound.rawValue == 120)
        #expect(MPRemoteCommandHandlerStatus.commandFailed.rawValue == 200)
        #expect(MPRepeatType.all.rawValue == 2)
        #expect(MPShuffleType.items.rawValue == 1)
        #expect(MPNowPlayingPlaybackState.paused.rawValue == 2)
        #expect(MPNowPlayingPlaybackState.interrupted.rawValue == 4)
    }

    @Test func systemSoundConstants() {
        #expect(kSystemSoundID_Vibrate == 4095)
        #expect(kAudioServicesNoError == 0)
        #expect(kAudioFormatLinearPCM == 0x6C70_636D)
        #expect(kAudioFormatMPEG4AAC == 0x6161_6320)
    }

    /// iOS stores these values as `NSNumber`s; apps read them back as `UInt`.
    @Test func userInfoNumbersBridge() {
        let userInfo: [AnyHashable: Any] = [
            AVAudioSessionInterruptionTypeKey: NSNumber(value: AVAudioSession.InterruptionType.began.rawValue),
        ]
        let value = userInfo[AVAudioSessionInterruptionTypeKey] as? UInt
        #expect(value == 1)
        #expect(value.flatMap(AVAudioSession.InterruptionType.init(rawValue:)) == .began)
    }
}
