#if canImport(AVFoundation)
import AVFoundation
import MediaPlayer
#else
import EarshotCompat
#endif
import Testing
import TestSupport

/// The session's notifications on `NotificationCenter.default`, as the ported listings
/// observe them, from events of the process's Earshot session posted in process (no bus,
/// no sound server). One at a time: they share the process's session and the default
/// notification center.
@Suite("EarshotCompat: session notifications", .serialized)
struct CompatNotificationChecks {
    /// Apple's article's handler, as ported: began, then ended with and without the resume
    /// option, each posted with the shared session as `object`.
    @Test func interruptionArticleHandler() async throws {
        CompatTest.prepare()
        let controller = InterruptionArticleController()
        controller.setupNotifications()
        defer { controller.observer.map(NotificationCenter.default.removeObserver) }
        CompatTest.interruptionBegins()
        try await eventually("the handler to see the interruption begin") { await MainActor.run { controller.seen == ["began"] } }
        CompatTest.interruptionEnds(shouldResume: true)
        try await eventually("the handler to see it end with shouldResume") {
            await MainActor.run { controller.seen == ["began", "ended, resume"] }
        }
        CompatTest.interruptionEnds(shouldResume: false)
        try await eventually("the handler to see it end without") {
            await MainActor.run { controller.seen.last == "ended, don't resume" }
        }
    }

    /// The `userInfo` entries, their `NSNumber` types and the main thread, as iOS posts them.
    @Test func interruptionUserInfo() async throws {
        CompatTest.prepare()
        let posts = Collected<[(type: UInt?, reason: UInt?, options: UInt?, onMain: Bool, object: Bool)]>([])
        let observer = NotificationCenter.default.addObserver(forName: AVAudioSession.interruptionNotification,
                                                              object: AVAudioSession.sharedInstance(), queue: .main) { note in
            let info = note.userInfo ?? [:]
            let entry = (type: (info[AVAudioSessionInterruptionTypeKey] as? NSNumber)?.uintValue,
                         reason: (info[AVAudioSessionInterruptionReasonKey] as? NSNumber)?.uintValue,
                         options: (info[AVAudioSessionInterruptionOptionKey] as? NSNumber)?.uintValue,
                         onMain: isOnMainQueue,
                         object: (note.object as AnyObject?) === AVAudioSession.sharedInstance())
            posts.modify { $0.append(entry) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        _ = AVAudioSession.sharedInstance()
        CompatTest.routeDisconnectionInterrupts()
        CompatTest.interruptionEnds(shouldResume: true)
        try await eventually("two interruption notifications") { posts.value.count == 2 }
        let (began, ended) = (posts.value[0], posts.value[1])
        #expect(began.type == 1 && began.reason == AVAudioSession.InterruptionReason.routeDisconnected.rawValue && began.options == nil)
        #expect(ended.type == 0 && ended.options == 1 && ended.reason == nil)
        #expect(began.onMain && ended.onMain && began.object && ended.object)
    }

    /// Neuburg's route-change listing: the reason and the previous route's port.
    @Test func routeChangeWithPreviousRoute() async throws {
        CompatTest.prepare()
        let seen = Collected<[(AVAudioSession.RouteChangeReason, AVAudioSession.Port?)]>([])
        let observer = NeuburgSession.observeRouteChanges { reason, previous in
            seen.modify { $0.append((reason, previous?.outputs.first?.portType)) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        _ = AVAudioSession.sharedInstance()
        CompatTest.headphonesUnplugged()
        // The listing observes every session (`object: nil`): the sessions other checks make
        // on private buses post too.
        try await eventually("the route change") {
            seen.value.contains { $0.0 == .oldDeviceUnavailable && $0.1 == .headphones }
        }
    }

    /// Neuburg's interruption listing (forced casts of the `userInfo` entries).
    @Test func neuburgInterruptionListing() async throws {
        CompatTest.prepare()
        let seen = Collected<[String]>([])
        let observer = NeuburgSession.observeInterruptions { what in seen.modify { $0.append(what) } }
        defer { NotificationCenter.default.removeObserver(observer) }
        _ = AVAudioSession.sharedInstance()
        CompatTest.interruptionBegins()
        CompatTest.interruptionEnds(shouldResume: true)
        // As above, other sessions' interruptions may come between.
        try await eventually("both notifications") {
            let seen = seen.value
            guard let began = seen.firstIndex(of: "interruption began") else { return false }
            return seen[began...].contains("interruption ended, should resume")
        }
    }

    /// The secondary-audio hint and the media services' reset.
    @Test func silenceHintAndMediaServicesReset() async throws {
        CompatTest.prepare()
        let hints = Collected<[UInt]>([])
        let resets = Collected(0)
        let hintObserver = NotificationCenter.default.addObserver(forName: AVAudioSession.silenceSecondaryAudioHintNotification,
                                                                  object: AVAudioSession.sharedInstance(), queue: nil) { note in
            if let type = note.userInfo?[AVAudioSessionSilenceSecondaryAudioHintTypeKey] as? UInt { hints.modify { $0.append(type) } }
        }
        let resetObserver = NotificationCenter.default.addObserver(forName: AVAudioSession.mediaServicesWereResetNotification,
                                                                   object: AVAudioSession.sharedInstance(), queue: nil) { _ in
            resets.modify { $0 += 1 }
        }
        defer {
            NotificationCenter.default.removeObserver(hintObserver)
            NotificationCenter.default.removeObserver(resetObserver)
        }
        CompatTest.secondaryHint(true)
        CompatTest.secondaryHint(false)
        CompatTest.mediaServicesReset()
        try await eventually("the hints and the reset") { hints.value.count == 2 && resets.value == 1 }
        #expect(hints.value == [AVAudioSession.SilenceSecondaryAudioHintType.begin.rawValue, AVAudioSession.SilenceSecondaryAudioHintType.end.rawValue])
    }
}
