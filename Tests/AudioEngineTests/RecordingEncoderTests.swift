@testable import AudioEngine
import Foundation
import Testing
import TestSupport

/// A capture input without a sound server: a thread that pushes a sine into the capture buffer
/// in 10 ms blocks, paced by the clock (a new block every 10 ms, stamped as just captured),
/// from the recording's first start until it closes. Channel 0 carries `frequencies[0]`,
/// channel 1 `frequencies[1]`, and so on.
private final class SineInput: CaptureInput, @unchecked Sendable {
    let kind = AudioEngine.InputKind.alsa(device: "test sine")
    private let buffer: CaptureBuffer
    private let frequencies: [Double]
    private let amplitude: Double
    private let state = NSCondition()
    private var started = false
    private var closed = false
    private var thread: Thread?

    init(buffer: CaptureBuffer, frequencies: [Double], amplitude: Double) {
        self.buffer = buffer
        self.frequencies = frequencies
        self.amplitude = amplitude
    }

    /// The sample of channel `channel` at frame `index`, as pushed.
    static func sample(_ index: Int, channel: Int, frequencies: [Double], amplitude: Double, sampleRate: Int) -> Float {
        Float(amplitude * sin(2 * Double.pi * frequencies[channel % frequencies.count] * Double(index) / Double(sampleRate)))
    }

    func resume() {
        state.lock()
        defer { state.unlock() }
        guard !started, !closed else { return }
        started = true
        let thread = Thread { [self] in run() }
        self.thread = thread
        thread.start()
    }

    func close() {
        state.lock()
        closed = true
        state.unlock()
    }

    private func run() {
        let rate = buffer.sampleRate
        let channels = buffer.channels
        let block = rate / 100
        var samples = [Float](repeating: 0, count: block * channels)
        var index = 0
        let start = Date()
        var blocks = 0
        while true {
            state.lock()
            let done = closed
            state.unlock()
            if done { return }
            for frame in 0..<block {
                for channel in 0..<channels {
                    samples[frame * channels + channel] = Self.sample(index + frame, channel: channel, frequencies: frequencies,
                                                                       amplitude: amplitude, sampleRate: rate)
                }
            }
            samples.withUnsafeBufferPointer { buffer.push($0.baseAddress!, frames: block, age: 0) }
            index += block
            blocks += 1
            let next = start.addingTimeInterval(Double(blocks) / 100)
            let wait = next.timeIntervalSinceNow
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
        }
    }
}

/// AAC and Apple Lossless recordings through `Recording`'s writer thread and FFmpeg's encoders,
/// fed by ``SineInput`` (no sound server: the suite runs in scripts/test's parallel pass), and
/// decoded back by Earshot's own decoder (`AudioFile`, FFmpeg behind it).
@Suite struct RecordingEncoderTests {
    private static func folder() throws -> String {
        var template = Array((NSTemporaryDirectory() + "earshot-enc.XXXXXX").utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    /// Records `duration` seconds of `frequencies` (one per channel) at `level` dBFS into
    /// `path`, and returns how the recording ended.
    private static func record(_ path: String, format: RecordingFormat, frequencies: [Double], level: Double,
                               duration: Double) async throws -> Recording.Ending {
        let recording = try Recording(path: path, format: format, engine: AudioEngine()) { buffer in
            SineInput(buffer: buffer, frequencies: frequencies, amplitude: pow(10, level / 20))
        }
        let (stream, continuation) = AsyncStream.makeStream(of: Recording.Ending.self)
        recording.onEnd { ending in
            continuation.yield(ending)
            continuation.finish()
        }
        #expect(recording.start(duration: duration))
        let watchdog = Task {
            try await Task.sleep(for: .seconds(duration + 10))
            recording.stop()
        }
        defer { watchdog.cancel() }
        var ending: Recording.Ending?
        for await value in stream { ending = value }
        return try #require(ending)
    }

    private static func probe(_ path: String) async throws -> String {
        let result = try await run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels:format=format_name:format_tags=major_brand",
                                               "-of", "default=noprint_wrappers=1", path])
        #expect(result.status == 0 && result.stderr.isEmpty, "ffprobe: \(result.stderr)")
        return result.stdout
    }

