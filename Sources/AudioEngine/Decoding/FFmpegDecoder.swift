internal import CFFmpeg
internal import CFFmpegLoader
import Glibc

/// A decoder over FFmpeg's libavformat and libavcodec, for what libsndfile cannot open: AAC (LC,
/// HE) in MP4/M4A and ADTS, ALAC in MP4 and in CAF files libsndfile rejects, WMA, and whatever
/// else FFmpeg demuxes. Reads interleaved Float32 (converted with libswresample, no resampling).
///
/// ## Length and gapless playback
///
/// An MP4's edit list (or iTunes' `iTunSMPB`, which FFmpeg's demuxer reads as one) says how many
/// priming samples the encoder put before the music: FFmpeg's demuxer marks them and its decoder
/// drops them. The padding after the music is cut here: frames past the stream's duration (the
/// container's own figure, not one estimated from the bit rate) are not delivered. So an AAC item
/// is as long as its source, and items of a gapless album join without a gap.
///
/// ## Seeking
///
/// Sample-accurate where the packets carry timestamps: FFmpeg seeks to the packet before the
/// target (less a pre-roll of 4096 frames for lossy codecs, whose first frame after a jump
/// needs the one before it), and the frames before the target are decoded and dropped.
///
/// ## Errors
///
/// A stream that ends before the container's duration (less a tolerance of one codec frame) is
/// ``AudioFileError/Reason/truncated(atSeconds:)``; a demuxer read error, or 8 packets in a row the
/// decoder rejects, is ``AudioFileError/Reason/decodeFailed(_:)`` naming the position. An isolated
/// damaged packet the decoder rejects is played as silence of its length (FFmpeg's own tools
/// skip it), so that what follows keeps its time and the item its length.
///
/// Not thread-safe: one thread reads and seeks.
final class FFmpegDecoder {
    let format: AudioFileFormat
    let tags: AudioFileTags
    let source: String

    /// The demuxer (read by the network stream for its ICY metadata and seekability, on the decoding thread).
    private(set) var formatContext: UnsafeMutablePointer<AVFormatContext>?
    private var codecContext: UnsafeMutablePointer<AVCodecContext>?
    private let packet: UnsafeMutablePointer<AVPacket>
    private let frame: UnsafeMutablePointer<AVFrame>
    private let input: FFmpegInput?
    private let streamIndex: Int32
    private let timeBase: AVRational
    /// The timestamp of frame 0: the first decoded frame's (decoded when the file is opened),
    /// which is not always the stream's start time (FFmpeg's WMA decoder holds back its first
    /// frame, and the first frame it returns carries the second packet's timestamp).
    private var startTimestamp: Int64
    /// The container's exact length in frames (nil when unknown or estimated from the bit rate).
    private let exactFrameCount: Int64?
    private let preroll: Int64
    /// The largest shortfall at the end not taken for truncation: one codec frame.
    private let endTolerance: Int64

    private var converter: OpaquePointer?
    private var converterInput = (rate: Int32(0), format: Int32(-1), channels: Int32(0))
    /// Decoded frames not yet delivered: `pending[pendingOffset..<pendingCount]`, interleaved,
    /// in a buffer kept from frame to frame (`pendingCapacity` floats).
    private var pending: UnsafeMutablePointer<Float>
    private var pendingCapacity = 8192
    private var pendingCount = 0
    private var pendingOffset = 0
    /// The frame position of `pending[pendingOffset]`, i.e. of the next frame read.
    private(set) var position: Int64 = 0
    /// After a seek: frames before this are dropped (positions taken from timestamps).
    private var seekTarget: Int64?
    /// How far back the last seek went (see ``reposition(at:attempt:)``).
    private var seekAttempt = 0
    private var demuxerDone = false
    /// Whether any frame was ever decoded (a file whose sample table is broken has none).
    private var decodedAny = false
    private var decoderDone = false
    private var rejectedPackets = 0
    /// Frames of silence still to deliver in place of packets the decoder rejected.
    private var silenceOwed: Int64 = 0
    /// An error already thrown at the end, thrown again by later reads.
    private var endError: AudioFileError?

