internal import CSndFile
import Glibc
import Synchronization

/// A decoder over libsndfile that reads interleaved Float32 (integer formats scaled to ±1.0).
///
/// It opens WAV (PCM, float), AIFF, CAF (PCM, ALAC), FLAC, Ogg Vorbis, Ogg Opus and MP3, from a
/// path or from bytes in memory; the format is recognised from the contents, not the name.
/// What libsndfile cannot open (AAC and ALAC in MP4, WMA, …) is decoded by FFmpeg instead
/// (see `FFmpegDecoder`); the choice is made by the contents, libsndfile first.
///
/// Not thread-safe: one thread (the engine's reader thread) reads and seeks. ``tags`` may be
/// read from any thread.
///
/// ## Truncated and damaged files
///
/// libsndfile reports no error when a file is cut short: it simply stops delivering frames.
/// ``read(into:frames:)`` turns that into ``AudioFileError/Reason/truncated(atSeconds:)``,
/// thrown by the call that would have returned 0, after every frame before the cut was
/// delivered. What is detected, exactly (libsndfile 1.2.0):
///
/// - WAV/WAVEX and AIFF whose data chunk is cut: libsndfile shortens the frame count to
///   what is present (so ``format`` already shows the shorter length) and notes in its header
///   log that the chunk size "should be" smaller. That note is the signal. Chunk sizes of about
///   2 GB and more (0x7F000000…0xFFFFFFFF) are taken for the placeholders streaming writers
///   (ffmpeg, sox to a pipe) leave, not for truncation.
/// - FLAC, ALAC in CAF, Ogg Vorbis, Ogg Opus and MP3 with a Xing/Info header: the stream ends
///   before the frame count of its header (STREAMINFO, `pakt`, the last granule position,
///   Xing). For MP3 the count may be an estimate, so a shortfall under 2 % (or 4608 frames)
///   is tolerated.
/// - Ogg Vorbis and Opus files whose end libsndfile cannot find (a cut file has no complete
///   last page: libsndfile 1.2.0 then reports the length as unknown, or its log says the file
///   "ended unexpectedly" or that the last page "lacks an end-of-stream bit"). Such a file is
///   reported truncated wherever its decodable data ends. (A chained Ogg file, whose last page
///   belongs to another logical stream, would look the same.)
///
/// When libsndfile itself reports an error mid-stream (mpg123 giving up on damaged MP3 data),
/// or when its log shows damaged data rather than a clean cut (FLAC decoder aborted, Ogg
/// pages skipped or a hole in the stream), the error is ``AudioFileError/Reason/decodeFailed(_:)``
/// naming the position. Not detected: W64 and RF64 cut short (libsndfile notes only the outer
/// RIFF size, which writers also get wrong in intact files; the shorter length is all one
/// sees), MP3 without a Xing header cut short (its length is estimated from the file size),
/// damaged PCM data (any bytes are valid PCM), and damage that a decoder conceals (Opus packet
/// loss concealment, mpg123 resyncing within its limit). A cut CAF (PCM or ALAC: libsndfile
/// then finds no `data` or `pakt` chunk) or an Opus file cut inside its first pages fails when
/// opened, with ``AudioFileError/Reason/decodeFailed(_:)`` ("malformed file").
///
/// `@unchecked Sendable`: reading and seeking are confined to one thread at a time (the caller's
/// contract above; `use` stops the process if two threads overlap, rather than let them
/// corrupt the decoder); `format` is immutable; the lazily completed tags are behind their
/// own Mutex.
public final class AudioFile: @unchecked Sendable {
    private let use = ExclusiveUse("AudioFile")
    /// The format facts of the file.
    public let format: AudioFileFormat
    /// The text tags of the file.
    ///
    /// For a file libsndfile decodes, the fields FFmpeg adds (see ``AudioFileTags``) cost a second
    /// header parse, a few milliseconds (and FFmpeg's load, tens, the first time; a FLAC file's
    /// comments are read without it, and a WAV or AIFF file without tags needs none): it is made
    /// on the first access, not when the file is opened, so that what never shows tags (system
    /// sounds, `earshot sound`) never pays for it.
    /// The first access blocks for that parse; later ones return the same tags at once.
    public var tags: AudioFileTags {
        lazyTags.withLock { state in
            switch state {
            case .complete(let tags):
                return tags
            case .pending(let sndfile, let path, let bytes):
                let tags = AudioFileTags.completing(sndfile, path: path, bytes: bytes.map { VirtualSource(bytes: $0) })
                state = .complete(tags)
                return tags
            }
        }
    }
    /// The path, or the name given with the data.
    public let source: String
    /// Where the decoder says that its data stalls and flows again (a network stream):
    /// players show "waiting to play" meanwhile. See ``DataSupply``.
    package let supply = DataSupply()
    /// The frame the next ``read(into:frames:)`` starts at.
    public private(set) var framePosition: Int64 = 0