    struct AACCase: Sendable, CustomTestStringConvertible {
        let sampleRate: Int
        let channels: Int
        let bitRate: Int?
        var testDescription: String { "\(sampleRate) Hz, \(channels) ch, \(bitRate.map { "\($0 / 1000) kb/s" } ?? "default rate")" }
    }

    @Test("AAC in .m4a: decoded back, the duration recorded to the frame, the sines' frequencies and levels; ffprobe says aac in M4A",
          arguments: [AACCase(sampleRate: 48000, channels: 2, bitRate: nil), AACCase(sampleRate: 44100, channels: 1, bitRate: 96000),
                      AACCase(sampleRate: 16000, channels: 1, bitRate: 32000)])
    func aacDecodesBack(_ setup: AACCase) async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/tone.m4a"
        let level = -6.0
        let frequencies = [1000.0, 1500.0]
        let duration = 1.5
        let format = RecordingFormat(fileType: .aac, sampleRate: setup.sampleRate, channels: setup.channels, bitRate: setup.bitRate)
        let ending = try await Self.record(path, format: format, frequencies: frequencies, level: level, duration: duration)
        #expect(ending == .finished)

        let file = try AudioFile(contentsOf: path)
        #expect(file.format.sampleRate == setup.sampleRate)
        #expect(file.format.channelCount == setup.channels)
        let audio = CapturedAudio(samples: try file.readAll(), sampleRate: file.format.sampleRate, channels: file.format.channelCount)
        let frames = Int((duration * Double(setup.sampleRate)).rounded())
        print("recording encoder: AAC \(setup.testDescription): \(audio.frameCount) frames decoded for \(frames) recorded")
        // The edit list takes off the encoder's priming and padding: the frames recorded, no more.
        #expect(abs(audio.duration - duration) <= 0.003, "\(audio.duration) s decoded for \(duration) s recorded")
        let inner = 0.1..<(duration - 0.1)
        for channel in 0..<setup.channels {
            let frequency = try #require(audio.dominantFrequency(channel: channel, range: inner))
            let heard = audio.sineLevelDBFS(channel: channel, range: inner)
            print("recording encoder: AAC \(setup.testDescription), channel \(channel): \(frequency) Hz, \(heard) dBFS")
            #expect(abs(frequency - frequencies[channel]) < 2, "channel \(channel): \(frequency) Hz")
            #expect(abs(heard - level) <= 0.5, "channel \(channel): \(heard) dBFS, recorded at \(level)")
        }
        // The start is there: no silence of the encoder's priming before the tone.
        if let onset = audio.onset() { #expect(onset < 0.002, "the tone starts at \(onset) s") }

        let probe = try await Self.probe(path)
        #expect(probe.contains("codec_name=aac"), "\(probe)")
        #expect(probe.contains("format_name=mov,mp4,m4a"), "\(probe)")
        #expect(probe.contains("major_brand=M4A"), "\(probe)")
        #expect(probe.contains("sample_rate=\(setup.sampleRate)") && probe.contains("channels=\(setup.channels)"), "\(probe)")
    }

    @Test("Apple Lossless in .m4a: decoded back sample for sample (16 and 24 bits); ffprobe says alac", arguments: [16, 24])
    func appleLosslessIsExact(bitDepth: Int) async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/tone.m4a"
        let frequencies = [1000.0, 1500.0]
        let level = -6.0
        let duration = 0.8
        let format = RecordingFormat(fileType: .appleLossless, sampleRate: 44100, channels: 2, bitDepth: bitDepth)
        let ending = try await Self.record(path, format: format, frequencies: frequencies, level: level, duration: duration)
        #expect(ending == .finished)