    /// Opens `path`. Throws ``FFmpegDecoder/OpenFailure`` saying whether FFmpeg recognised the contents at all.
    convenience init(path: String) throws(OpenFailure) {
        try self.init(source: path, input: nil) { context in
            // Probe the contents alone: given the path, FFmpeg would also score the name's
            // extension, and take random bytes named .mp3 for MP3.
            var probe: UnsafeMutablePointer<AVIOContext>?
            let opened = ff.avio_open(&probe, path, AVIO_FLAG_READ)
            guard opened >= 0 else { return opened }
            var found: UnsafePointer<AVInputFormat>?
            let score = ff.av_probe_input_buffer2(probe, &found, "", nil, 0, 0)
            _ = ff.avio_closep(&probe)  // a read-only probe: nothing to flush
            guard score >= 0, let found else { return score < 0 ? score : FFmpegError.demuxerNotFound }
            return ff.avformat_open_input(&context, path, found, nil)
        }
    }

    /// Opens bytes in memory (read through `bytes`).
    convenience init(bytes: VirtualSource, name: String) throws(OpenFailure) {
        if let reason = FFmpegLibrary.unavailableReason {
            throw OpenFailure(recognised: true, error: AudioFileError(source: name, reason: .unsupportedFormat(reason)))
        }
        guard let input = FFmpegInput(bytes) else {
            throw OpenFailure(recognised: false, error: AudioFileError(source: name, reason: .decodeFailed("out of memory")))
        }
        try self.init(source: name, input: input) { context in
            context = ff.avformat_alloc_context()
            guard let allocated = context else { return FFmpegError.outOfMemory }
            allocated.pointee.pb = input.context
            allocated.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
            return ff.avformat_open_input(&context, nil, nil, nil)
        }
    }

    /// Why a file could not be opened, and whether FFmpeg recognised its container (if not, the
    /// caller keeps libsndfile's verdict).
    struct OpenFailure: Error {
        let recognised: Bool
        let error: AudioFileError
    }

