internal import CFFmpeg
internal import CFFmpegLoader
#if canImport(Glibc)
import Glibc
#endif

/// A sound file encoded and muxed by FFmpeg (loaded at run time, as for decoding): AAC-LC
/// (FFmpeg's native `aac` encoder) or Apple Lossless (`alac`) in an MPEG-4 audio file, through
/// the `ipod` muxer (the `.m4a` flavour of MP4, brand `M4A `).
///
/// It takes the interleaved Float frames the recording's writer thread reads from the capture
/// ring, spreads them into the planes of one encoder frame of the codec's `frame_size` (1024
/// frames for AAC, 4096 for ALAC), allocated once, and encodes each full frame; ``finish()``
/// encodes the last, shorter frame, drains the encoder and writes the trailer (the `moov`
/// box). Nothing is allocated on the Swift side per write; FFmpeg allocates each packet's data.
///
/// AAC's priming (the encoder's 1024 frames of delay) and the padding of its last frame are
/// in the file's edit list, as FFmpeg's MP4 muxer writes it from the encoder's
/// `initial_padding` and the packets' durations: a decoder that honours it (FFmpeg's, Apple's)
/// returns the frames recorded, no more, no less.
///
/// Unlike libsndfile's files, an MPEG-4 file is only readable once its trailer (the sample
/// table, written at the end) is: a recording that fails because the disk is full leaves a
/// file without it, which players refuse. (A fragmented MP4 would stay readable; it is not
/// what iOS writes, and not every player takes it.)
///
/// Used by one thread at a time (a recording's writer thread), as ``AudioFileWriter``.
final class FFmpegFileWriter: RecordingWriter, @unchecked Sendable {
    let path: String
    let format: RecordingFormat
    private var output: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private let stream: UnsafeMutablePointer<AVStream>
    private let sampleFormat: AVSampleFormat
    private let frameSize: Int
    /// Frames in `frame` not yet sent to the encoder.
    private var filled = 0
    /// The next encoder frame's timestamp, in frames (the codec's time base is 1/rate).
    private var nextTimestamp: Int64 = 0
    /// A descriptor of the file, opened only to see whether it keeps its name on disk.
    private let descriptor: Int32
    private(set) var framesWritten: Int64 = 0

