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

    /// iOS's usual choice, AAC in .m4a, is accepted (FFmpeg encodes it; the recording itself
    /// is tested in Earshot's recorder and engine suites), with its bit rate kept.
    @Test func aacInAnM4AFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-compat-\(UUID().uuidString).m4a")
        let settings: [String: Any] = [
            AVFormatIDKey: Int(kAudioFormatMPEG4AAC),
            AVSampleRateKey: 44_100.0,
            AVNumberOfChannelsKey: 1,
            AVEncoderBitRateKey: 96_000,
            AVEncoderAudioQualityKey: AVAudioQuality.high.rawValue,
        ]
        let recorder = try AVAudioRecorder(url: url, settings: settings)
        #expect(recorder.url == url)
        #expect(recorder.settings[AVEncoderBitRateKey] as? Int == 96_000)
        #expect(!recorder.isRecording)
        #expect(!FileManager.default.fileExists(atPath: url.path), "a file before prepareToRecord")
    }

    @Test func appleLosslessInAnM4AFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-compat-\(UUID().uuidString).m4a")
        _ = try AVAudioRecorder(url: url, settings: [AVFormatIDKey: Int(kAudioFormatAppleLossless), AVLinearPCMBitDepthKey: 24])
    }

    /// AAC has no 192 kHz: the initializer throws, naming the rate.
    @Test func aacAtARateItDoesNotHaveThrows() {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-compat-\(UUID().uuidString).m4a")
        do {
            _ = try AVAudioRecorder(url: url, settings: [AVFormatIDKey: Int(kAudioFormatMPEG4AAC), AVSampleRateKey: 192_000])
            Issue.record("AAC at 192 kHz was accepted")
        } catch {
            #expect("\(error)".contains("AAC at 192000 Hz"), "\(error)")
        }
    }

    /// A format Earshot does not record (MP3) throws.
    @Test func mp3IsRefused() {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-compat-\(UUID().uuidString).mp3")
        #expect(throws: (any Error).self) {
            _ = try AVAudioRecorder(url: url, settings: [AVFormatIDKey: Int(kAudioFormatMPEGLayer3)])
        }
    }
}