    init(
        source: String, input: FFmpegInput?,
        open: (inout UnsafeMutablePointer<AVFormatContext>?) -> Int32
    ) throws(OpenFailure) {
        self.source = source
        self.input = input
        func fail(_ reason: AudioFileError.Reason, recognised: Bool = true) -> OpenFailure {
            OpenFailure(recognised: recognised, error: AudioFileError(source: source, reason: reason))
        }
        // Without FFmpeg nothing more can be opened: say why (a missing library, named).
        if let reason = FFmpegLibrary.unavailableReason { throw fail(.unsupportedFormat(reason)) }
        var context: UnsafeMutablePointer<AVFormatContext>?
        let (opened, openLog) = FFmpegLog.capturing { open(&context) }
        guard opened >= 0, let context else {
            // No demuxer took the bytes: the probe fails with "invalid data" and logs nothing,
            // whereas a demuxer that took them and failed says why ("moov atom not found").
            let unrecognised = opened == FFmpegError.demuxerNotFound || (opened == FFmpegError.invalidData && openLog == nil)
            throw fail(FFmpegError.openReason(opened, log: openLog), recognised: !unrecognised)
        }
        var owned: UnsafeMutablePointer<AVFormatContext>? = context
        var codecOwned: UnsafeMutablePointer<AVCodecContext>?
        var packetOwned: UnsafeMutablePointer<AVPacket>? = ff.av_packet_alloc()
        var frameOwned: UnsafeMutablePointer<AVFrame>? = ff.av_frame_alloc()
        var success = false
        defer {
            if !success {
                ff.avformat_close_input(&owned)
                ff.avcodec_free_context(&codecOwned)
                ff.av_packet_free(&packetOwned)
                ff.av_frame_free(&frameOwned)
            }
        }
        guard let packetOwned, let frameOwned else { throw fail(.decodeFailed("out of memory")) }

        let (found, findLog) = FFmpegLog.capturing { ff.avformat_find_stream_info(context, nil) }
        guard found >= 0 else { throw fail(FFmpegError.openReason(found, log: findLog)) }
        var decoder: UnsafePointer<AVCodec>?
        let index = ff.av_find_best_stream(context, AVMEDIA_TYPE_AUDIO, -1, -1, &decoder, 0)
        guard index >= 0, let stream = context.pointee.streams[Int(index)] else {
            if index == FFmpegError.decoderNotFound {
                let name = Self.firstAudioCodecName(context) ?? "unknown"
                throw fail(.unsupportedFormat("unsupported codec \(name) (FFmpeg has no decoder for it)"))
            }
            throw fail(.unsupportedFormat("no audio stream (FFmpeg found \(context.pointee.nb_streams) streams, none audio)"))
        }
        guard let decoder else { throw fail(.unsupportedFormat("unsupported codec (FFmpeg has no decoder for it)")) }
        let parameters = stream.pointee.codecpar!
        guard let codec = ff.avcodec_alloc_context3(decoder) else { throw fail(.decodeFailed("out of memory")) }
        codecOwned = codec
        var status = ff.avcodec_parameters_to_context(codec, parameters)
        guard status >= 0 else { throw fail(FFmpegError.openReason(status, log: nil)) }
        codec.pointee.pkt_timebase = stream.pointee.time_base
        let (codecOpened, codecLog) = FFmpegLog.capturing { ff.avcodec_open2(codec, decoder, nil) }
        status = codecOpened
        guard status >= 0 else {
            let name = String(cString: decoder.pointee.name)
            throw fail(.unsupportedFormat("cannot open the \(name) decoder (\(FFmpegError.detail(status, log: codecLog)))"))
        }
        // Decode only this stream: the demuxer skips the others' packets.
        for other in 0..<Int(context.pointee.nb_streams) where other != Int(index) {
            context.pointee.streams[other]?.pointee.discard = AVDISCARD_ALL
        }

        formatContext = context
        codecContext = codec
        packet = packetOwned
        frame = frameOwned
        streamIndex = index
        timeBase = stream.pointee.time_base
        let nopts = earshot_av_nopts_value()
        startTimestamp = stream.pointee.start_time == nopts ? 0 : stream.pointee.start_time
        let lossless = (ff.avcodec_descriptor_get(decoder.pointee.id)?.pointee.props ?? 0) & (1 << 2) != 0
        preroll = lossless ? 0 : 4096
        endTolerance = Int64(max(parameters.pointee.frame_size, 4096))

        // The rate and channels as decoded (HE-AAC's SBR doubles the core rate the header may state).
        let sampleRate = codec.pointee.sample_rate > 0 ? codec.pointee.sample_rate : parameters.pointee.sample_rate
        let channels = codec.pointee.ch_layout.nb_channels > 0 ? codec.pointee.ch_layout.nb_channels : parameters.pointee.ch_layout.nb_channels
        guard sampleRate > 0, channels > 0 else {
            throw fail(.unsupportedFormat("no usable audio stream (FFmpeg reports \(sampleRate) Hz, \(channels) channels)"))
        }
        let estimated = context.pointee.duration_estimation_method == AVFMT_DURATION_FROM_BITRATE
        var frames: Int64?
        if stream.pointee.duration != nopts && stream.pointee.duration > 0 {
            frames = ff.av_rescale_q(stream.pointee.duration, stream.pointee.time_base, AVRational(num: 1, den: sampleRate))
        } else if context.pointee.duration != nopts && context.pointee.duration > 0 {
            frames = ff.av_rescale(context.pointee.duration, Int64(sampleRate), Int64(AV_TIME_BASE))
        }
        exactFrameCount = estimated ? nil : frames
        format = AudioFileFormat(
            sampleRate: Int(sampleRate), channelCount: Int(channels), frameCount: frames,
            container: Self.containerName(context), encoding: Self.encodingName(codec, decoder: decoder),
            bitDepth: lossless && codec.pointee.bits_per_raw_sample > 0 ? Int(codec.pointee.bits_per_raw_sample) : nil
        )
        tags = AudioFileTags(metadata: [context.pointee.metadata, stream.pointee.metadata])
        // Every throw is above: the context, decoder, packet and frame belong to this object now.
        pending = .allocate(capacity: pendingCapacity)
        success = true
        // Decode the first frame now, for its timestamp. An error here is thrown by the first read.
        _ = try? decodeNextFrame()
    }

