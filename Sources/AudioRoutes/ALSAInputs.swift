internal import CALSA
internal import CLibraryLoader

#if canImport(Glibc)
import Glibc
#endif

/// The inputs when no sound server answers: the ALSA capture PCMs that the configuration
/// names with a hint (what `arecord -L` lists), as ``AudioInputPort``s.
///
/// A hint is kept when its direction (`IOID`) is input or unspecified and the PCM opens for
/// capture; its channels are what the PCM takes (one count, or the largest of a bounded
/// range; 2 for a converting plugin that takes any count). Left out: the converters and
/// bridges that are not devices (`null`, `pulse`, `pipewire`, `jack`, `oss`, the rate
/// converters, `upmix`/`vdownmix`, `speex`) and a card's per-use fan-out (`front:`,
/// `surround…:`, `iec958:`, `hdmi:`, `dmix:`, `dsnoop:`, `hw:`, `plughw:`, `usbstream:`),
/// for which the card's `sysdefault:CARD=…` stands. `default` comes first when it is kept.
///
/// A configuration defines such inputs with a `hint` block: `hint { show on description
/// "Headset Microphone|IOIDInput" }` (the `|IOID` suffix is how a description carries the
/// direction, as BlueALSA's do).
public enum ALSAInputs {
    /// The capture inputs now (opens each candidate briefly, non-blocking, to read its channels).
    public static func list() -> [AudioInputPort] {
        let inputs = ALSAHints.pcmHints().compactMap { hint -> AudioInputPort? in
            guard hint.direction != "Output", !skipped(hint.name), let channels = ALSAHints.captureChannels(of: hint.name) else { return nil }
            let described = hint.description?.split(separator: "\n").first.map(String.init) ?? hint.name
            return AudioInputPort(name: hint.name, portName: described, channels: channels, isMonitor: false)
        }
        return inputs.filter { $0.name == "default" } + inputs.filter { $0.name != "default" }
    }

    private static let notDevices: Set<String> = ["null", "pulse", "pipewire", "jack", "oss", "lavrate", "samplerate", "speexrate",
                                                   "speex", "upmix", "vdownmix"]
    private static let fanOut = ["front", "rear", "center_lfe", "side", "surround", "iec958", "spdif", "hdmi", "dmix", "dsnoop", "hw",
                                 "plughw", "usbstream"]

    static func skipped(_ name: String) -> Bool {
        let base = name.split(separator: ":", maxSplits: 1).first.map(String.init) ?? name
        if notDevices.contains(base) { return true }
        guard name.contains(":") else { return false }
        return fanOut.contains { base.hasPrefix($0) }
    }
}

/// The C calls of ``ALSAInputs``: `snd_device_name_hint` and a capture open for channels.
enum ALSAHints {
    struct Hint {
        var name: String
        var description: String?
        /// `Input`, `Output`, or nil (both).
        var direction: String?
    }

    static func pcmHints() -> [Hint] {
        guard ALSALibrary.loaded != nil else { return [] }
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard alsa.snd_device_name_hint(-1, "pcm", &hints) >= 0, let hints else { return [] }
        defer { _ = alsa.snd_device_name_free_hint(hints) }
        var result: [Hint] = []
        var cursor = hints
        while let hint = cursor.pointee {
            func field(_ id: String) -> String? {
                guard let value = alsa.snd_device_name_get_hint(hint, id) else { return nil }
                defer { free(value) }
                return String(cString: value)
            }
            if let name = field("NAME") { result.append(Hint(name: name, description: field("DESC"), direction: field("IOID"))) }
            cursor += 1
        }
        return result
    }

    /// The channels `name` records, or nil when it does not open for capture.
    static func captureChannels(of name: String) -> Int? {
        var pcm: OpaquePointer?
        guard alsa.snd_pcm_open(&pcm, name, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK) >= 0, let pcm else { return nil }
        defer { _ = alsa.snd_pcm_close(pcm) }
        var params: OpaquePointer?
        guard alsa.snd_pcm_hw_params_malloc(&params) >= 0, let params else { return nil }
        defer { alsa.snd_pcm_hw_params_free(params) }
        guard alsa.snd_pcm_hw_params_any(pcm, params) >= 0 else { return nil }
        var low: UInt32 = 0
        var high: UInt32 = 0
        guard alsa.snd_pcm_hw_params_get_channels_min(params, &low) >= 0, alsa.snd_pcm_hw_params_get_channels_max(params, &high) >= 0 else { return nil }
        if low == high { return Int(low) }
        return high <= 32 ? Int(high) : 2
    }
}
