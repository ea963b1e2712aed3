#if canImport(AVFoundation)
import AVFoundation
import MediaPlayer
#else
import EarshotCompat
#endif

// Apple, "Audio Session Cookbook" (seed 004): its listings as an iOS developer writes them
// in Swift today. The AV Foundation listings are rendered line for line; those written
// against the C Audio Session Services (`AudioSessionSetProperty`, `AudioSessionInitialize`,
// …), which iOS 7 deprecated and Swift apps no longer call, are rendered with the
// AVAudioSession call that replaced each. The OpenAL (7-17, 7-18) and audio-unit (7-8)
// listings have no AVAudioSession rendering and are not ported (COMPAT-NOTES.md).

final class CookbookController: NSObject, AVAudioPlayerDelegate {
    var player: AVAudioPlayer?
    var appSoundPlayer: AVAudioPlayer?
    var playing = false
    var interruptedOnPlayback = false
    var interruptedWhilePlaying = false
    var hardwareSampleRate = 0.0
    var updates = 0
    var observers: [NSObjectProtocol] = []

    func updateUserInterface() { updates += 1 }

    // Listing 7-1 (AudioSessionInitialize with an interruption callback): the session
    // exists implicitly; the callback is an observer of the interruption notification.
    func initializeSession() {
        observers.append(NotificationCenter.default.addObserver(forName: AVAudioSession.interruptionNotification,
                                               object: AVAudioSession.sharedInstance(), queue: .main) { [weak self] note in
            self?.interruptionListener(note)
        })
    }

    // Listing 7-2: activating an audio session.
    func activate() {
        do {
            try AVAudioSession.sharedInstance().setActive(true)
        } catch {
            print("activation failed: \(error)")
        }
    }

    // Listing 7-3 (AudioSessionSetActive): the same as 7-2.

    // Listing 7-4: setting the category.
    func setAmbientCategory() {
        do {
            try AVAudioSession.sharedInstance().setCategory(.ambient)
        } catch {
            /* handle the error condition */
        }
    }

    // Listing 7-5 (kAudioSessionProperty_AudioCategory): the same as 7-4.

    // Listing 7-6: checking if other audio is playing.
    func chooseCategoryForOtherAudio() {
        let otherAudioIsPlaying = AVAudioSession.sharedInstance().isOtherAudioPlaying
        if otherAudioIsPlaying {
            try? AVAudioSession.sharedInstance().setCategory(.ambient)
        } else {
            try? AVAudioSession.sharedInstance().setCategory(.soloAmbient)
        }
    }

    // Listing 7-7 (kAudioSessionProperty_OverrideCategoryMixWithOthers): overriding mixing.
    func allowMixing() throws {
        try AVAudioSession.sharedInstance().setCategory(.playback, options: .mixWithOthers)
    }

    // Listing 7-9 (kAudioSessionProperty_OverrideAudioRoute): redirecting output audio.
    func overrideToSpeaker() throws {
        try AVAudioSession.sharedInstance().overrideOutputAudioPort(.speaker)
    }

    // Listing 7-10 (kAudioSessionProperty_OverrideCategoryDefaultToSpeaker).
    func defaultToSpeaker() throws {
        try AVAudioSession.sharedInstance().setCategory(.playAndRecord, mode: .default, options: .defaultToSpeaker)
    }

    // Listing 7-11 (kAudioSessionProperty_OverrideCategoryEnableBluetoothInput).
    func allowBluetoothInput() throws {
        try AVAudioSession.sharedInstance().setCategory(.playAndRecord, options: .allowBluetooth)
    }

    // Listing 7-12 (AVAudioSessionDelegate, removed in iOS 6): the delegate's two methods,
    // called from the interruption notification (see 7-16).
    func beginInterruption() {
        if playing {
            playing = false
            interruptedWhilePlaying = true
            updateUserInterface()
        }
    }

    func endInterruption() {
        if interruptedWhilePlaying {
            try? AVAudioSession.sharedInstance().setActive(true)
            player?.play()
            playing = true
            interruptedWhilePlaying = false
            updateUserInterface()
        }
    }

    // Listing 7-13: an interruption-started delegate method for an audio player.
    func audioPlayerBeginInterruption(_ player: AVAudioPlayer) {
        if playing {
            playing = false
            interruptedOnPlayback = true
            updateUserInterface()
        }
    }

    // Listing 7-14: an interruption-ended delegate method (iOS 4's `audioPlayerEndInterruption:`
    // became `audioPlayerEndInterruption(_:withOptions:)`).
    func audioPlayerEndInterruption(_ player: AVAudioPlayer, withOptions flags: Int) {
        if interruptedOnPlayback {
            player.prepareToPlay()
            player.play()
            playing = true
            interruptedOnPlayback = false
        }
    }

    // Listing 7-15: an interruption method.
    func resumePlayback() {
        try? AVAudioSession.sharedInstance().setCategory(.playback)
        try? AVAudioSession.sharedInstance().setActive(true)
        player?.play()
    }

    func pausePlayback() { player?.pause() }

    // Listing 7-16: an interruption listener (the notification's handler).
    func interruptionListener(_ note: Notification) {
        guard let value = note.userInfo?[AVAudioSessionInterruptionTypeKey] as? UInt,
              let type = AVAudioSession.InterruptionType(rawValue: value) else { return }
        if type == .began {
            if player != nil {
                pausePlayback()
                interruptedOnPlayback = true
            }
        } else if type == .ended && interruptedOnPlayback {
            resumePlayback()
            interruptedOnPlayback = false
        }
    }

    // Listings 7-19 to 7-21: a route-change listener (UIAlertView left out: no UIKit).
    func registerRouteChangeListener() {
        observers.append(NotificationCenter.default.addObserver(forName: AVAudioSession.routeChangeNotification,
                                               object: nil, queue: .main) { [weak self] note in
            self?.audioRouteChangeListener(note)
        })
    }

    func audioRouteChangeListener(_ note: Notification) {
        if appSoundPlayer?.isPlaying != true {
            return
        } else {
            guard let value = note.userInfo?[AVAudioSessionRouteChangeReasonKey] as? UInt,
                  let routeChangeReason = AVAudioSession.RouteChangeReason(rawValue: value) else { return }
            if routeChangeReason == .oldDeviceUnavailable {
                appSoundPlayer?.pause()
            }
        }
    }

    // Listing 7-22: specifying the preferred I/O buffer duration.
    func preferShortBuffers() {
        let preferredBufferDuration: TimeInterval = 0.005
        do {
            try AVAudioSession.sharedInstance().setPreferredIOBufferDuration(preferredBufferDuration)
        } catch {
            print("cannot set the buffer duration: \(error)")
        }
    }

    // Listings 7-24 and 7-25: the hardware sample rate (`currentHardwareSampleRate` became
    // `sampleRate`).
    func readSampleRate() {
        hardwareSampleRate = AVAudioSession.sharedInstance().sampleRate
    }

    // Listings 7-26 and 7-27: whether a device supports recording (`inputIsAvailable`
    // became `isInputAvailable`).
    func canRecord() -> Bool {
        let inputAvailable = AVAudioSession.sharedInstance().isInputAvailable
        return inputAvailable
    }
}