    deinit {
        ff.swr_free(&converter)
        pending.deallocate()
        ff.avcodec_free_context(&codecContext)
        ff.avformat_close_input(&formatContext)
        var packet: UnsafeMutablePointer<AVPacket>? = packet
        ff.av_packet_free(&packet)
        var frame: UnsafeMutablePointer<AVFrame>? = frame
        ff.av_frame_free(&frame)
        // `input` (the custom I/O over bytes in memory) is released after the format context.
    }

    // MARK: - Reading

    /// Reads up to `frames` frames; 0 at the end. Throws at the end if the stream stopped early.
    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
        guard frames > 0 else { return 0 }
        let channels = format.channelCount
        var delivered = 0
        while delivered < frames {
            if pendingOffset == pendingCount {
                guard try decodeNextFrame() else { break }
                continue
            }
            var available = (pendingCount - pendingOffset) / channels
            if let exactFrameCount { available = Int(min(Int64(available), max(0, exactFrameCount - position))) }
            if available == 0 {
                // Past the container's end: the encoder's padding.
                pendingCount = 0
                pendingOffset = 0
                demuxerDone = true
                decoderDone = true
                break
            }
            let count = min(available, frames - delivered)
            (buffer + delivered * channels).update(from: pending + pendingOffset, count: count * channels)
            pendingOffset += count * channels
            delivered += count
            position += Int64(count)
        }
        if delivered == 0, let error = endOfStreamError() { throw error }
        return delivered
    }

    /// Moves to `frame` (clamped to the file).
    func seek(toFrame target: Int64) throws(AudioFileError) {
        var target = max(0, target)
        if let frameCount = format.frameCount { target = min(target, frameCount) }
        try reposition(at: target, attempt: 0)
    }

    /// Seeks the demuxer to before `target`, further back with each `attempt` (the pre-roll, 1 s,
    /// 10 s, then the start), and arranges for the frames before `target` to be dropped.
    ///
    /// A demuxer may land after the timestamp asked for (ASF seeks by packets of several frames,
    /// timed in milliseconds); ``append(_:)`` sees that from the first frame's timestamp and
    /// comes back here with the next attempt. A timestamp before the first packet selects it,
    /// which also makes an MP4 demuxer mark the priming frames to skip again.
    private func reposition(at target: Int64, attempt: Int) throws(AudioFileError) {
        guard let formatContext, let codecContext else { return }
        let rate = Int64(format.sampleRate)
        let backoff = [preroll, max(preroll, rate), 10 * rate]
        let start = attempt < backoff.count ? target - backoff[attempt] : -rate
        let timestamp = startTimestamp + ff.av_rescale_q(start, AVRational(num: 1, den: Int32(format.sampleRate)), timeBase)
        var (status, log) = FFmpegLog.capturing {
            ff.avformat_seek_file(formatContext, streamIndex, Int64.min, timestamp, timestamp, 0)
        }
        if status < 0 && timestamp < startTimestamp {
            // Some demuxers (ADTS, seeking by bytes) refuse a time before the stream: its start, then.
            (status, log) = FFmpegLog.capturing {
                ff.avformat_seek_file(formatContext, streamIndex, Int64.min, startTimestamp, startTimestamp, 0)
            }
        }
        guard status >= 0 else {
            let seconds = AudioFileError.format(seconds: Double(target) / Double(format.sampleRate))
            throw AudioFileError(source: source, reason: .decodeFailed("cannot seek to \(seconds) s (\(FFmpegError.detail(status, log: log)))"))
        }
        ff.avcodec_flush_buffers(codecContext)
        pendingCount = 0
        pendingOffset = 0
        demuxerDone = false
        decoderDone = false
        rejectedPackets = 0
        silenceOwed = 0
        endError = nil
        seekTarget = target
        seekAttempt = attempt
        position = target
    }

    /// Decodes the next frame into `pending`; false at the end of the stream.
    private func decodeNextFrame() throws(AudioFileError) -> Bool {
        guard let formatContext, let codecContext else { return false }
        while !decoderDone {
            if silenceOwed > 0 {
                appendSilence()
                return true
            }
            let received = ff.avcodec_receive_frame(codecContext, frame)
            if received >= 0 {
                defer { ff.av_frame_unref(frame) }
                try append(frame)
                if pendingOffset < pendingCount { return true }
                continue
            }
            if received == FFmpegError.endOfFile { decoderDone = true; break }
            guard received == FFmpegError.again else { throw failure(received, log: nil) }
            if demuxerDone { decoderDone = true; break }
            let (readStatus, readLog) = FFmpegLog.capturing { ff.av_read_frame(formatContext, packet) }
            if readStatus < 0 {
                if readStatus != FFmpegError.endOfFile && !(formatContext.pointee.pb?.pointee.eof_reached ?? 0 != 0) {
                    throw failure(readStatus, log: readLog)
                }
                demuxerDone = true
                _ = ff.avcodec_send_packet(codecContext, nil)  // drain (an error: already draining)
                continue
            }
            defer { ff.av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            let (sent, sendLog) = FFmpegLog.capturing { ff.avcodec_send_packet(codecContext, packet) }
            if sent < 0 && sent != FFmpegError.again {
                rejectedPackets += 1
                if rejectedPackets >= 8 { throw failure(sent, log: sendLog) }
                // Silence in its place, so that what follows keeps its time (not after a seek,
                // where the next frame's timestamp places it anyway).
                if seekTarget == nil {
                    let duration = packet.pointee.duration > 0
                        ? ff.av_rescale_q(packet.pointee.duration, timeBase, AVRational(num: 1, den: Int32(format.sampleRate)))
                        : Int64(codecContext.pointee.frame_size)
                    silenceOwed += max(0, duration)
                }
            } else {
                rejectedPackets = 0
            }
        }
        return false
    }

    /// Fills `pending` with up to 4096 frames of the silence owed for rejected packets.
    private func appendSilence() {
        let frames = Int(min(silenceOwed, 4096))
        let count = frames * format.channelCount
        if count > pendingCapacity {
            pending.deallocate()
            pendingCapacity = count
            pending = .allocate(capacity: pendingCapacity)
        }
        pending.update(repeating: 0, count: count)
        pendingCount = count
        pendingOffset = 0
        silenceOwed -= Int64(frames)
    }

    /// Converts a decoded frame to interleaved Float32 in `pending`, dropping what lies before a seek target.
    private func append(_ frame: UnsafeMutablePointer<AVFrame>) throws(AudioFileError) {
        let count = Int(frame.pointee.nb_samples)
        guard count > 0 else { return }
        if !decodedAny, seekTarget == nil, frame.pointee.best_effort_timestamp != earshot_av_nopts_value() {
            startTimestamp = frame.pointee.best_effort_timestamp
        }
        decodedAny = true
        let channels = format.channelCount
        let converter = try converter(for: frame)
        pendingCount = 0
        pendingOffset = 0
        let capacity = Int(ff.swr_get_out_samples(converter, Int32(count))) + 32
        if capacity * channels > pendingCapacity {
            pending.deallocate()
            pendingCapacity = capacity * channels
            pending = .allocate(capacity: pendingCapacity)
        }
        var output: UnsafeMutablePointer<UInt8>? = UnsafeMutableRawPointer(pending).assumingMemoryBound(to: UInt8.self)
        let input = UnsafeMutableRawPointer(frame.pointee.extended_data!).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
        let converted = ff.swr_convert(converter, &output, Int32(capacity), input, Int32(count))
        pendingCount = max(0, Int(converted)) * channels
        guard let target = seekTarget else { return }
        // The first frames after a seek: place them by their timestamp and drop those before the target.
        let timestamp = frame.pointee.best_effort_timestamp
        guard timestamp != earshot_av_nopts_value() else { seekTarget = nil; return }
        var first = ff.av_rescale_q(timestamp - startTimestamp, timeBase, AVRational(num: 1, den: Int32(format.sampleRate)))
        if Int64(timeBase.den) < Int64(timeBase.num) * Int64(format.sampleRate) {
            // Timestamps coarser than a frame (ASF's milliseconds): frames of a fixed size start
            // at a multiple of it, so take the nearest.
            first = (first + Int64(count) / 2) / Int64(count) * Int64(count)
        }
        let frames = Int64(pendingCount / channels)
        if first > target && seekAttempt <= 3 {
            // Landed after the target: go further back.
            pendingCount = 0
            try reposition(at: target, attempt: seekAttempt + 1)
        } else if first + frames <= target {
            pendingCount = 0
        } else {
            pendingOffset = Int(max(0, target - first)) * channels
            position = max(first, target)
            seekTarget = nil
        }
    }

    /// The converter from `frame`'s sample format, rate and layout to interleaved Float32 at the
    /// file's rate and channel count (made again if the stream changes them midway).
    private func converter(for frame: UnsafeMutablePointer<AVFrame>) throws(AudioFileError) -> OpaquePointer {
        let input = (rate: frame.pointee.sample_rate, format: frame.pointee.format, channels: frame.pointee.ch_layout.nb_channels)
        if let converter, input == converterInput { return converter }
        ff.swr_free(&converter)
        var outLayout = AVChannelLayout()
        ff.av_channel_layout_default(&outLayout, Int32(format.channelCount))
        defer { ff.av_channel_layout_uninit(&outLayout) }
        var made: OpaquePointer?
        let status = ff.swr_alloc_set_opts2(
            &made, &outLayout, AV_SAMPLE_FMT_FLT, Int32(format.sampleRate),
            &frame.pointee.ch_layout, AVSampleFormat(frame.pointee.format), frame.pointee.sample_rate, 0, nil
        )
        guard status >= 0, let made, ff.swr_init(made) >= 0 else {
            var failed = made
            ff.swr_free(&failed)
            throw AudioFileError(source: source, reason: .decodeFailed("cannot convert the decoded samples (FFmpeg: \(FFmpegError.text(status)))"))
        }
        converter = made
        converterInput = input
        return made
    }

    // MARK: - The end of the stream

    private func endOfStreamError() -> AudioFileError? {
        if let endError { return endError }
        guard let exactFrameCount, position < exactFrameCount - endTolerance else { return nil }
        if !decodedAny {
            let declared = AudioFileError.format(seconds: Double(exactFrameCount) / Double(format.sampleRate))
            endError = AudioFileError(source: source, reason: .decodeFailed("no audio could be decoded (the container declares \(declared) s)"))
            return endError
        }
        endError = AudioFileError(source: source, reason: .truncated(atSeconds: Double(position) / Double(format.sampleRate)))
        return endError
    }

    private func failure(_ code: Int32, log: String?) -> AudioFileError {
        let seconds = AudioFileError.format(seconds: Double(position) / Double(format.sampleRate))
        let error = AudioFileError(source: source, reason: .decodeFailed("damaged data at \(seconds) s (\(FFmpegError.detail(code, log: log)))"))
        endError = error
        demuxerDone = true
        decoderDone = true
        return error
    }

    // MARK: - Names

    private static func containerName(_ context: UnsafeMutablePointer<AVFormatContext>) -> String {
        guard let name = context.pointee.iformat?.pointee.name.map({ String(cString: $0) }) else { return "unknown" }
        switch name {
        case "mov,mp4,m4a,3gp,3g2,mj2": return "MPEG-4"
        case "aac": return "ADTS"
        case "asf", "asf_o": return "ASF"
        case "caf": return "CAF"
        case "matroska,webm": return "Matroska"
        case "ogg": return "Ogg"
        case "wav": return "WAV"
        case "aiff": return "AIFF"
        case "flac": return "FLAC"
        case "mp3": return "MPEG"
        default: return name.split(separator: ",").first.map { $0.uppercased() } ?? name
        }
    }

    private static func encodingName(_ codec: UnsafeMutablePointer<AVCodecContext>, decoder: UnsafePointer<AVCodec>) -> String {
        let id = decoder.pointee.id
        let bits = codec.pointee.bits_per_raw_sample
        switch id {
        case AV_CODEC_ID_AAC:
            switch codec.pointee.profile {
            case 4 /* FF_PROFILE_AAC_HE */: return "HE-AAC"
            case 28 /* FF_PROFILE_AAC_HE_V2 */: return "HE-AACv2"
            case 1 /* FF_PROFILE_AAC_LOW */: return "AAC LC"
            default:
                if let profile = ff.avcodec_profile_name(id, codec.pointee.profile) { return "AAC \(String(cString: profile))" }
                return "AAC"
            }
        case AV_CODEC_ID_ALAC: return bits > 0 ? "ALAC \(bits)-bit" : "ALAC"
        case AV_CODEC_ID_WMAV1: return "WMA v1"
        case AV_CODEC_ID_WMAV2: return "WMA v2"
        case AV_CODEC_ID_WMAPRO: return "WMA Pro"
        case AV_CODEC_ID_WMALOSSLESS: return "WMA Lossless"
        default:
            if let descriptor = ff.avcodec_descriptor_get(id), let long = descriptor.pointee.long_name { return String(cString: long) }
            return String(cString: decoder.pointee.name)
        }
    }

    private static func firstAudioCodecName(_ context: UnsafeMutablePointer<AVFormatContext>) -> String? {
        for index in 0..<Int(context.pointee.nb_streams) {
            guard let parameters = context.pointee.streams[index]?.pointee.codecpar,
                  parameters.pointee.codec_type == AVMEDIA_TYPE_AUDIO else { continue }
            return ff.avcodec_get_name(parameters.pointee.codec_id).map { String(cString: $0) }
        }
        return nil
    }
}

/// libavformat's custom I/O over bytes in memory.
final class FFmpegInput {
    let bytes: VirtualSource
    private(set) var context: UnsafeMutablePointer<AVIOContext>?

    init?(_ bytes: VirtualSource) {
        guard FFmpegLibrary.available else { return nil }
        self.bytes = bytes
        let size = 32768
        guard let buffer = ff.av_malloc(size) else { return nil }
        let opaque = Unmanaged.passUnretained(bytes).toOpaque()
        context = ff.avio_alloc_context(
            buffer.assumingMemoryBound(to: UInt8.self), Int32(size), 0, opaque,
            { opaque, destination, count in
                let source = VirtualSource.from(opaque)
                let read = source.read(into: destination, count: Int64(max(0, count)))
                return read > 0 ? Int32(read) : earshot_averror_eof()
            },
            nil,
            { opaque, offset, whence in
                let source = VirtualSource.from(opaque)
                if whence & AVSEEK_SIZE != 0 { return source.length }
                return source.seek(offset, whence: whence & ~AVSEEK_FORCE)
            }
        )
        if context == nil { ff.av_free(buffer); return nil }
    }

    deinit {
        if let context { ff.av_freep(&context.pointee.buffer) }
        ff.avio_context_free(&context)
    }
}
