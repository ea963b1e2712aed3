#if canImport(AVFoundation)
import AVFoundation
import MediaPlayer
#else
import EarshotCompat
#endif

// Neuburg, "Programming iOS 6", chapter 27 "Audio" (seeds 000 and 002): its Objective-C
// listings as an iOS developer writes them in Swift today. The UIKit remote-control
// listings (`remoteControlReceivedWithEvent:`, `beginReceivingRemoteControlEvents`) are
// rendered with MPRemoteCommandCenter, which replaced them; the labels of the now-playing
// listing are strings (no UIKit).

// MARK: System sounds

/// The sound completion handler (`void SoundFinished (SystemSoundID snd, void* context)`).
func SoundFinished(_ snd: SystemSoundID, _ context: UnsafeMutableRawPointer?) {
    AudioServicesRemoveSystemSoundCompletion(snd)
    AudioServicesDisposeSystemSoundID(snd)
}

enum NeuburgSystemSounds {
    /// The first system-sound listing: create and play.
    static func playTest() {
        let sndurl = Bundle.main.url(forResource: "test", withExtension: "aif")!
        var snd: SystemSoundID = 0
        AudioServicesCreateSystemSoundID(sndurl as CFURL, &snd)
        AudioServicesPlaySystemSound(snd)
    }

    /// The second: with a completion that disposes of the sound.
    static func playTestThenDispose(_ sndurl: URL) {
        var snd: SystemSoundID = 0
        AudioServicesCreateSystemSoundID(sndurl as CFURL, &snd)
        AudioServicesAddSystemSoundCompletion(snd, nil, nil, SoundFinished, nil)
        AudioServicesPlaySystemSound(snd)
    }

    /// The same with a closure, as Swift code often passes it.
    static func playWithClosure(_ sndurl: URL) {
        var snd: SystemSoundID = 0
        AudioServicesCreateSystemSoundID(sndurl as CFURL, &snd)
        AudioServicesAddSystemSoundCompletion(snd, nil, nil, { snd, _ in
            AudioServicesRemoveSystemSoundCompletion(snd)
            AudioServicesDisposeSystemSoundID(snd)
        }, nil)
        AudioServicesPlaySystemSound(snd)
    }
}

// MARK: Audio session

enum NeuburgSession {
    /// application:didFinishLaunchingWithOptions: — the Ambient policy.
    static func didFinishLaunching() {
        try? AVAudioSession.sharedInstance().setCategory(.ambient, options: [])
    }

    /// applicationDidBecomeActive: — activate.
    static func didBecomeActive() {
        try? AVAudioSession.sharedInstance().setActive(true, options: [])
    }

    /// Just before a brief sound: duck others.
    static func duck() {
        try? AVAudioSession.sharedInstance().setCategory(.ambient, options: .duckOthers)
    }

    /// After it: stop ducking (deactivate, change the options, activate again).
    static func unduck() {
        try? AVAudioSession.sharedInstance().setActive(false, options: [])
        try? AVAudioSession.sharedInstance().setCategory(.ambient, options: [])
        try? AVAudioSession.sharedInstance().setActive(true, options: [])
    }

    /// The interruption notification: began or ended, and ended's resume option.
    static func observeInterruptions(_ handler: @escaping (String) -> Void) -> NSObjectProtocol {
        NotificationCenter.default.addObserver(forName: AVAudioSession.interruptionNotification,
                                               object: nil, queue: nil) { n in
            let why = n.userInfo![AVAudioSessionInterruptionTypeKey] as! UInt
            if why == AVAudioSession.InterruptionType.began.rawValue {
                handler("interruption began")
            } else {
                let opt = n.userInfo![AVAudioSessionInterruptionOptionKey] as! UInt
                if opt == AVAudioSession.InterruptionOptions.shouldResume.rawValue {
                    handler("interruption ended, should resume")
                } else {
                    handler("interruption ended")
                }
            }
        }
    }

