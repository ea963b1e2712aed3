internal import CALSA
internal import CLibraryLoader

/// What ``PCMOutput`` and ``PCMInput`` share of opening an ALSA PCM: the open and the
/// hardware parameters (interleaved Float32, the channels, the rate, a period near the one
/// asked for and a buffer of `periods` of them). Errors are
/// ``AudioEngineError/deviceUnavailable(device:reason:)`` naming what the device refused
/// and ALSA's reason.
enum PCMHardware {
    /// An open PCM, its hardware parameters applied; its owner closes it.
    struct Opened {
        let pcm: OpaquePointer
        let rate: Int
        let periodFrames: Int
        let bufferFrames: Int
    }

    /// Opens `device` in `direction` and applies the parameters. `exactRate`: the device
    /// must take `rate` itself (capture, whose buffer is made for it); otherwise the nearest
    /// rate it has is granted (playback, whose engine follows it).
    static func open(
        _ device: String, _ direction: snd_pcm_stream_t, channels: Int, rate: Int, exactRate: Bool,
        periodFrames: Int, periods: Int
    ) throws(AudioEngineError) -> Opened {
        if case .failure(let unavailable) = LoadedLibraries.alsa {
            throw .deviceUnavailable(device: device, reason: unavailable.reason)
        }
        var handle: OpaquePointer?
        var rc = device.withCString { alsa.snd_pcm_open(&handle, $0, direction, 0) }
        guard rc >= 0, let pcm = handle else { throw .deviceUnavailable(device: device, reason: PCMOutput.describe(rc)) }
        func fail(_ what: String, _ rc: Int32) -> AudioEngineError { failure(closing: pcm, device: device, what, rc) }

        var hw: OpaquePointer?
        _ = alsa.snd_pcm_hw_params_malloc(&hw)
        defer { alsa.snd_pcm_hw_params_free(hw) }
        rc = alsa.snd_pcm_hw_params_any(pcm, hw)
        guard rc >= 0 else { throw fail("no configuration", rc) }
        rc = alsa.snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED)
        guard rc >= 0 else { throw fail("interleaved access unsupported", rc) }
        rc = alsa.snd_pcm_hw_params_set_format(pcm, hw, SND_PCM_FORMAT_FLOAT_LE)
        guard rc >= 0 else { throw fail("32-bit float samples unsupported", rc) }
        rc = alsa.snd_pcm_hw_params_set_channels(pcm, hw, UInt32(channels))
        guard rc >= 0 else { throw fail("\(channels) channels unsupported", rc) }
        var granted = UInt32(rate)
        rc = exactRate ? alsa.snd_pcm_hw_params_set_rate(pcm, hw, granted, 0) : alsa.snd_pcm_hw_params_set_rate_near(pcm, hw, &granted, nil)
        guard rc >= 0 else { throw fail("rate \(rate) Hz unsupported", rc) }
        var period = snd_pcm_uframes_t(periodFrames)
        rc = alsa.snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, nil)
        guard rc >= 0 else { throw fail("period of \(periodFrames) frames unsupported", rc) }
        var buffer = snd_pcm_uframes_t(periodFrames * periods)
        rc = alsa.snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer)
        guard rc >= 0 else { throw fail("buffer of \(periodFrames * periods) frames unsupported", rc) }
        rc = alsa.snd_pcm_hw_params(pcm, hw)
        guard rc >= 0 else { throw fail("cannot apply the configuration", rc) }
        return Opened(pcm: pcm, rate: Int(granted), periodFrames: Int(period), bufferFrames: Int(buffer))
    }

    /// Closes `pcm` and says why: `what` the device refused, with ALSA's text for `rc`.
    static func failure(closing pcm: OpaquePointer, device: String, _ what: String, _ rc: Int32) -> AudioEngineError {
        _ = alsa.snd_pcm_close(pcm)
        return .deviceUnavailable(device: device, reason: "\(what): \(PCMOutput.describe(rc))")
    }
}