    /// The libsndfile handle; nil when FFmpeg decodes the file.
    private let handle: OpaquePointer!
    /// The FFmpeg decoder, for a file libsndfile could not open.
    private let ffmpeg: FFmpegDecoder?
    /// The bytes and read position of a file opened from memory; released after `sf_close`.
    private let virtualSource: VirtualSource?
    private let hints: HeaderHints
    /// The tags, or what completing them needs (libsndfile's own, read at open, and the file).
    private let lazyTags: Mutex<LazyTags>
    /// A libsndfile error code already reported (by a failed seek), not to report again at the end.
    private var reportedErrorCode: Int32
    /// For 16-bit PCM, where the samples are read as libsndfile has them (for a WAV of the
    /// machine's byte order: straight from the file, one `read` per chunk) before
    /// ``MixKernels/convertFromInt16(_:_:samples:)`` makes them Float32. libsndfile's own float
    /// read goes through an 8 KB buffer a read at a time and converts sample by sample: it
    /// was a fifth of a playing `earshot play`'s CPU (bench/power). Nil for other encodings.
    private let sixteenBitChunk: UnsafeMutablePointer<Int16>?
    /// Frames in ``sixteenBitChunk``.
    private static let sixteenBitChunkFrames = 4096

    /// Opens the file at `path`.
    ///
    /// The path is checked before libsndfile sees it, so that a missing file, a directory, an
    /// unreadable or an empty file each get their own ``AudioFileError/Reason``.
    public convenience init(contentsOf path: String) throws(AudioFileError) {
        try Self.checkPath(path)
        let (handle, info): (OpaquePointer, SF_INFO)
        do {
            (handle, info) = try Self.openHandle(source: path, leadingBytes: { Self.leadingBytes(of: path) }) { info in
                sf_open(path, Int32(SFM_READ), info)
            }
        } catch where Self.fallsBackToFFmpeg(error) {
            self.init(ffmpeg: try Self.openWithFFmpeg(path: path, after: error))
            return
        }
        self.init(handle: handle, info: info, source: path, virtualSource: nil)
    }

    init(ffmpeg decoder: FFmpegDecoder) {
        handle = nil
        ffmpeg = decoder
        source = decoder.source
        virtualSource = nil
        format = decoder.format
        lazyTags = Mutex(.complete(decoder.tags))
        hints = HeaderHints(log: "", format: decoder.format)
        reportedErrorCode = 0
        sixteenBitChunk = nil
    }

