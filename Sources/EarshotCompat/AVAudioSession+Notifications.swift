internal import Earshot

// The session's notifications, posted on NotificationCenter.default as iOS posts them.

/// The `userInfo` key of an ``AVAudioSession/interruptionNotification``'s phase: an
/// `NSNumber` holding an ``AVAudioSession/InterruptionType`` raw value (1 began, 0 ended).
public let AVAudioSessionInterruptionTypeKey = "AVAudioSessionInterruptionTypeKey"
/// The `userInfo` key of an ended interruption's options: an `NSNumber` holding an
/// ``AVAudioSession/InterruptionOptions`` raw value (1 is `shouldResume`, else 0).
public let AVAudioSessionInterruptionOptionKey = "AVAudioSessionInterruptionOptionKey"
/// The `userInfo` key of a began interruption's reason: an `NSNumber` holding an
/// ``AVAudioSession/InterruptionReason`` raw value.
public let AVAudioSessionInterruptionReasonKey = "AVAudioSessionInterruptionReasonKey"
/// The `userInfo` key of a route change's reason: an `NSNumber` holding an
/// ``AVAudioSession/RouteChangeReason`` raw value.
public let AVAudioSessionRouteChangeReasonKey = "AVAudioSessionRouteChangeReasonKey"
/// The `userInfo` key of the route before a change: an ``AVAudioSessionRouteDescription``.
public let AVAudioSessionRouteChangePreviousRouteKey = "AVAudioSessionRouteChangePreviousRouteKey"
/// The `userInfo` key of a secondary-audio hint: an `NSNumber` holding an
/// ``AVAudioSession/SilenceSecondaryAudioHintType`` raw value (1 begin, 0 end).
public let AVAudioSessionSilenceSecondaryAudioHintTypeKey = "AVAudioSessionSilenceSecondaryAudioHintTypeKey"

extension AVAudioSession {
    /// An interruption began or ended. Posted as the main-thread notifications are (see
    /// ``AVAudioSession``), with
    /// ``AVAudioSessionInterruptionTypeKey``, and ``AVAudioSessionInterruptionReasonKey``
    /// when it began or ``AVAudioSessionInterruptionOptionKey`` when it ended.
    public static let interruptionNotification = Notification.Name("AVAudioSessionInterruptionNotification")
    /// The route changed. Posted on a secondary thread (as iOS does) with
    /// ``AVAudioSessionRouteChangeReasonKey`` and ``AVAudioSessionRouteChangePreviousRouteKey``.
    public static let routeChangeNotification = Notification.Name("AVAudioSessionRouteChangeNotification")
    /// Another app started or stopped audio that secondary audio should give way to. Posted
    /// as the main-thread notifications are, with ``AVAudioSessionSilenceSecondaryAudioHintTypeKey``.
    public static let silenceSecondaryAudioHintNotification = Notification.Name("AVAudioSessionSilenceSecondaryAudioHintNotification")
    /// Media services were lost. Never posted: Earshot reports only their reset (the arbiter
    /// changed hosts, or the sound server came back), as ``mediaServicesWereResetNotification``.
    public static let mediaServicesWereLostNotification = Notification.Name("AVAudioSessionMediaServicesWereLostNotification")
    /// Media services were reset: the arbiter changed hosts (the session registered again
    /// with its state), or the sound server went away and came back. Posted as the
    /// main-thread notifications are, with no `userInfo`.
    public static let mediaServicesWereResetNotification = Notification.Name("AVAudioSessionMediaServicesWereResetNotification")

    /// Posts Earshot's `notification` as iOS would.
    func post(_ notification: AudioSession.Notification) {
        switch notification {
        case .interruption(let type):
            postFromMainQueue { [self] in
                NotificationCenter.default.post(name: AVAudioSession.interruptionNotification, object: self,
                                                userInfo: AVAudioSession.userInfo(for: type))
            }
        case .routeChange(let change):
            routeChangeQueue.async { [self] in
                NotificationCenter.default.post(name: AVAudioSession.routeChangeNotification, object: self, userInfo: [
                    AVAudioSessionRouteChangeReasonKey: NSNumber(value: change.reason.rawValue),
                    AVAudioSessionRouteChangePreviousRouteKey: AVAudioSessionRouteDescription(change.previousRoute),
                ])
            }
        case .silenceSecondaryAudioHint(let shouldSilence):
            postFromMainQueue { [self] in
                let type: SilenceSecondaryAudioHintType = shouldSilence ? .begin : .end
                NotificationCenter.default.post(name: AVAudioSession.silenceSecondaryAudioHintNotification, object: self,
                                                userInfo: [AVAudioSessionSilenceSecondaryAudioHintTypeKey: NSNumber(value: type.rawValue)])
            }
        case .mediaServicesWereReset:
            postFromMainQueue { [self] in
                NotificationCenter.default.post(name: AVAudioSession.mediaServicesWereResetNotification, object: self)
            }
        case .deactivatedAfterSilence, .inputAvailabilityChange, .inputsChange:
            // No iOS notification says these: a silent session is suspended there, and an
            // input that comes or goes is a route change (which Earshot posts too).
            break
        }
    }

    /// The `userInfo` of an interruption notification, as iOS fills it.
    static func userInfo(for type: AudioSession.InterruptionType) -> [AnyHashable: Any] {
        switch type {
        case .began(let reason):
            let appleReason: InterruptionReason = if case .routeDisconnected = reason { .routeDisconnected } else { .default }
            return [AVAudioSessionInterruptionTypeKey: NSNumber(value: InterruptionType.began.rawValue),
                    AVAudioSessionInterruptionReasonKey: NSNumber(value: appleReason.rawValue)]
        case .ended(let shouldResume):
            let options: InterruptionOptions = shouldResume ? .shouldResume : []
            return [AVAudioSessionInterruptionTypeKey: NSNumber(value: InterruptionType.ended.rawValue),
                    AVAudioSessionInterruptionOptionKey: NSNumber(value: options.rawValue)]
        }
    }
}
