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
        let opened = try PCMHardware.open(device, SND_PCM_STREAM_CAPTURE, channels: buffer.channels, rate: buffer.sampleRate,
                                          exactRate: true, periodFrames: periodFrames, periods: 4)
        let pcm = opened.pcm
        let rate = UInt32(opened.rate)
        let frames = opened.periodFrames
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