    init(handle: OpaquePointer, info: SF_INFO, source: String, virtualSource: VirtualSource?) {
        self.handle = handle
        ffmpeg = nil
        self.source = source
        self.virtualSource = virtualSource
        // Integer formats read as float are scaled to ±1.0 (libsndfile's default, made explicit).
        sf_command(handle, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_TRUE))
        format = AudioFileFormat(info: info, handle: handle)
        // libsndfile's strings are read now, while only this thread has the handle; FFmpeg's
        // reading (of the path, or of its own copy of the bytes) waits for the first `tags`.
        lazyTags = Mutex(.pending(
            sndfile: AudioFileTags(handle: handle),
            path: virtualSource == nil ? source : nil,
            bytes: virtualSource?.bytes
        ))
        hints = HeaderHints(log: Self.log(of: handle), format: format)
        reportedErrorCode = sf_error(handle)
        sixteenBitChunk = Int(info.format) & Int(SF_FORMAT_SUBMASK) == Int(SF_FORMAT_PCM_16)
            ? .allocate(capacity: Self.sixteenBitChunkFrames * max(1, Int(info.channels))) : nil
    }

    deinit {
        if handle != nil { sf_close(handle) }
        sixteenBitChunk?.deallocate()
        // `virtualSource` (the bytes libsndfile read from) is released after this, with the other properties.
    }

    /// Reads up to `frames` frames into `buffer`, which has room for `frames * format.channelCount`
    /// floats, and returns the number of frames read: 0 at the end.
    ///
    /// Throws, at the end, if the stream stopped early: ``AudioFileError/Reason/truncated(atSeconds:)``
    /// or ``AudioFileError/Reason/decodeFailed(_:)`` naming the position in seconds (see the type's
    /// discussion). The frames before that point were all returned by earlier calls; reading again
    /// throws again.
    public func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
        guard frames > 0 else { return 0 }
        return try use.run { () throws(AudioFileError) -> Int in try readExclusively(into: buffer, frames: frames) }
    }

    private func readExclusively(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
        if let ffmpeg {
            defer { framePosition = ffmpeg.position }
            return try ffmpeg.read(into: buffer, frames: frames)
        }
        let count = sixteenBitChunk.map { readSixteenBit(into: buffer, frames: frames, chunk: $0) }
            ?? sf_readf_float(handle, buffer, sf_count_t(frames))
        if count > 0 {
            framePosition += count
            return Int(count)
        }
        if let error = endOfStreamError() { throw error }
        return 0
    }

    /// A 16-bit file's `sf_readf_float`: up to `frames` frames read a chunk at a time as
    /// 16-bit samples and converted as libsndfile converts them (divided by 32768). Returns
    /// the frames read, fewer at the end or at an error (which the next read reports).
    private func readSixteenBit(into buffer: UnsafeMutablePointer<Float>, frames: Int,
                                chunk: UnsafeMutablePointer<Int16>) -> sf_count_t {
        let channels = max(1, format.channelCount)
        var done = 0
        while done < frames {
            let asked = min(frames - done, Self.sixteenBitChunkFrames)
            let got = Int(sf_readf_short(handle, chunk, sf_count_t(asked)))
            guard got > 0 else { break }
            MixKernels.convertFromInt16(chunk, buffer + done * channels, samples: got * channels)
            done += got
            if got < asked { break }
        }
        return sf_count_t(done)
    }

    /// Moves the read position to `frame`. A negative frame means 0; a frame past the known end
    /// means the end (the next read returns 0).
    public func seek(toFrame frame: Int64) throws(AudioFileError) {
        try use.run { () throws(AudioFileError) in try seekExclusively(toFrame: frame) }
    }

    private func seekExclusively(toFrame frame: Int64) throws(AudioFileError) {
        if let ffmpeg {
            defer { framePosition = ffmpeg.position }
            return try ffmpeg.seek(toFrame: frame)
        }
        var target = max(0, frame)
        if let frameCount = format.frameCount { target = min(target, frameCount) }
        let result = sf_seek(handle, target, SEEK_SET)
        guard result >= 0 else {
            reportedErrorCode = sf_error(handle)
            let seconds = AudioFileError.format(seconds: seconds(atFrame: target))
            throw error(.decodeFailed("cannot seek to \(seconds) s (libsndfile: \(Self.errorText(handle)))"))
        }
        framePosition = result
    }

    /// Decodes the whole file, from the start, into memory (for short sounds: system sounds,
    /// effects). Leaves the position at the end.
    public func readAll() throws(AudioFileError) -> [Float] {
        if framePosition != 0 { try seek(toFrame: 0) }
        let channels = format.channelCount
        var samples: [Float] = []
        if let frameCount = format.frameCount {
            samples.reserveCapacity(Int(min(frameCount, 1 << 26)) * channels)
        }
        let chunk = 16384
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: chunk * channels)
        defer { scratch.deallocate() }
        while true {
            let count = try read(into: scratch, frames: chunk)
            if count == 0 { break }
            samples.append(contentsOf: UnsafeBufferPointer(start: scratch, count: count * channels))
        }
        return samples
    }

    // MARK: - The end of the stream

    /// Why the stream ended where it did, if it ended too early (see the type's discussion).
    private func endOfStreamError() -> AudioFileError? {
        let position = AudioFileError.format(seconds: seconds(atFrame: framePosition))
        let code = sf_error(handle)
        if code != 0 && code != reportedErrorCode {
            reportedErrorCode = code
            return error(.decodeFailed("decoding failed at \(position) s (libsndfile: \(Self.errorText(handle)))"))
        }
        var endedEarly = hints.dataChunkCut || hints.oggWithoutEnd
        if let frameCount = format.frameCount {
            let tolerance = hints.isMPEG ? max(frameCount / 50, 4608) : 0
            if framePosition < frameCount - tolerance { endedEarly = true }
        }
        guard endedEarly else { return nil }
        // A decoder that gave up on damaged data, rather than running out of it, leaves a note.
        let log = Self.log(of: handle)
        if log.utf8.count > hints.logLength {
            let recent = log.utf8.dropFirst(hints.logLength)
            for line in String(decoding: recent, as: UTF8.self).split(separator: "\n") {
                if line.contains("ABORTED") || line.contains("Corrupted") || line.contains("hole") {
                    let note = line.trimmingLogDecoration()
                    return error(.decodeFailed("damaged data at \(position) s (libsndfile: \(note))"))
                }
            }
        }
        return error(.truncated(atSeconds: seconds(atFrame: framePosition)))
    }

    private func seconds(atFrame frame: Int64) -> Double {
        format.sampleRate > 0 ? Double(frame) / Double(format.sampleRate) : 0
    }

    private func error(_ reason: AudioFileError.Reason) -> AudioFileError {
        AudioFileError(source: source, reason: reason)
    }

    // MARK: - Opening

    /// Maps what the file system says about `path` to an error, before libsndfile tries it.
    private static func checkPath(_ path: String) throws(AudioFileError) {
        func fail(_ reason: AudioFileError.Reason) -> AudioFileError { AudioFileError(source: path, reason: reason) }
        var status = stat()
        guard stat(path, &status) == 0 else {
            let code = errno
            switch code {
            case ENOENT, ENOTDIR: throw fail(.notFound)
            case EACCES: throw fail(.permissionDenied)
            default: throw fail(.readFailed(systemMessage(code)))
            }
        }
        switch status.st_mode & S_IFMT {
        case S_IFDIR: throw fail(.isDirectory)
        case S_IFREG: break
        default: throw fail(.readFailed("not a regular file"))
        }
        // Root passes access(2) whatever the mode bits say; the EACCES from opening is mapped too.
        guard access(path, R_OK) == 0 else {
            let code = errno
            throw fail(code == EACCES ? .permissionDenied : .readFailed(systemMessage(code)))
        }
        if status.st_size == 0 { throw fail(.empty) }
    }

    /// The first bytes of a file, to name formats libsndfile does not know.
    private static func leadingBytes(of path: String) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 12)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        return Array(bytes.prefix(max(count, 0)))
    }

    /// Serialises opening: libsndfile keeps the error and the log of a failed open in globals
    /// (there is no handle to ask), which a concurrent open would overwrite.
    private static let openLock = Mutex(())

    /// Opens with `open` (`sf_open` or `sf_open_virtual`), turning a failure into an error
    /// (`leadingBytes` gives the first bytes of the file, to name formats libsndfile does not know).
    static func openHandle(
        source: String, leadingBytes: () -> [UInt8], _ open: (UnsafeMutablePointer<SF_INFO>) -> OpaquePointer?
    ) throws(AudioFileError) -> (OpaquePointer, SF_INFO) {
        let outcome = openLock.withLock { _ -> Result<(OpaquePointer, SF_INFO), OpenFailure> in
            var info = SF_INFO()
            if let handle = open(&info) { return .success((handle, info)) }
            return .failure(OpenFailure(code: sf_error(nil), message: errorText(nil), log: log(of: nil)))
        }
        switch outcome {
        case .success(let opened): return opened
        case .failure(let failure): throw failure.error(source: source, leadingBytes: leadingBytes())
        }
    }

    /// What libsndfile said when it could not open a file.
    private struct OpenFailure: Error {
        let code: Int32
        let message: String
        let log: String

        func error(source: String, leadingBytes: [UInt8]) -> AudioFileError {
            func fail(_ reason: AudioFileError.Reason) -> AudioFileError { AudioFileError(source: source, reason: reason) }
            let note = AudioFile.lastLogNote(log)
            let detailed = note.map { "\(message); \($0)" } ?? message
            if code == Int32(SF_ERR_SYSTEM) {
                if message.contains("Permission denied") { return fail(.permissionDenied) }
                if message.contains("No such file") { return fail(.notFound) }
                return fail(.readFailed(message))
            }
            if leadingBytes.count >= 8, Array(leadingBytes[4..<8]) == Array("ftyp".utf8) {
                return fail(.unsupportedFormat("an MPEG-4 file (AAC, .m4a/.mp4), which libsndfile cannot decode; libsndfile: \(message)"))
            }
            switch code {
            case Int32(SF_ERR_UNRECOGNISED_FORMAT): return fail(.unsupportedFormat("libsndfile: \(message)"))
            case Int32(SF_ERR_UNSUPPORTED_ENCODING): return fail(.unsupportedFormat("libsndfile: \(detailed)"))
            case Int32(SF_ERR_MALFORMED_FILE): return fail(.decodeFailed("malformed file (libsndfile: \(detailed))"))
            default:
                // libsndfile's private codes. The MPEG decoder, handed bytes it cannot decode, says
                // "File does not exist or is not a regular file": not so, the path was checked (or the bytes are in memory).
                if message.hasPrefix("File does not exist") {
                    return fail(.unsupportedFormat("libsndfile: no decodable audio stream found"))
                }
                return fail(.unsupportedFormat("libsndfile: \(detailed)"))
            }
        }
    }

    // MARK: - libsndfile's words

    /// `sf_strerror` without the trailing full stop.
    static func errorText(_ handle: OpaquePointer?) -> String {
        guard let text = sf_strerror(handle) else { return "unknown error" }
        var message = String(cString: text)
        while message.hasSuffix(".") || message.hasSuffix(" ") { message.removeLast() }
        return message
    }

    /// libsndfile's parse log of `handle`, or of the last failed open when `handle` is nil.
    static func log(of handle: OpaquePointer?) -> String {
        var buffer = [CChar](repeating: 0, count: 8192)
        sf_command(handle, Int32(SFC_GET_LOG_INFO), &buffer, Int32(buffer.count))
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The last line of a failed open's log that says something (not "End", "File :" or "Length :").
    fileprivate static func lastLogNote(_ log: String) -> String? {
        for line in log.split(separator: "\n").reversed() {
            let note = line.trimmingLogDecoration()
            if note.isEmpty || note == "End" || note.hasPrefix("File :") || note.hasPrefix("Length :") { continue }
            return note
        }
        return nil
    }

    private static func systemMessage(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }
}

