#if canImport(AVFoundation)
import AVFoundation
import MediaPlayer
#else
import EarshotCompat
#endif
import Testing
import TestSupport

/// System Sound Services without sound: the errors, the silent vibration, completions, and
/// the built-in IDs' theme sounds.
@Suite("EarshotCompat: system sound services")
struct CompatSystemSoundChecks {
    @Test func aMissingFileIsAnError() {
        var snd: SystemSoundID = 0
        let url = URL(fileURLWithPath: "/nonexistent/earshot-compat/test.aif")
        let status = AudioServicesCreateSystemSoundID(url as CFURL, &snd)
        #expect(status == kAudioServicesSystemSoundUnspecifiedError)
        #expect(snd == 0)
        #expect(AudioServicesDisposeSystemSoundID(12345) != kAudioServicesNoError)
    }

    /// The vibration plays nothing and completes; so does an ID that names no sound.
    @Test func silentSoundsComplete() async throws {
        let completed = Collected<[String]>([])
        AudioServicesPlaySystemSoundWithCompletion(kSystemSoundID_Vibrate) {
            completed.modify { $0.append("vibrate, main: \(isOnMainQueue)") }
        }
        AudioServicesPlayAlertSoundWithCompletion(7) {
            completed.modify { $0.append("unknown") }
        }
        try await eventually("both completions") { completed.value.count == 2 }
        #expect(completed.value.contains("vibrate, main: true"))
    }

    /// A completion routine (a C function) gets the sound and the client data back. On an
    /// ID of its own (one that names no sound, so it completes at once): a routine belongs
    /// to its ID process-wide, as on iOS, and the other checks play the vibration.
    @Test func completionRoutineGetsItsClientData() async throws {
        let id: SystemSoundID = 0x7000_0001
        let box = Collected<[UInt32]>([])
        let context = Unmanaged.passRetained(box)
        defer { context.release() }
        AudioServicesAddSystemSoundCompletion(id, nil, nil, { snd, context in
            let box = Unmanaged<Collected<[UInt32]>>.fromOpaque(context!).takeUnretainedValue()
            box.modify { $0.append(snd) }
            AudioServicesRemoveSystemSoundCompletion(snd)
        }, context.toOpaque())
        AudioServicesPlaySystemSound(id)
        try await eventually("the completion routine") { box.value == [id] }
        AudioServicesPlaySystemSound(id)
        try await Task.sleep(for: .milliseconds(50))
        #expect(box.value == [id], "removed in the routine, it is not called again")
    }

    @Test func builtInIDsPlayThemeSounds() {
        #expect(SystemSounds.themeNames(for: 1000) == ["message-new-email"])
        #expect(SystemSounds.themeNames(for: 1003) == ["message-new-instant"])
        #expect(SystemSounds.themeNames(for: 1004) == ["message-sent-instant"])
        #expect(SystemSounds.themeNames(for: 1057) == ["dialog-information"])
        #expect(SystemSounds.themeNames(for: 1104).contains("audio-volume-change"))
        #expect(SystemSounds.themeNames(for: kSystemSoundID_UserPreferredAlert) == ["bell"])
        #expect(SystemSounds.themeNames(for: kSystemSoundID_Vibrate).isEmpty)
    }
}