    /// The route-change notification: its reason and the previous route.
    static func observeRouteChanges(_ handler: @escaping (AVAudioSession.RouteChangeReason, AVAudioSessionRouteDescription?) -> Void) -> NSObjectProtocol {
        NotificationCenter.default.addObserver(forName: AVAudioSession.routeChangeNotification,
                                               object: nil, queue: nil) { n in
            let reason = n.userInfo![AVAudioSessionRouteChangeReasonKey] as! UInt
            let previous = n.userInfo![AVAudioSessionRouteChangePreviousRouteKey] as? AVAudioSessionRouteDescription
            if let reason = AVAudioSession.RouteChangeReason(rawValue: reason) {
                handler(reason, previous)
            }
        }
    }
}

// MARK: Audio player

/// The chapter's Player class: one player at a time, a notification when its sound ends.
final class Player: NSObject, AVAudioPlayerDelegate {
    var player: AVAudioPlayer?

    func play(_ path: String) {
        let fileURL = URL(fileURLWithPath: path)
        let newPlayer = try? AVAudioPlayer(contentsOf: fileURL)
        // error-checking omitted
        self.player = newPlayer // retain policy
        self.player?.prepareToPlay()
        self.player?.delegate = self
        self.player?.play()
    }

    func audioPlayerDidFinishPlaying(_ player: AVAudioPlayer, successfully flag: Bool) { // delegate method
        NotificationCenter.default.post(name: Notification.Name("soundFinished"), object: nil)
    }

    /// The properties the chapter lists.
    func configure() {
        guard let player else { return }
        player.pan = -0.5
        player.volume = 0.8
        player.numberOfLoops = -1
        print(player.duration, player.currentTime)
        player.currentTime = 1.5
        player.enableRate = true
        player.prepareToPlay()
        player.rate = 1.5
        player.isMeteringEnabled = true
        player.updateMeters()
        print(player.averagePower(forChannel: 0), player.peakPower(forChannel: 0))
        print(player.settings[AVSampleRateKey] as Any, player.settings[AVFormatIDKey] as Any)
        player.play(atTime: player.deviceCurrentTime + 0.5)
    }
}

// MARK: Remote control

final class RemoteControlledViewController: NSObject {
    var player: AVAudioPlayer?
    var titleLabelText = "TidBITS News"
    var authorLabelText = "Matt Neuburg"

    /// viewDidAppear: — become the remote-control target (`beginReceivingRemoteControlEvents`
    /// became a handler on the command center).
    func viewDidAppear() {
        MPRemoteCommandCenter.shared().togglePlayPauseCommand.addTarget { [weak self] _ in
            self?.remoteControlReceived()
            return .success
        }
    }

    /// remoteControlReceivedWithEvent: — toggle play and pause.
    func remoteControlReceived() {
        if let player = self.player {
            if player.isPlaying {
                player.pause()
            } else {
                player.play()
            }
        }
    }

    /// The now-playing info the chapter's app shows.
    func showNowPlaying() {
        let mpic = MPNowPlayingInfoCenter.default()
        mpic.nowPlayingInfo = [
            MPMediaItemPropertyTitle: self.titleLabelText,
            MPMediaItemPropertyArtist: self.authorLabelText,
        ]
    }
}

// MARK: Playing sound in the background

/// Interrupter: plays a sound of its own in Playback, then lets the background audio resume.
final class Interrupter: NSObject, AVAudioPlayerDelegate {
    var player: AVAudioPlayer?

    func playInterruptingSound() {
        try? AVAudioSession.sharedInstance().setCategory(.playback, options: [])
        try? AVAudioSession.sharedInstance().setActive(true, options: [])
        self.player?.delegate = self
        self.player?.prepareToPlay()
        self.player?.play()
    }

    func audioPlayerDidFinishPlaying(_ player: AVAudioPlayer, successfully flag: Bool) {
        try? AVAudioSession.sharedInstance().setActive(false, options: .notifyOthersOnDeactivation)
        try? AVAudioSession.sharedInstance().setCategory(.ambient, options: [])
        try? AVAudioSession.sharedInstance().setActive(true, options: [])
    }
}

/// BackgroundPlayer: resumes when the interruption ends with the resume option.
final class BackgroundPlayer: NSObject, AVAudioPlayerDelegate {
    var resumed = 0

    func audioPlayerEndInterruption(_ p: AVAudioPlayer, withOptions opts: Int) {
        if AVAudioSession.InterruptionOptions(rawValue: UInt(opts)).contains(.shouldResume) {
            p.prepareToPlay()
            p.play()
            resumed += 1
        }
    }
}
