import AudioEngine
@testable import Earshot
import Foundation
import TestSupport

/// A sound server to record from without hardware: a private PulseAudio (or PipeWire)
/// server whose null sink's monitor is the default source, fed by `paplay` with known
/// signals. Each rig has its own server, so recorder tests set no environment and do not
/// share the in-process server's sink.
final class RecordingRig: @unchecked Sendable {
    let pulse: PulseAudioServer?
    let pipewire: PipeWireServer?
    let environment: [String: String]
    let address: String
    let sink: String
    let folder: String
    private let keepAlive: Child?

    init(pipewire usePipeWire: Bool = false) throws {
        if usePipeWire {
            let server = try PipeWireServer(sinkName: "rec_pw")
            (pulse, pipewire) = (nil, server)
            (environment, address, sink) = (server.environment, server.address, server.sinkName)
            _ = try server.pactl("set-default-source", server.sinkName + ".monitor")
        } else {
            let server = try PulseAudioServer(sinkName: "rec_sink")
            (pulse, pipewire) = (server, nil)
            (environment, address, sink) = (server.environment, server.address, server.sinkName)
            _ = try server.pactl("set-default-source", server.monitorName)
        }
        // An idle null sink's monitor drops the start of the first sound played into it
        // (FIELD-NOTES: paplay loses ~0.6 s of a 1 s sweep on PulseAudio); a silent
        // low-latency stream keeps the sink running, so what paplay plays reaches the
        // monitor whole from its first sample.
        keepAlive = try Child("pacat", ["--playback", "--latency-msec=10", "--format=float32le", "--rate=48000", "--channels=2",
                                        "--raw", "/dev/zero"], environment: environment)
        var template = Array("/tmp/earshot-rec.XXXXXX".utf8CString)
        folder = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    deinit {
        keepAlive?.kill(SIGKILL)
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The input choice that records this server's default source.
    var input: AudioEngine.InputChoice { AudioEngine.InputChoice(soundServer: address) }

    /// Starts `paplay FILE` on the rig's sink.
    func play(_ file: String) throws -> Child {
        try Child("paplay", [file], environment: environment)
    }

    func path(_ name: String) -> String { folder + "/" + name }

    /// Reads a recorded file back through libsndfile (AudioEngine's reader).
    static func read(_ path: String) throws -> CapturedAudio {
        let file = try AudioFile(contentsOf: path)
        return CapturedAudio(samples: try file.readAll(), sampleRate: file.format.sampleRate, channels: file.format.channelCount)
    }

    /// Waits for the recorder's `finished` event and returns it with any encode error before it.
    static func ending(of recorder: AudioRecorder, timeout: Double = 10) async throws -> (successfully: Bool, error: RecordingError?) {
        try await withThrowingTaskGroup(of: (Bool, RecordingError?)?.self) { group in
            group.addTask {
                var error: RecordingError?
                for await event in recorder.events {
                    switch event {
                    case .encodeError(let e): error = e
                    case .finished(let ok): return (ok, error)
                    case .inputResumed: break
                    }
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(timeout))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            guard let first else { throw TestFailure("the recorder did not finish within \(timeout) s") }
            return first
        }
    }
}
