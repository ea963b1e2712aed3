internal import CALSA
internal import CLibraryLoader
import Platform
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One ALSA capture stream (interleaved Float32), read by its own capture thread into a
/// ``CaptureBuffer``. Used where no sound server answers.
///
/// The capture thread waits (asleep) for ``resume()`` before it starts the device: a prepared
/// recording does not wake the process. Then it blocks in `snd_pcm_readi` (at most a period), stamps the clock from
/// `snd_pcm_delay` (the frames waiting in the device's buffer: the age of the oldest), and
/// recovers from overruns (the lost frames are counted as silence). It owns the handle
/// and closes it when asked to stop.
final class PCMInput: CaptureInput, @unchecked Sendable {
    let device: String
    var kind: AudioEngine.InputKind { .alsa(device: device) }
    private let stopping = Atomic<Bool>(false)
    private let stopped = Semaphore()
    private let closedOnce = Atomic<Bool>(false)
    private let go = Semaphore()
    private let started = Atomic<Bool>(false)

    init(device: String, buffer: CaptureBuffer, periodFrames: Int) throws(AudioEngineError) {
        self.device = device
        if case .failure(let unavailable) = LoadedLibraries.alsa {
            throw .deviceUnavailable(device: device, reason: unavailable.reason)
        }
        var pcm: OpaquePointer?
        var rc = device.withCString { alsa.snd_pcm_open(&pcm, $0, SND_PCM_STREAM_CAPTURE, 0) }
        guard rc >= 0, let pcm else { throw .deviceUnavailable(device: device, reason: PCMOutput.describe(rc)) }
        func fail(_ what: String, _ rc: Int32) -> AudioEngineError {
            _ = alsa.snd_pcm_close(pcm)
            return .deviceUnavailable(device: device, reason: "\(what): \(PCMOutput.describe(rc))")
        }
        var hw: OpaquePointer?
        _ = alsa.snd_pcm_hw_params_malloc(&hw)
        defer { alsa.snd_pcm_hw_params_free(hw) }
        rc = alsa.snd_pcm_hw_params_any(pcm, hw)
        guard rc >= 0 else { throw fail("no configuration", rc) }
        rc = alsa.snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED)
        guard rc >= 0 else { throw fail("interleaved access unsupported", rc) }
        rc = alsa.snd_pcm_hw_params_set_format(pcm, hw, SND_PCM_FORMAT_FLOAT_LE)
        guard rc >= 0 else { throw fail("32-bit float samples unsupported", rc) }
        rc = alsa.snd_pcm_hw_params_set_channels(pcm, hw, UInt32(buffer.channels))
        guard rc >= 0 else { throw fail("\(buffer.channels) channels unsupported", rc) }
        let rate = UInt32(buffer.sampleRate)
        rc = alsa.snd_pcm_hw_params_set_rate(pcm, hw, rate, 0)
        guard rc >= 0 else { throw fail("rate \(rate) Hz unsupported", rc) }
        var period = snd_pcm_uframes_t(periodFrames)
        rc = alsa.snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, nil)
        guard rc >= 0 else { throw fail("period of \(periodFrames) frames unsupported", rc) }
        var size = snd_pcm_uframes_t(periodFrames * 4)
        rc = alsa.snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &size)
        guard rc >= 0 else { throw fail("buffer of \(periodFrames * 4) frames unsupported", rc) }
        rc = alsa.snd_pcm_hw_params(pcm, hw)
        guard rc >= 0 else { throw fail("cannot apply the configuration", rc) }
        let frames = Int(period)
        let handle = UInt(bitPattern: pcm)
        startThread(name: "earshot-capture") { [self] in
            let pcm = OpaquePointer(bitPattern: handle)!
            let scratch = UnsafeMutablePointer<Float>.allocate(capacity: frames * buffer.channels)
            defer { scratch.deallocate() }
            go.wait()
            if !stopping.load(ordering: .acquiring) {
                let rc = alsa.snd_pcm_start(pcm)
                if rc < 0 { buffer.fail("cannot start capturing from ALSA device “\(device)”: \(PCMOutput.describe(rc))") }
            }
            while !stopping.load(ordering: .acquiring), !buffer.failed.load(ordering: .acquiring) {
                var delay = snd_pcm_sframes_t(0)
                let age: Double? = alsa.snd_pcm_delay(pcm, &delay) >= 0 ? Double(delay) / Double(rate) : nil
                let got = alsa.snd_pcm_readi(pcm, scratch, snd_pcm_uframes_t(frames))
                if got > 0 {
                    buffer.push(scratch, frames: Int(got), age: age)
                } else if got == -Int(EPIPE) {
                    // Overrun: what the device dropped is not known exactly; start again.
                    _ = alsa.snd_pcm_prepare(pcm)
                    _ = alsa.snd_pcm_start(pcm)
                } else if got < 0, got != -Int(EAGAIN), got != -Int(EINTR) {
                    if alsa.snd_pcm_recover(pcm, Int32(got), 1) < 0 {
                        buffer.fail("cannot read from ALSA device “\(device)”: \(PCMOutput.describe(Int32(got)))")
                        break
                    }
                }
            }
            _ = alsa.snd_pcm_drop(pcm)
            _ = alsa.snd_pcm_close(pcm)
            stopped.signal()
        }
    }

    /// Starts the device and the reading, once.
    func resume() {
        if !started.exchange(true, ordering: .acquiringAndReleasing) { go.signal() }
    }

    func close() {
        guard !closedOnce.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stopping.store(true, ordering: .releasing)
        go.signal()
        stopped.wait()
    }

    deinit { close() }
}