    /// Creates (or truncates) `path`. Everything that can be checked before (the format,
    /// FFmpeg, its encoder, the rate, the channel layout) is checked before the file is
    /// created; a failure after that removes the file.
    ///
    /// - Throws: ``RecordingError/unsupportedFormat(path:reason:)`` when FFmpeg cannot be
    ///   loaded or has no such encoder, or the encoder refuses the format;
    ///   ``RecordingError/cannotWrite(path:reason:)`` with FFmpeg's words for the system's
    ///   reason (“Permission denied”, “No such file or directory”).
    init(path: String, format: RecordingFormat) throws(RecordingError) {
        self.path = path
        self.format = format
        func unsupported(_ reason: String) -> RecordingError { .unsupportedFormat(path: path, reason: reason) }
        if let problem = format.problem { throw unsupported(problem) }
        if let reason = FFmpegLibrary.unavailableReason { throw unsupported(reason) }
        FFmpegLog.install()
        let name = format.fileType.displayName
        let encoderName = format.fileType == .aac ? "aac" : "alac"
        guard let encoder = ff.avcodec_find_encoder_by_name(encoderName) else {
            let version = ff.avcodec_version()
            throw unsupported("FFmpeg has no \(name) encoder (libavcodec \(version >> 16).\((version >> 8) & 0xFF))")
        }
        if let rates = encoder.pointee.supported_samplerates {
            var supported: [Int] = []
            var i = 0
            while rates[i] != 0 { supported.append(Int(rates[i])); i += 1 }
            guard supported.contains(format.sampleRate) else {
                throw unsupported("\(name) at \(format.sampleRate) Hz (FFmpeg's \(encoderName) encoder takes \(supported.sorted().map(String.init).joined(separator: ", ")) Hz)")
            }
        }
        let wanted: AVSampleFormat = switch format.fileType {
        case .aac: AV_SAMPLE_FMT_FLTP
        default: format.bitDepth == 24 ? AV_SAMPLE_FMT_S32P : AV_SAMPLE_FMT_S16P
        }
        if let formats = encoder.pointee.sample_fmts {
            var i = 0
            var found = false
            while formats[i] != AV_SAMPLE_FMT_NONE { if formats[i] == wanted { found = true }; i += 1 }
            guard found else { throw unsupported("FFmpeg's \(encoderName) encoder does not take \(format.fileType == .aac ? "planar float" : "\(format.bitDepth)-bit") samples") }
        }
        sampleFormat = wanted

        // Everything FFmpeg allocates is freed by `release()` until the writer owns it.
        var output: UnsafeMutablePointer<AVFormatContext>?
        var codec: UnsafeMutablePointer<AVCodecContext>?
        var frame: UnsafeMutablePointer<AVFrame>?
        var packet: UnsafeMutablePointer<AVPacket>?
        var descriptor: Int32 = -1
        var created = false
        func release() {
            if let output {
                if output.pointee.pb != nil { _ = ff.avio_closep(&output.pointee.pb) }
                ff.avformat_free_context(output)
            }
            ff.avcodec_free_context(&codec)
            ff.av_frame_free(&frame)
            ff.av_packet_free(&packet)
            if descriptor >= 0 { close(descriptor) }
            if created { unlink(path) }
        }
        func outOfMemory() -> RecordingError { release(); return .cannotWrite(path: path, reason: "out of memory") }

        let allocated = ff.avformat_alloc_output_context2(&output, nil, "ipod", path)
        guard allocated >= 0, let muxer = output else {
            release()
            throw unsupported("FFmpeg has no ipod (MPEG-4 audio) muxer (\(FFmpegError.text(allocated)))")
        }
        guard let context = ff.avcodec_alloc_context3(encoder) else { throw outOfMemory() }
        codec = context
        context.pointee.sample_fmt = wanted
        context.pointee.sample_rate = Int32(format.sampleRate)
        context.pointee.time_base = AVRational(num: 1, den: Int32(format.sampleRate))
        if format.fileType == .aac {
            context.pointee.bit_rate = Int64(format.aacBitRate)
        } else {
            context.pointee.bits_per_raw_sample = Int32(format.bitDepth)
        }
        // The encoder's own layout for the channel count (FFmpeg's default layout for 3 or 7
        // channels is not one AAC has).
        var layoutChosen = false
        if let layouts = encoder.pointee.ch_layouts {
            var i = 0
            while layouts[i].nb_channels != 0 {
                if layouts[i].nb_channels == Int32(format.channels) {
                    context.pointee.ch_layout = layouts[i]
                    layoutChosen = true
                    break
                }
                i += 1
            }
            guard layoutChosen else {
                release()
                throw unsupported("\(name) with \(format.channels) channels (FFmpeg's \(encoderName) encoder has no layout of \(format.channels) channels)")
            }
        } else {
            ff.av_channel_layout_default(&context.pointee.ch_layout, Int32(format.channels))
        }
        if muxer.pointee.oformat.pointee.flags & earshot_avfmt_globalheader() != 0 {
            context.pointee.flags |= earshot_codec_flag_global_header()
        }
        let (opened, openLog) = FFmpegLog.capturing { ff.avcodec_open2(context, encoder, nil) }
        guard opened >= 0 else {
            release()
            throw unsupported("FFmpeg's \(encoderName) encoder refuses \(format) (\(FFmpegError.detail(opened, log: openLog)))")
        }
        guard let newStream = ff.avformat_new_stream(muxer, nil) else { throw outOfMemory() }
        newStream.pointee.time_base = context.pointee.time_base
        let copied = ff.avcodec_parameters_from_context(newStream.pointee.codecpar, context)
        guard copied >= 0 else { release(); throw .cannotWrite(path: path, reason: FFmpegError.detail(copied, log: nil)) }
        frameSize = context.pointee.frame_size > 0 ? Int(context.pointee.frame_size) : 4096
        guard let allocatedFrame = ff.av_frame_alloc(), let allocatedPacket = ff.av_packet_alloc() else { throw outOfMemory() }
        (frame, packet) = (allocatedFrame, allocatedPacket)
        allocatedFrame.pointee.nb_samples = Int32(frameSize)
        allocatedFrame.pointee.format = wanted.rawValue
        allocatedFrame.pointee.sample_rate = Int32(format.sampleRate)
        allocatedFrame.pointee.ch_layout = context.pointee.ch_layout  // a native layout: nothing to copy deeply
        guard ff.av_frame_get_buffer(allocatedFrame, 0) >= 0 else { throw outOfMemory() }

        // Now the file.
        let ioOpened = ff.avio_open(&muxer.pointee.pb, path, AVIO_FLAG_WRITE)
        guard ioOpened >= 0 else {
            release()
            throw .cannotWrite(path: path, reason: FFmpegError.text(ioOpened))
        }
        created = true
        let (header, headerLog) = FFmpegLog.capturing { ff.avformat_write_header(muxer, nil) }
        guard header >= 0 else {
            release()
            throw .cannotWrite(path: path, reason: FFmpegError.detail(header, log: headerLog))
        }
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        (self.output, self.codec, self.frame, self.packet) = (muxer, context, allocatedFrame, allocatedPacket)
        stream = newStream
        self.descriptor = descriptor
    }

    deinit {
        _ = try? finish()
    }