/// The tags of an ``AudioFile``: complete, or libsndfile's with what FFmpeg needs to complete them.
private enum LazyTags: Sendable {
    case complete(AudioFileTags)
    case pending(sndfile: AudioFileTags, path: String?, bytes: [UInt8]?)
}

/// What libsndfile's header log says about a file's integrity, read once when it is opened.
private struct HeaderHints {
    /// A WAV/AIFF data chunk longer than the file ("data : 176400 (should be 105822)").
    var dataChunkCut = false
    /// An Ogg file whose end libsndfile could not find (no last page with a granule position, or
    /// one without the end-of-stream flag).
    var oggWithoutEnd = false
    /// An MPEG stream, whose frame count may be an estimate.
    var isMPEG = false
    /// The length of the log after opening; later lines come from decoding.
    var logLength = 0

    init(log: String, format: AudioFileFormat) {
        logLength = log.utf8.count
        // libsndfile looks for the last page of a seekable Ogg file to learn its length; our
        // sources (regular files, bytes in memory) are always seekable.
        oggWithoutEnd = format.container == "Ogg" && format.frameCount == nil
        // Searched in the whole log once, not line by line: a substring search costs as much
        // to set up as to run, and a FLAC file's log has a line per metadata block.
        if log.contains("File ended unexpectedly") || log.contains("lacks an end-of-stream") { oggWithoutEnd = true }
        for line in log.split(separator: "\n") {
            let text = line.trimmingLogDecoration()
            if text.hasPrefix("MPEG-1/2 Audio") { isMPEG = true }
            if text.hasPrefix("data :") || text.hasPrefix("SSND :"), text.contains("(should be") {
                let size = text.dropFirst(6).prefix { $0 == " " || $0.isNumber }
                let declared = Int64(size.trimming(" ")) ?? 0
                // Streaming writers leave 0xFFFFFFFF (ffmpeg) or about 0x7F000000 (sox): unknown, not cut.
                if declared > 0 && declared < 0x7F00_0000 - 0x1_0000 { dataChunkCut = true }
            }
        }
    }
}

extension Substring {
    /// A log line without its indentation and the asterisks libsndfile marks problems with.
    fileprivate func trimmingLogDecoration() -> String {
        String(drop { $0 == " " || $0 == "*" || $0 == "\t" }).trimming(" ")
    }

    fileprivate func trimming(_ character: Character) -> String {
        var text = self
        while text.first == character { text.removeFirst() }
        while text.last == character { text.removeLast() }
        return String(text)
    }
}

extension String {
    fileprivate func trimming(_ character: Character) -> String {
        self[...].trimming(character)
    }
}
