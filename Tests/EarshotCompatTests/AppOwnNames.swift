#if canImport(AVFoundation)
import AVFoundation
import MediaPlayer
#else
import EarshotCompat
#endif

// An app's own types named as Earshot's are (AudioPlayer, AudioSession, SystemSound):
// EarshotCompat does not re-export Earshot, so they clash with nothing. This file compiles,
// which is the check.

/// The app's own player wrapper, as many iOS apps have one.
final class AudioPlayer: NSObject, AVAudioPlayerDelegate {
    private var player: AVAudioPlayer?
    var onFinish: (() -> Void)?

    func play(_ url: URL) throws {
        player = try AVAudioPlayer(contentsOf: url)
        player?.delegate = self
        player?.play()
    }

    func audioPlayerDidFinishPlaying(_ player: AVAudioPlayer, successfully flag: Bool) {
        onFinish?()
    }
}

/// The app's own session helper.
enum AudioSession {
    static func configure() throws {
        try AVAudioSession.sharedInstance().setCategory(.playback, mode: .default, options: [])
    }
}

/// The app's own system sound.
struct SystemSound {
    let id: SystemSoundID
    func play() { AudioServicesPlaySystemSound(id) }
}
