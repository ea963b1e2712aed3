#if canImport(AVFoundation)
import AVFoundation
import MediaPlayer
#else
import EarshotCompat
#endif
import Earshot
import Testing
import TestSupport

/// The synchronous setters over Earshot's `async` ones, called from a thread of their own as
/// an app calls them from its main thread (``CompatTest/onAppThread(_:)``): on a private bus
/// whose arbiter the session hosts, and on a bus that does not exist. Nothing plays.
///
/// One at a time all the same: called from test tasks (threads of Swift's global executor)
/// instead, two tests blocking at once on 2 cores left Earshot's work no thread and hung
/// (the limit `AVAudioSession`'s setters document).
@Suite("EarshotCompat: synchronous session calls", .serialized)
struct CompatSessionBusChecks {
    @Test func noBusThrowsAtOnce() async {
        let (session, earshot) = CompatTest.session(on: "unix:path=/nonexistent/earshot-compat-bus", name: "compat-nobus")
        await #expect(throws: (any Error).self) { try await CompatTest.onAppThread { try session.setCategory(.playback) } }
        await #expect(throws: (any Error).self) { try await CompatTest.onAppThread { try session.setActive(true) } }
        #expect(session.category == .soloAmbient)
        #expect(earshot.category == .soloAmbient)
    }

    @Test func categoryModeAndOptionsReadBack() async throws {
        let bus = try PrivateBus()
        let (session, earshot) = CompatTest.session(on: bus.address, name: "compat-category")
        try await CompatTest.onAppThread { try session.setCategory(.playback, mode: .spokenAudio, options: [.mixWithOthers, .overrideMutedMicrophoneInterruption]) }
        #expect(session.category == .playback && earshot.category == .playback)
        #expect(session.mode == .spokenAudio && earshot.mode == .spokenAudio)
        #expect(session.categoryOptions == [.mixWithOthers, .overrideMutedMicrophoneInterruption])

        // Refused as iOS refuses it; nothing changes.
        await #expect(throws: (any Error).self) { try await CompatTest.onAppThread { try session.setCategory(.soloAmbient, options: .duckOthers) } }
        #expect(session.category == .playback)

        // Apple's categories Earshot applies as others read back as set.
        try await CompatTest.onAppThread { try session.setCategory(.multiRoute) }
        #expect(session.category == .multiRoute && earshot.category == .playAndRecord)
        try await CompatTest.onAppThread { try session.setMode(.voicePrompt) }
        #expect(session.mode == .voicePrompt && session.category == .multiRoute)

        try await CompatTest.onAppThread { try session.setCategory(.ambient) }
        #expect(session.categoryOptions.contains(.mixWithOthers))
        try await CompatTest.onAppThread { try session.setActive(true) }
        #expect(earshot.isActive)
        try await CompatTest.onAppThread { try session.setActive(false, options: .notifyOthersOnDeactivation) }
        #expect(!earshot.isActive)
    }

    /// Another session of the desktop activates and deactivates: the compat session's
    /// observer hears began (1), then ended (0) with the option entry, as iOS posts them.
    @Test func anotherSessionInterrupts() async throws {
        let bus = try PrivateBus()
        let (session, _) = CompatTest.session(on: bus.address, name: "compat-interrupted")
        let types = Collected<[UInt]>([])
        let observer = NotificationCenter.default.addObserver(forName: AVAudioSession.interruptionNotification,
                                                              object: session, queue: nil) { note in
            if let type = note.userInfo?[AVAudioSessionInterruptionTypeKey] as? UInt { types.modify { $0.append(type) } }
            if note.userInfo?[AVAudioSessionInterruptionTypeKey] as? UInt == 0 {
                #expect(note.userInfo?[AVAudioSessionInterruptionOptionKey] is UInt)
            }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try await CompatTest.onAppThread { try session.setCategory(.playback) }
        try await CompatTest.onAppThread { try session.setActive(true) }

        let (other, _) = CompatTest.session(on: bus.address, name: "compat-interrupter")
        try await CompatTest.onAppThread { try other.setCategory(.playback) }
        try await CompatTest.onAppThread { try other.setActive(true) }
        try await eventually("the interruption to begin") { types.value == [1] }
        try await CompatTest.onAppThread { try other.setActive(false, options: .notifyOthersOnDeactivation) }
        try await eventually("the interruption to end") { types.value == [1, 0] }
    }
}
