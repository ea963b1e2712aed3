internal import CSampleRate

/// Why a ``SampleRateConverter`` could not be made.
public struct SampleRateConverterError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, e.g. "cannot convert 44100 Hz to 0 Hz: the rates must be positive".
    public let description: String

    /// Creates an error with its description.
    public init(_ description: String) {
        self.description = description
    }
}

/// Streaming sample-rate conversion of interleaved Float32 with libsamplerate.
///
/// ``process(input:inputFrames:output:outputCapacity:endOfInput:)`` neither allocates nor locks:
/// it may be called per block on the engine's reader thread. When the two rates are equal it
/// copies the input unchanged (no filter, no delay). Not thread-safe: one thread converts.
public final class SampleRateConverter: @unchecked Sendable {
    /// The interpolator: libsamplerate's sinc converters.
    public enum Quality: Sendable {
        /// `SRC_SINC_BEST_QUALITY`: 97 dB SNR, the slowest.
        case best
        /// `SRC_SINC_MEDIUM_QUALITY`: 97 dB SNR, a narrower pass band, several times faster than `best`.
        case medium
        /// `SRC_SINC_FASTEST`: band limited, 97 dB SNR, the fastest sinc.
        case fastest
    }

    /// Output frames per input frame (`outputRate / inputRate`).
    public let ratio: Double
    /// Interleaved channels per frame.
    public let channels: Int
    private let state: OpaquePointer?

    /// Creates a converter from `inputRate` to `outputRate` for `channels` interleaved channels.
    /// The ratio must lie within libsamplerate's 1/256…256.
    public init(
        channels: Int, inputRate: Double, outputRate: Double, quality: Quality = .medium
    ) throws(SampleRateConverterError) {
        let what = "cannot convert \(inputRate) Hz to \(outputRate) Hz"
        guard channels >= 1, channels <= 128 else {
            throw SampleRateConverterError("\(what): \(channels) channels (1…128 are possible)")
        }
        guard inputRate.isFinite, outputRate.isFinite, inputRate > 0, outputRate > 0 else {
            throw SampleRateConverterError("\(what): the rates must be positive")
        }
        let ratio = outputRate / inputRate
        guard src_is_valid_ratio(ratio) != 0 else {
            throw SampleRateConverterError("\(what): the ratio \(ratio) is outside 1/256…256")
        }
        self.ratio = ratio
        self.channels = channels
        if ratio == 1 {
            state = nil
            return
        }
        let type: Int32 = switch quality {
        case .best: Int32(SRC_SINC_BEST_QUALITY)
        case .medium: Int32(SRC_SINC_MEDIUM_QUALITY)
        case .fastest: Int32(SRC_SINC_FASTEST)
        }
        var error: Int32 = 0
        guard let state = src_new(type, Int32(channels), &error) else {
            throw SampleRateConverterError("\(what): \(String(cString: src_strerror(error)))")
        }
        self.state = state
    }

    deinit {
        if let state { src_delete(state) }
    }

    /// Converts up to `inputFrames` frames of `input` into `output`, which has room for
    /// `outputCapacity` frames. Returns the input frames consumed and the output frames produced.
    ///
    /// Call again with the unconsumed rest. With `endOfInput` set (on the last block, and then with
    /// no input until `produced` is 0), the converter drains the samples it holds back.
    public func process(
        input: UnsafePointer<Float>, inputFrames: Int, output: UnsafeMutablePointer<Float>, outputCapacity: Int,
        endOfInput: Bool
    ) -> (consumed: Int, produced: Int) {
        guard let state else {
            let frames = max(0, min(inputFrames, outputCapacity))
            output.update(from: input, count: frames * channels)
            return (frames, frames)
        }
        var data = SRC_DATA(
            data_in: input, data_out: output,
            input_frames: max(0, inputFrames), output_frames: max(0, outputCapacity),
            input_frames_used: 0, output_frames_gen: 0,
            end_of_input: endOfInput ? 1 : 0, src_ratio: ratio
        )
        let error = src_process(state, &data)
        // Errors here are misuse (overlapping buffers, a bad pointer): no data is converted.
        assert(error == 0, "src_process: \(String(cString: src_strerror(error)))")
        guard error == 0 else { return (0, 0) }
        return (data.input_frames_used, data.output_frames_gen)
    }

    /// Forgets the samples held back, for a new stream (after a seek).
    public func reset() {
        if let state { src_reset(state) }
    }
}
