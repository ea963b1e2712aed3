internal import CALSA
internal import CLibraryLoader
#if canImport(Glibc)
import Glibc
#endif

/// One ALSA playback stream: interleaved Float32, opened with the engine's format.
/// The only ALSA code in the engine; everything here runs on the render thread except
/// `open`, which runs on the thread that starts the engine so errors reach the caller.
///
/// `@unchecked Sendable`: after `init`, only the render thread uses the handle.
final class PCMOutput: AudioOutput, @unchecked Sendable {
    private let handle: OpaquePointer
    let device: String
    let sampleRate: Int
    /// ALSA's device is opened at the engine's rate (its plug layer converts): no sink to follow.
    var sinkSampleRate: Int? { nil }
    let channels: Int
    let periodFrames: Int
    let bufferFrames: Int
    let request: AudioEngine.OutputRequest

    var name: String { device }
    var kind: AudioEngine.OutputKind { .alsa(device: device) }

    /// Opens `device` for playback.
    ///
    /// - Throws: ``AudioEngineError/deviceUnavailable(device:reason:)`` with ALSA's
    ///   reason, for example "No such file or directory" for an unknown device name.
    init(device: String, request: AudioEngine.OutputRequest, channels: Int, periodFrames: Int, periods: Int) throws(AudioEngineError) {
        self.device = device
        self.request = request
        let sampleRate = request.sampleRate
        let opened = try PCMHardware.open(device, SND_PCM_STREAM_PLAYBACK, channels: channels, rate: sampleRate,
                                          exactRate: false, periodFrames: periodFrames, periods: periods)
        let pcm = opened.pcm
        var rc: Int32

        var sw: OpaquePointer?
        _ = alsa.snd_pcm_sw_params_malloc(&sw)
        defer { alsa.snd_pcm_sw_params_free(sw) }
        _ = alsa.snd_pcm_sw_params_current(pcm, sw)
        _ = alsa.snd_pcm_sw_params_set_avail_min(pcm, sw, snd_pcm_uframes_t(opened.periodFrames))
        _ = alsa.snd_pcm_sw_params_set_start_threshold(pcm, sw, snd_pcm_uframes_t(opened.periodFrames))
        rc = alsa.snd_pcm_sw_params(pcm, sw)
        guard rc >= 0 else { throw PCMHardware.failure(closing: pcm, device: device, "cannot apply the software parameters", rc) }

        self.handle = pcm
        self.sampleRate = opened.rate
        self.channels = channels
        self.periodFrames = opened.periodFrames
        self.bufferFrames = opened.bufferFrames
    }

    /// Writes all `frames`, blocking as the device drains; recovers underruns.
    func write(_ samples: UnsafePointer<Float>, frames: Int) -> OutputWriteResult {
        var offset = 0
        var recovered = false
        while offset < frames {
            let n = alsa.snd_pcm_writei(handle, samples + offset * channels, snd_pcm_uframes_t(frames - offset))
            if n >= 0 {
                offset += Int(n)
            } else if n == -Int(EAGAIN) {
                continue
            } else {
                let rc = alsa.snd_pcm_recover(handle, Int32(n), 1)
                if rc < 0 { return .failed(PCMOutput.describe(Int32(n))) }
                recovered = true
            }
        }
        return recovered ? .recovered : .written
    }

    /// Frames written but not yet heard (`snd_pcm_delay`), or nil when unknown.
    func delay() -> Int? {
        var frames = snd_pcm_sframes_t(0)
        return alsa.snd_pcm_delay(handle, &frames) >= 0 ? Int(frames) : nil
    }

    /// Waits until everything written has been played (through a sound server too),
    /// then makes the stream ready to start again on the next write.
    func drainAndPrepare() -> Bool {
        _ = alsa.snd_pcm_drain(handle)
        _ = alsa.snd_pcm_prepare(handle)
        return true
    }

    func flush() -> Int {
        _ = alsa.snd_pcm_drop(handle)
        _ = alsa.snd_pcm_prepare(handle)
        return 0
    }

    var expectedFlushRemainder: Int { 0 }

    /// A blocking ALSA write lasts at most a period; it is not cut short.
    func interruptWrite() {}

    /// ALSA reports failures on write; an idle PCM has none to report.
    func failure() -> OutputWriteResult? { nil }

    /// ALSA streams carry no identity.
    func update(identity: AudioEngine.StreamIdentity) {}

    /// Stops at once, dropping what is buffered, and closes the stream.
    func close() {
        _ = alsa.snd_pcm_drop(handle)
        _ = alsa.snd_pcm_close(handle)
    }

    static func describe(_ rc: Int32) -> String {
        alsa.snd_strerror(rc).map { String(cString: $0) } ?? "ALSA error \(rc)"
    }
}
