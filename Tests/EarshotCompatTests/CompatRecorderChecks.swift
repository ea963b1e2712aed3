#if canImport(AVFoundation)
import AVFoundation
import MediaPlayer
#else
import EarshotCompat
#endif
import Testing

/// A recorder made from a settings dictionary, as iOS apps make one (nothing records here:
/// recording needs a sound server).
@Suite("EarshotCompat: recorder settings")
struct CompatRecorderChecks {
    @Test func linearPCMInAWAVFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-compat-\(UUID().uuidString).wav")
        let settings: [String: Any] = [
            AVFormatIDKey: Int(kAudioFormatLinearPCM),
            AVSampleRateKey: 44_100.0,
            AVNumberOfChannelsKey: 1,
            AVLinearPCMBitDepthKey: 24,
            AVEncoderAudioQualityKey: AVAudioQuality.high.rawValue,
        ]
        let recorder = try AVAudioRecorder(url: url, settings: settings)
        #expect(recorder.url == url)
        #expect(recorder.settings[AVSampleRateKey] as? Double == 44_100)
        #expect(!recorder.isRecording)
    }

    /// iOS's usual choice, AAC in .m4a, is refused until Earshot records it.
    @Test func aacIsRefusedForNow() {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-compat-\(UUID().uuidString).m4a")
        #expect(throws: (any Error).self) {
            _ = try AVAudioRecorder(url: url, settings: [AVFormatIDKey: Int(kAudioFormatMPEG4AAC), AVSampleRateKey: 44_100, AVNumberOfChannelsKey: 2])
        }
    }
}
