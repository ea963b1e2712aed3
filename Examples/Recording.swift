import Earshot
import FoundationEssentials

/// Recording: a playAndRecord session in the voiceChat mode, a mono 24-bit FLAC memo of
/// 5 s, its levels, and the end of the recording.
func recordingExample() async throws {
    let session = AudioSession.shared
    try await session.setCategory(.playAndRecord, mode: .voiceChat)   // streams tagged media.role=phone
    try await session.setActive(true)
    let recorder = try AudioRecorder(url: URL(fileURLWithPath: "memo.flac"),
                                     settings: AudioRecorder.Settings(numberOfChannels: 1, bitDepth: 24))
    recorder.isMeteringEnabled = true
    recorder.record(forDuration: 5)          // or record(), record(atTime: recorder.deviceCurrentTime + 0.5)
    recorder.updateMeters()
    print(recorder.averagePower(forChannel: 0), recorder.peakPower(forChannel: 0))   // dBFS
    for await event in recorder.events {
        if case .finished(let ok) = event { print("done", ok, recorder.currentTime); break }
    }
}