    /// Writes `frames` interleaved frames: full encoder frames are encoded and muxed now, the
    /// rest waits in the frame for the next call.
    ///
    /// - Throws: ``RecordingError/cannotWrite(path:reason:)`` when the encoder fails or the
    ///   disk refuses (“No space left on device”).
    func write(_ samples: UnsafePointer<Float>, frames: Int) throws(RecordingError) {
        guard let frame else { return }
        let channels = format.channels
        var done = 0
        while done < frames {
            if filled == 0 {
                // Writable unless the encoder still holds the buffer (it copies what it is sent).
                let writable = ff.av_frame_make_writable(frame)
                if writable < 0 { throw .cannotWrite(path: path, reason: FFmpegError.detail(writable, log: nil)) }
            }
            let count = min(frames - done, frameSize - filled)
            let source = samples + done * channels
            for channel in 0..<channels {
                guard let plane = frame.pointee.extended_data[channel] else { continue }
                var from = source + channel
                switch sampleFormat {
                case AV_SAMPLE_FMT_FLTP:
                    let to = UnsafeMutableRawPointer(plane).assumingMemoryBound(to: Float.self) + filled
                    for i in 0..<count { to[i] = from.pointee; from += channels }
                case AV_SAMPLE_FMT_S16P:
                    let to = UnsafeMutableRawPointer(plane).assumingMemoryBound(to: Int16.self) + filled
                    for i in 0..<count { to[i] = Int16(Self.clipped(from.pointee, scale: 32768)); from += channels }
                default:  // S32P: 24 bits in the high bits, as the alac encoder reads them
                    let to = UnsafeMutableRawPointer(plane).assumingMemoryBound(to: Int32.self) + filled
                    for i in 0..<count { to[i] = Self.clipped(from.pointee, scale: 8_388_608) << 8; from += channels }
                }
            }
            filled += count
            done += count
            framesWritten += Int64(count)
            if filled == frameSize { try encode(last: false) }
        }
    }

    /// `x` scaled to an integer of `scale` (2^15 or 2^23), rounded, clipped to its range.
    @inline(__always)
    private static func clipped(_ x: Float, scale: Float) -> Int32 {
        let scaled = (x * scale).rounded()
        if !(scaled < scale) { return Int32(scale) - 1 }  // also NaN
        if scaled < -scale { return -Int32(scale) }
        return Int32(scaled)
    }

    /// Sends the frame's `filled` frames to the encoder (then, when `last`, the end of the
    /// stream) and muxes every packet it returns.
    private func encode(last: Bool) throws(RecordingError) {
        guard let codec, let frame else { return }
        if filled > 0 {
            frame.pointee.nb_samples = Int32(filled)
            frame.pointee.pts = nextTimestamp
            nextTimestamp += Int64(filled)
            filled = 0
            let sent = ff.avcodec_send_frame(codec, frame)
            if sent < 0 { throw .cannotWrite(path: path, reason: "the \(format.fileType.displayName) encoder failed (\(FFmpegError.detail(sent, log: nil)))") }
        }
        if last {
            let sent = ff.avcodec_send_frame(codec, nil)
            if sent < 0, sent != FFmpegError.endOfFile {
                throw .cannotWrite(path: path, reason: "the \(format.fileType.displayName) encoder failed (\(FFmpegError.detail(sent, log: nil)))")
            }
        }
        try drain()
    }

    /// Takes every packet the encoder has ready and hands it to the muxer.
    private func drain() throws(RecordingError) {
        guard let codec, let packet, let output else { return }
        while true {
            let received = ff.avcodec_receive_packet(codec, packet)
            if received == FFmpegError.again || received == FFmpegError.endOfFile { return }
            if received < 0 {
                throw .cannotWrite(path: path, reason: "the \(format.fileType.displayName) encoder failed (\(FFmpegError.detail(received, log: nil)))")
            }
            ff.av_packet_rescale_ts(packet, codec.pointee.time_base, stream.pointee.time_base)
            packet.pointee.stream_index = stream.pointee.index
            let written = ff.av_interleaved_write_frame(output, packet)  // takes the packet's reference
            if written < 0 { throw .cannotWrite(path: path, reason: FFmpegError.text(written)) }
        }
    }

    /// Whether the file still has a name on disk (its directory was not removed).
    func checkStillLinked() throws(RecordingError) {
        var status = stat()
        guard descriptor >= 0, fstat(descriptor, &status) == 0 else { return }
        if status.st_nlink == 0 {
            throw .cannotWrite(path: path, reason: "the file was removed (its folder is gone)")
        }
    }

    /// Encodes what is left, drains the encoder, writes the trailer and closes the file.
    /// After an error the file is closed all the same (without its trailer if that failed).
    func finish() throws(RecordingError) {
        guard output != nil else { return }
        var failure: RecordingError?
        do throws(RecordingError) {
            try encode(last: true)
        } catch {
            failure = error
        }
        if let output {
            let (trailer, trailerLog) = FFmpegLog.capturing { ff.av_write_trailer(output) }
            if trailer < 0, failure == nil { failure = .cannotWrite(path: path, reason: FFmpegError.detail(trailer, log: trailerLog)) }
            let closed = ff.avio_closep(&output.pointee.pb)
            if closed < 0, failure == nil { failure = .cannotWrite(path: path, reason: FFmpegError.text(closed)) }
            ff.avformat_free_context(output)
            self.output = nil
        }
        ff.avcodec_free_context(&codec)
        ff.av_frame_free(&frame)
        ff.av_packet_free(&packet)
        if descriptor >= 0 { close(descriptor) }
        if let failure { throw failure }
    }
}
