#if canImport(AVFoundation)
import AVFoundation
import MediaPlayer
#else
import EarshotCompat
#endif

// An iOS app's audio code, ported to Linux by its import block alone (issue 34): the seeds'
// listings (Neuburg's remote-controlled player and its Interrupter, Apple's interruption
// handler) as an app runs them, for `SessionIOSPortTests` to drive across processes.
//
//   earshot-ios-ports nowplaying FILE    plays FILE in Playback with remote commands and
//                                        now-playing info, and no publishing call
//   earshot-ios-ports interrupter FILE   plays FILE in Playback, then deactivates with
//                                        notifyOthersOnDeactivation (Neuburg's Interrupter)
//
// Each prints what the app's handlers and delegate see, one line each, and exits when its
// player finishes.

/// A line on stdout, at once (the test reads it while the process runs).
func say(_ line: String) {
    print(line)
    fflush(stdout)
}

/// The remote-controlled player: Neuburg's view controller with its now-playing info, and
/// Apple's interruption handler ("Handling audio interruptions").
final class RemoteControlledPlayer: NSObject, AVAudioPlayerDelegate {
    var player: AVAudioPlayer?
    var observer: NSObjectProtocol?

    func start(_ path: String) throws {
        let session = AVAudioSession.sharedInstance()
        try session.setCategory(.playback, mode: .default, options: [])
        try session.setActive(true)
        let player = try AVAudioPlayer(contentsOf: URL(fileURLWithPath: path))
        player.delegate = self
        self.player = player
        observer = NotificationCenter.default.addObserver(forName: AVAudioSession.interruptionNotification,
                                                          object: session, queue: .main) { [weak self] notification in
            self?.handleInterruption(notification)
        }
        let commands = MPRemoteCommandCenter.shared()
        commands.playCommand.addTarget { [weak self] _ in
            self?.player?.play()
            say("command: play")
            return .success
        }
        commands.pauseCommand.addTarget { [weak self] _ in
            self?.player?.pause()
            say("command: pause")
            return .success
        }
        commands.togglePlayPauseCommand.addTarget { [weak self] _ in
            guard let player = self?.player else { return .noSuchContent }
            if player.isPlaying { player.pause() } else { player.play() }
            say("command: togglePlayPause")
            return .success
        }
        MPNowPlayingInfoCenter.default().nowPlayingInfo = [
            MPMediaItemPropertyTitle: "TidBITS News",
            MPMediaItemPropertyArtist: "Matt Neuburg",
            MPMediaItemPropertyPlaybackDuration: player.duration,
            MPNowPlayingInfoPropertyElapsedPlaybackTime: player.currentTime,
            MPNowPlayingInfoPropertyPlaybackRate: 1.0,
        ]
        player.prepareToPlay()
        player.play()
        say("playing")
    }

    func handleInterruption(_ notification: Notification) {
        guard let userInfo = notification.userInfo,
              let typeValue = userInfo[AVAudioSessionInterruptionTypeKey] as? UInt,
              let type = AVAudioSession.InterruptionType(rawValue: typeValue) else {
            return
        }
        switch type {
        case .began:
            say("interruption: type \(typeValue)")
        case .ended:
            guard let optionsValue = userInfo[AVAudioSessionInterruptionOptionKey] as? UInt else { return }
            let options = AVAudioSession.InterruptionOptions(rawValue: optionsValue)
            say("interruption: type \(typeValue), options \(optionsValue)")
            if options.contains(.shouldResume) { player?.play() }
        }
    }

    func audioPlayerDidFinishPlaying(_ player: AVAudioPlayer, successfully flag: Bool) {
        say("finished: \(flag)")
        exit(0)
    }
}

/// Neuburg's Interrupter: plays a sound of its own in Playback, then lets the others resume.
final class Interrupter: NSObject, AVAudioPlayerDelegate {
    var player: AVAudioPlayer?

    func playInterruptingSound(_ path: String) throws {
        player = try AVAudioPlayer(contentsOf: URL(fileURLWithPath: path))
        try AVAudioSession.sharedInstance().setCategory(.playback, options: [])
        try AVAudioSession.sharedInstance().setActive(true, options: [])
        self.player?.delegate = self
        self.player?.prepareToPlay()
        self.player?.play()
        say("playing")
    }

    func audioPlayerDidFinishPlaying(_ player: AVAudioPlayer, successfully flag: Bool) {
        try? AVAudioSession.sharedInstance().setActive(false, options: .notifyOthersOnDeactivation)
        say("finished: \(flag)")
        exit(0)
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch (arguments.first, arguments.count) {
    case ("nowplaying", 2):
        let app = RemoteControlledPlayer()
        try app.start(arguments[1])
        withExtendedLifetime(app) { dispatchMain() }
    case ("interrupter", 2):
        let app = Interrupter()
        try app.playInterruptingSound(arguments[1])
        withExtendedLifetime(app) { dispatchMain() }
    default:
        FileHandle.standardError.write(Data("usage: earshot-ios-ports nowplaying FILE | interrupter FILE\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("earshot-ios-ports: \(error)\n".utf8))
    exit(1)
}
