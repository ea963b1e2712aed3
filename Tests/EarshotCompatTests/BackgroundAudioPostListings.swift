#if canImport(AVFoundation)
import AVFoundation
import MediaPlayer
#else
import EarshotCompat
#endif

// "iOS – Playing audio in the background" (seed 003): its listings as an iOS developer
// writes them in Swift today. `[AVAudioSession setDelegate:]` (removed in iOS 6) became
// the interruption notification; the C route-change listener
// (`AudioSessionAddPropertyListener`) became the route-change notification; the UIKit
// remote-control listing became MPRemoteCommandCenter. The AVQueuePlayer listing's
// `addObserver:selector:` became the block-based observer (no Objective-C runtime).

/// "Playing audio content": a queue that advances, and a handler for each item's end.
final class JukeboxController: NSObject {
    let avQueuePlayer: AVQueuePlayer
    var itemsEnded = 0
    var observer: NSObjectProtocol?

    init(items: [AVPlayerItem]) {
        avQueuePlayer = AVQueuePlayer(items: items)
        super.init()
        avQueuePlayer.actionAtItemEnd = .advance
        observer = NotificationCenter.default.addObserver(forName: .AVPlayerItemDidPlayToEndTime,
                                                          object: avQueuePlayer.currentItem, queue: .main) { [weak self] notification in
            self?.playerItemDidReachEnd(notification)
        }
    }

    func playerItemDidReachEnd(_ notification: Notification) {
        // allow for state updates, UI changes
        itemsEnded += 1
    }
}

final class BackgroundAudioManager: NSObject {
    var isPaused = false
    var observers: [NSObjectProtocol] = []

    func initAudioSession() {
        // Registers this object for audio interruptions.
        observers.append(NotificationCenter.default.addObserver(
            forName: AVAudioSession.interruptionNotification, object: nil, queue: .main) { [weak self] note in
            self?.handleInterruption(note)
        })
        // Set the audio category of this app to playback.
        do {
            try AVAudioSession.sharedInstance().setCategory(.playback)
        } catch {
            // RESPOND APPROPRIATELY
        }
        // Registers the audio route change listener.
        observers.append(NotificationCenter.default.addObserver(
            forName: AVAudioSession.routeChangeNotification, object: nil, queue: .main) { [weak self] note in
            self?.audioRouteChangeListener(note)
        })
        // Activate the audio session.
        do {
            try AVAudioSession.sharedInstance().setActive(true)
        } catch {
            // RESPOND APPROPRIATELY
        }
    }

    func audioRouteChangeListener(_ note: Notification) {
        // Determines the reason for the route change, to ensure that it is not because of
        // a category change.
        guard let reasonValue = note.userInfo?[AVAudioSessionRouteChangeReasonKey] as? UInt,
              let routeChangeReason = AVAudioSession.RouteChangeReason(rawValue: reasonValue) else { return }
        // "Old device unavailable": headset was unplugged, or device was removed from a dock
        // connector that supports audio output.
        if routeChangeReason == .oldDeviceUnavailable {
            // player might respond appropriately - pause
            isPaused = true
        } else if routeChangeReason == .newDeviceAvailable {
            // audio plugged back in, player might respond appropriately - play
            isPaused = false
        }
    }

    func handleInterruption(_ note: Notification) {
        guard let value = note.userInfo?[AVAudioSessionInterruptionTypeKey] as? UInt,
              let type = AVAudioSession.InterruptionType(rawValue: value) else { return }
        switch type {
        case .began: isPaused = true // beginInterruption
        case .ended: isPaused = false // endInterruption
        @unknown default: break
        }
    }

    /// viewDidAppear: — receive remote-control events (`beginReceivingRemoteControlEvents`).
    func viewDidAppear() {
        MPRemoteCommandCenter.shared().togglePlayPauseCommand.addTarget { [weak self] _ in
            // RESPOND TO PLAY/PAUSE EVENT HERE
            self?.isPaused.toggle()
            return .success
        }
    }

    /// viewWillDisappear: — stop receiving them (`endReceivingRemoteControlEvents`).
    func viewWillDisappear() {
        MPRemoteCommandCenter.shared().togglePlayPauseCommand.removeTarget(nil)
    }
}
