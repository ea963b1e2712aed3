internal import CSpeexDSP
internal import CLibraryLoader

/// Why a ``SampleRateConverter`` could not be made.
public struct SampleRateConverterError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, e.g. "cannot convert 44100 Hz to 0 Hz: the rates must be positive".
    public let description: String

    /// Creates an error with its description.
    public init(_ description: String) {
        self.description = description
    }
}

/// Streaming sample-rate conversion of interleaved Float32: a polyphase windowed-sinc filter
/// of the engine's own (``PolyphaseFilter``) for mono and stereo at `.fastest` and `.medium`
/// where the ratio's table is small (every pair of common rates), and otherwise the speexdsp
/// resampler (the resampler PulseAudio uses by default).
///
/// ``process(input:inputFrames:output:outputCapacity:endOfInput:)`` neither allocates nor locks:
/// it may be called per block on the engine's reader thread. The filter's initial delay is
/// skipped and its tail drained at the end of input, so the output lines up with the input
/// and has the expected length. When the two rates are equal it copies the input unchanged.
/// One thread at a time converts: `@unchecked Sendable` so that a converter made on one
/// thread can be handed to the reader thread; two threads inside at once stop the process
/// with the type's name (``ExclusiveUse``), rather than corrupt the filter's state.
public final class SampleRateConverter: @unchecked Sendable {
    private let use = ExclusiveUse("SampleRateConverter")
    /// How good (and how costly) the interpolation is.
    public enum Quality: Sendable {
        /// speexdsp at quality 10.
        case best
        /// The polyphase filter with 96 taps, flat to 0.44 of the lower rate, 100 dB stopband
        /// (speexdsp at quality 5 where the ratio has no table).
        case medium
        /// The polyphase filter with 48 taps, flat to 0.40 of the lower rate, 90 dB stopband
        /// (speexdsp at quality 3 where the ratio has no table). What players use: about half
        /// the CPU of speexdsp at quality 3 (`earshot-bench players --count 32 --seconds 8`
        /// measures it).
        case fastest

        var design: PolyphaseFilter.Design? {
            switch self {
            case .best: nil
            case .medium: .medium
            case .fastest: .fast
            }
        }

        var speexQuality: Int32 {
            switch self {
            case .best: 10
            case .medium: 5
            case .fastest: 3
            }
        }
    }

    /// Output frames per input frame (`outputRate / inputRate`).
    public let ratio: Double
    /// Interleaved channels per frame.
    public let channels: Int
    /// speexdsp's resampler, where ``filter`` is nil and the rates differ.
    private let state: OpaquePointer?
    private let filter: PolyphaseFilter?
    /// Silence fed at the end of input to push the filter's tail out.
    private let zeros: UnsafeMutablePointer<Float>
    private let zeroFrames = 256
    private let inputLatency: Int
    /// Tail frames still to drain, once the end of input was seen.
    private var drainLeft: Int?

    /// Creates a converter from `inputRate` to `outputRate` (whole numbers of Hz) for
    /// `channels` interleaved channels.
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
        guard inputRate == inputRate.rounded(), outputRate == outputRate.rounded(),
              inputRate <= 1_536_000, outputRate <= 1_536_000 else {
            throw SampleRateConverterError("\(what): the rates must be whole numbers of Hz up to 1536000")
        }
        let ratio = outputRate / inputRate
        guard ratio >= 1.0 / 256, ratio <= 256 else {
            throw SampleRateConverterError("\(what): the ratio \(ratio) is outside 1/256…256")
        }
        self.ratio = ratio
        self.channels = channels
        zeros = .allocate(capacity: zeroFrames * channels)
        zeros.initialize(repeating: 0, count: zeroFrames * channels)
        if ratio == 1 {
            state = nil
            filter = nil
            inputLatency = 0
            return
        }
        if let design = quality.design,
           let filter = PolyphaseFilter(channels: channels, inputRate: Int(inputRate), outputRate: Int(outputRate), design: design) {
            state = nil
            self.filter = filter
            inputLatency = 0
            return
        }
        filter = nil
        if case .failure(let unavailable) = LoadedLibraries.speexDSP {
            zeros.deallocate()
            throw SampleRateConverterError("\(what): \(unavailable)")
        }
        var error: Int32 = 0
        guard let state = speexDSP.speex_resampler_init(UInt32(channels), UInt32(inputRate), UInt32(outputRate), quality.speexQuality, &error) else {
            zeros.deallocate()
            throw SampleRateConverterError("\(what): \(speexDSP.speex_resampler_strerror(error).map { String(cString: $0) } ?? "speexdsp error \(error)")")
        }
        _ = speexDSP.speex_resampler_skip_zeros(state)
        self.state = state
        inputLatency = Int(speexDSP.speex_resampler_get_input_latency(state))
    }

    deinit {
        if let state { speexDSP.speex_resampler_destroy(state) }
        zeros.deallocate()
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
        use.run { convert(input: input, inputFrames: inputFrames, output: output, outputCapacity: outputCapacity, endOfInput: endOfInput) }
    }

    private func convert(
        input: UnsafePointer<Float>, inputFrames: Int, output: UnsafeMutablePointer<Float>, outputCapacity: Int,
        endOfInput: Bool
    ) -> (consumed: Int, produced: Int) {
        if let filter {
            return filter.process(input: input, count: max(0, inputFrames), output: output, capacity: max(0, outputCapacity),
                                  drain: endOfInput && inputFrames <= 0)
        }
        guard let state else {
            let frames = max(0, min(inputFrames, outputCapacity))
            output.update(from: input, count: frames * channels)
            return (frames, frames)
        }
        var consumed = UInt32(max(0, inputFrames))
        var produced = UInt32(max(0, outputCapacity))
        if inputFrames > 0 || !endOfInput {
            _ = speexDSP.speex_resampler_process_interleaved_float(state, input, &consumed, output, &produced)
            return (Int(consumed), Int(produced))
        }
        // The end: feed silence for the filter's input latency to push out its tail.
        let left = drainLeft ?? inputLatency
        guard left > 0, outputCapacity > 0 else {
            drainLeft = 0
            return (0, 0)
        }
        var zerosIn = UInt32(min(left, zeroFrames))
        produced = UInt32(min(outputCapacity, Int((Double(zerosIn) * ratio).rounded(.up)) + 1))
        _ = speexDSP.speex_resampler_process_interleaved_float(state, zeros, &zerosIn, output, &produced)
        drainLeft = left - Int(zerosIn)
        return (0, Int(produced))
    }

    /// Forgets the samples held back, for a new stream (after a seek).
    public func reset() {
        use.run {
            filter?.reset()
            guard let state else { return }
            _ = speexDSP.speex_resampler_reset_mem(state)
            _ = speexDSP.speex_resampler_skip_zeros(state)
            drainLeft = nil
        }
    }
}
