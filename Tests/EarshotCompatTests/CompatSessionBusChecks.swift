#if canImport(AVFoundation)
import AVFoundation
import MediaPlayer
#else
import EarshotCompat
#endif
import Earshot
import Testing
import TestSupport

/// The synchronous setters over Earshot's `async` ones, called from test tasks (threads of
/// Swift's global executor, the harder case for a blocking wait): on a private bus whose
/// arbiter the session hosts, and on a bus that does not exist. Nothing plays.
///
/// One at a time: each blocking call holds a thread of the global executor while Earshot's
/// work runs on another; on 2 cores, two tests blocking at once left it none and hung
/// (the limit `AVAudioSession`'s setters document).
@Suite("EarshotCompat: synchronous session calls", .serialized)
struct CompatSessionBusChecks {
    @Test func noBusThrowsAtOnce() {
        let (session, earshot) = CompatTest.session(on: "unix:path=/nonexistent/earshot-compat-bus", name: "compat-nobus")
        #expect(throws: (any Error).self) { try session.setCategory(.playback) }
        #expect(throws: (any Error).self) { try session.setActive(true) }
        #expect(session.category == .soloAmbient)
        #expect(earshot.category == .soloAmbient)
    }

    @Test func categoryModeAndOptionsReadBack() throws {
        let bus = try PrivateBus()
        let (session, earshot) = CompatTest.session(on: bus.address, name: "compat-category")
        try session.setCategory(.playback, mode: .spokenAudio, options: [.mixWithOthers, .overrideMutedMicrophoneInterruption])
        #expect(session.category == .playback && earshot.category == .playback)
        #expect(session.mode == .spokenAudio && earshot.mode == .spokenAudio)
        #expect(session.categoryOptions == [.mixWithOthers, .overrideMutedMicrophoneInterruption])

        // Refused as iOS refuses it; nothing changes.
        #expect(throws: (any Error).self) { try session.setCategory(.soloAmbient, options: .duckOthers) }
        #expect(session.category == .playback)

        // Apple's categories Earshot applies as others read back as set.
        try session.setCategory(.multiRoute)
        #expect(session.category == .multiRoute && earshot.category == .playAndRecord)
        try session.setMode(.voicePrompt)
        #expect(session.mode == .voicePrompt && session.category == .multiRoute)

        try session.setCategory(.ambient)
        #expect(session.categoryOptions.contains(.mixWithOthers))
        try session.setActive(true)
        #expect(earshot.isActive)
        try session.setActive(false, options: .notifyOthersOnDeactivation)
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
        try session.setCategory(.playback)
        try session.setActive(true)

        let (other, _) = CompatTest.session(on: bus.address, name: "compat-interrupter")
        try other.setCategory(.playback)
        try other.setActive(true)
        try await eventually("the interruption to begin") { types.value == [1] }
        try other.setActive(false, options: .notifyOthersOnDeactivation)
        try await eventually("the interruption to end") { types.value == [1, 0] }
    }
}
