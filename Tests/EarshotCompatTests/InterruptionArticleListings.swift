#if canImport(AVFoundation)
import AVFoundation
import MediaPlayer
#else
import EarshotCompat
#endif

// Apple, "Handling audio interruptions" (seed 001): its two listings, as the article gives
// them, but for what Linux cannot compile and Swift itself refuses (COMPAT-NOTES.md):
//
// - `addObserver(self, selector: #selector(handleInterruption), …)` and `@objc func` need
//   the Objective-C runtime, which Linux lacks: the observer is the block-based
//   `addObserver(forName:object:queue:using:)` instead, and the handler is not `@objc`.
// - `case .began:` with only a comment is not valid Swift (a case needs a statement), on
//   iOS either: `break` added.

final class InterruptionArticleController {
    /// What the handler saw, for the test (not part of the listing).
    var seen: [String] = []
    var observer: NSObjectProtocol?

    func setupNotifications() {
        // Get the default notification center instance.
        let nc = NotificationCenter.default
        observer = nc.addObserver(forName: AVAudioSession.interruptionNotification,
                                  object: AVAudioSession.sharedInstance(),
                                  queue: .main) { [weak self] notification in
            self?.handleInterruption(notification: notification)
        }
    }

    func handleInterruption(notification: Notification) {
        guard let userInfo = notification.userInfo,
            let typeValue = userInfo[AVAudioSessionInterruptionTypeKey] as? UInt,
            let type = AVAudioSession.InterruptionType(rawValue: typeValue) else {
                return
        }

        // Switch over the interruption type.
        switch type {

        case .began:
            // An interruption began. Update the UI as necessary.
            seen.append("began")

        case .ended:
           // An interruption ended. Resume playback, if appropriate.

            guard let optionsValue = userInfo[AVAudioSessionInterruptionOptionKey] as? UInt else { return }
            let options = AVAudioSession.InterruptionOptions(rawValue: optionsValue)
            if options.contains(.shouldResume) {
                // An interruption ended. Resume playback.
                seen.append("ended, resume")
            } else {
                // An interruption ended. Don't resume playback.
                seen.append("ended, don't resume")
            }

        default: ()
        }
    }
}
