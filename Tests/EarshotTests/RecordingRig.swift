import AudioEngine
@testable import Earshot
import Foundation
import TestSupport

/// A sound server to record from without hardware, fed by `paplay` with known signals: a
/// private PulseAudio whose null sink's monitor is the default source, or a private PipeWire
/// whose default source is a `pw-loopback` microphone (an `Audio/Source` node fed through
/// its own sink; see ``PipeWireServer/addMicrophone(_:timeout:)``). Each rig has its own
/// server, so recorder tests set no environment and do not share the in-process server's
/// sink.
///
/// Why not a monitor on PipeWire: pipewire-pulse 0.3.65's monitor sources have left holes
/// of 5–15 ms in what this recorder captured (seen in clean-clone runs, not reproduced on
/// demand), and a desktop records from a microphone, which is a source node.
final class RecordingRig: @unchecked Sendable {
    let pulse: PulseAudioServer?
    let pipewire: PipeWireServer?
    let environment: [String: String]
    let address: String
    /// The sink `play(_:)` plays into, whose sound the default source delivers.
    let sink: String
    /// The default source the rig records from.
    let source: String
    let folder: String
    private let keepAlive: Child?

    /// `monitor`: on PipeWire, record the null sink's monitor rather than a microphone, for
    /// tests about where the server moves a record stream (WirePlumber moves a stream whose
    /// source went away to a monitor, not to the default `pw-loopback` source).
    /// `tcp`: on PulseAudio, the server also listens on a loopback TCP port and ``address``
    /// (what the code under test connects to) is `tcp:127.0.0.1:PORT`; `paplay` and the
    /// fixtures still use its unix socket.
    init(pipewire usePipeWire: Bool = false, monitor: Bool = false, tcp: Bool = false) throws {
        if usePipeWire {
            let server = try PipeWireServer(sinkName: "rec_pw")
            (pulse, pipewire) = (nil, server)
            if monitor {
                (environment, address, sink, source) = (server.environment, server.address, server.sinkName, server.sinkName + ".monitor")
            } else {
                try server.addMicrophone("rec_mic")
                (environment, address, sink, source) = (server.environment, server.address, "rec_mic_feed", "rec_mic")
            }
        } else {
            let server = try PulseAudioServer(sinkName: "rec_sink", tcp: tcp)
            (pulse, pipewire) = (server, nil)
            (environment, address, sink, source) = (server.environment, server.tcpAddress ?? server.address, server.sinkName,
                                                    server.monitorName)
        }
        // An idle null sink's monitor drops the start of the first sound played into it
        // (FIELD-NOTES: paplay loses ~0.6 s of a 1 s sweep on PulseAudio); a silent
        // low-latency stream keeps the sink running, so what paplay plays reaches the
        // monitor whole from its first sample.
        if let pulse { try pulse.pactl("set-default-source", source) } else { try pipewire?.pactl("set-default-source", source) }
        keepAlive = try Child("pacat", ["--playback", "--latency-msec=10", "--format=float32le", "--rate=48000", "--channels=2",
                                        "--raw", "--device=\(sink)", "/dev/zero"], environment: environment)
        var template = Array("/tmp/earshot-rec.XXXXXX".utf8CString)
        folder = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    deinit {
        keepAlive?.kill(SIGKILL)
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The input choice that records this server's default source.
    var input: AudioEngine.InputChoice { AudioEngine.InputChoice(soundServer: address) }

    /// Starts `paplay FILE` on the sink the rig records from.
    func play(_ file: String) throws -> Child {
        try Child("paplay", ["--device=\(sink)", file], environment: environment)
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

/// How the code under test reaches a rig's PulseAudio: its unix socket, or loopback TCP.
enum ServerTransport: String, Sendable, CustomStringConvertible {
    case unixSocket = "unix socket"
    case tcp = "TCP"
    var description: String { rawValue }
}