        let file = try AudioFile(contentsOf: path)
        let samples = try file.readAll()
        let frames = Int((duration * 44100).rounded())
        #expect(samples.count == frames * 2, "\(samples.count / 2) frames decoded for \(frames)")
        // The sine is continuous and starts where the recording did: find its phase from the
        // first frame, then every sample must be the pushed one, to the bit depth's step.
        let step = Float(1) / Float(1 << (bitDepth - 1))
        let amplitude = pow(10, level / 20)
        let start = (0..<44100).first { index in
            (0..<16).allSatisfy { k in
                (0..<2).allSatisfy { c in
                    abs(SineInput.sample(index + k, channel: c, frequencies: frequencies, amplitude: amplitude, sampleRate: 44100) - samples[2 * k + c]) <= step
                }
            }
        }
        let offset = try #require(start, "the decoded frames are not the sine pushed")
        var worst: Float = 0
        for frame in 0..<min(frames, samples.count / 2) {
            for channel in 0..<2 {
                let expected = SineInput.sample(offset + frame, channel: channel, frequencies: frequencies, amplitude: amplitude, sampleRate: 44100)
                worst = max(worst, abs(samples[frame * 2 + channel] - expected))
            }
        }
        #expect(worst <= step / 2 + 1e-7, "largest difference \(worst) (the step is \(step))")
        let probe = try await Self.probe(path)
        #expect(probe.contains("codec_name=alac"), "\(probe)")
        #expect(probe.contains("format_name=mov,mp4,m4a"), "\(probe)")
    }

    @Test("AAC at a rate AAC does not have: a named error, and no file")
    func unsupportedRate() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/tone.m4a"
        let format = RecordingFormat(fileType: .aac, sampleRate: 192_000, channels: 2)
        do throws(RecordingError) {
            _ = try Recording(path: path, format: format, engine: AudioEngine()) { buffer in
                SineInput(buffer: buffer, frequencies: [1000], amplitude: 0.5)
            }
            Issue.record("AAC at 192 kHz was accepted")
        } catch {
            guard case .unsupportedFormat(let named, _) = error else { Issue.record("\(error)"); return }
            #expect(named == path)
            #expect(error.description.hasPrefix("cannot record \(path): "), "\(error)")
            #expect(error.description.contains("AAC at 192000 Hz"), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("AAC into a folder that does not exist: “cannot write …: No such file or directory”, and nothing written")
    func unwritablePath() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/gone/tone.m4a"
        do throws(RecordingError) {
            _ = try FFmpegFileWriter(path: path, format: RecordingFormat(fileType: .aac))
            Issue.record("a file was created in a folder that does not exist")
        } catch {
            #expect(error == .cannotWrite(path: path, reason: "No such file or directory"), "\(error)")
            #expect(error.description == "cannot write \(path): No such file or directory")
        }
        #expect((try? FileManager.default.contentsOfDirectory(atPath: folder)) == [])
    }

    @Test("an input that cannot open: the .m4a file created for it is removed")
    func inputFailureRemovesTheFile() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/tone.m4a"
        #expect(throws: RecordingError.inputFailed(input: "test", reason: "refused")) {
            _ = try Recording(path: path, format: RecordingFormat(fileType: .aac), engine: AudioEngine()) { _ throws(RecordingError) in
                throw RecordingError.inputFailed(input: "test", reason: "refused")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("the extension .m4a means AAC; Apple Lossless only by name")
    func fileTypes() {
        #expect(RecordingFormat.FileType(fileExtension: "m4a") == .aac)
        #expect(RecordingFormat.FileType(fileExtension: "M4A") == .aac)
        #expect(RecordingFormat(fileType: .aac).description == "AAC, 48000 Hz, 2 channels, 128 kb/s")
        #expect(RecordingFormat(fileType: .aac, channels: 1).aacBitRate == 64000)
        #expect(RecordingFormat(fileType: .appleLossless, bitDepth: 24).description == "Apple Lossless, 48000 Hz, 2 channels, 24 bits")
        #expect(RecordingFormat(fileType: .appleLossless, bitDepth: 32).problem != nil)
    }
}
