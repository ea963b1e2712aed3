internal import CSndFile
#if canImport(Glibc)
import Glibc
#endif

/// What a recording's writer thread writes into: a file that takes interleaved Float frames
/// and is complete once finished. Used by one thread at a time (the writer thread; the capture
/// callback never calls it, so that a slow disk or encoder cannot stall the input).
protocol RecordingWriter: AnyObject, Sendable {
    /// Writes `frames` interleaved frames.
    func write(_ samples: UnsafePointer<Float>, frames: Int) throws(RecordingError)
    /// Throws when the file lost its name on disk (its folder was removed).
    func checkStillLinked() throws(RecordingError)
    /// Completes the file and closes it; later calls do nothing.
    func finish() throws(RecordingError)
}

extension RecordingFormat {
    /// Creates (or truncates) `path` and returns the writer for the format: FFmpeg's for AAC
    /// and Apple Lossless, libsndfile's for the rest.
    func openWriter(path: String) throws(RecordingError) -> any RecordingWriter {
        if fileType.isEncodedByFFmpeg { return try FFmpegFileWriter(path: path, format: self) }
        return try AudioFileWriter(path: path, format: self)
    }

    /// Writes all of `source` (decoded by ``AudioFile``, at its own rate and channels, which
    /// must be this format's) into `path` through the writer a recording uses, in blocks of
    /// 4800 frames: the encoding a recording does, offline (earshot-bench's `encode`, for
    /// bench/record). Returns the frames written.
    package func encode(_ source: AudioFile, to path: String) throws -> Int64 {
        let writer = try openWriter(path: path)
        let block = 4800
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: block * channels)
        defer { buffer.deallocate() }
        var total: Int64 = 0
        while true {
            let frames = try source.read(into: buffer, frames: block)
            if frames == 0 { break }
            try writer.write(buffer, frames: frames)
            total += Int64(frames)
        }
        try writer.finish()
        return total
    }
}

/// A sound file being written through libsndfile, on a file descriptor the writer opened
/// itself (so that errors carry `errno`'s reason and the file can be checked for removal).
/// Used by one thread at a time (a recording's writer thread).
final class AudioFileWriter: RecordingWriter, @unchecked Sendable {
    let path: String
    let format: RecordingFormat
    private var file: OpaquePointer?
    private let descriptor: Int32
    private(set) var framesWritten: Int64 = 0

    /// Creates (or truncates) `path`.
    ///
    /// - Throws: ``RecordingError/cannotWrite(path:reason:)`` with the system's reason
    ///   (“No such file or directory”, “Permission denied”) or libsndfile's.
    init(path: String, format: RecordingFormat) throws(RecordingError) {
        self.path = path
        self.format = format
        if let problem = format.problem { throw .unsupportedFormat(path: path, reason: problem) }
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .cannotWrite(path: path, reason: String(cString: strerror(errno))) }
        var info = SF_INFO()
        info.samplerate = Int32(format.sampleRate)
        info.channels = Int32(format.channels)
        info.format = AudioFileWriter.libsndfileFormat(format)
        guard sf_format_check(&info) != 0 else {
            close(fd)
            unlink(path)
            throw .unsupportedFormat(path: path, reason: "libsndfile cannot write \(format)")
        }
        guard let file = sf_open_fd(fd, Int32(SFM_WRITE), &info, 1) else {
            let reason = String(cString: sf_strerror(nil))
            close(fd)
            unlink(path)
            throw .cannotWrite(path: path, reason: reason)
        }
        self.file = file
        descriptor = fd
        if format.fileType.isLossless {
            // Float samples beyond ±1 clip instead of wrapping around.
            _ = sf_command(file, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        } else {
            var quality = format.quality
            _ = sf_command(file, Int32(SFC_SET_VBR_ENCODING_QUALITY), &quality, Int32(MemoryLayout<Double>.size))
        }
    }

    deinit { _ = try? finish() }

    /// Writes `frames` interleaved frames.
    ///
    /// - Throws: ``RecordingError/cannotWrite(path:reason:)`` when the disk refuses (the
    ///   reason from `errno`, such as “No space left on device”) or the file was removed.
    func write(_ samples: UnsafePointer<Float>, frames: Int) throws(RecordingError) {
        guard let file else { return }
        errno = 0
        let written = sf_writef_float(file, samples, sf_count_t(frames))
        if written > 0 { framesWritten += written }
        if written < frames {
            let reason = errno != 0 ? String(cString: strerror(errno)) : String(cString: sf_strerror(file))
            throw .cannotWrite(path: path, reason: reason)
        }
    }

    /// Whether the file still has a name on disk (its directory was not removed).
    func checkStillLinked() throws(RecordingError) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return }
        if status.st_nlink == 0 {
            throw .cannotWrite(path: path, reason: "the file was removed (its folder is gone)")
        }
    }

    /// Finishes the file (its header, the encoder's last pages) and closes it.
    func finish() throws(RecordingError) {
        guard let file else { return }
        self.file = nil
        sf_write_sync(file)
        errno = 0
        let result = sf_close(file)
        if result != 0 {
            throw .cannotWrite(path: path, reason: errno != 0 ? String(cString: strerror(errno)) : String(cString: sf_error_number(result)))
        }
    }

    private static func libsndfileFormat(_ format: RecordingFormat) -> Int32 {
        let pcm: Int32 = switch format.bitDepth {
        case 8: format.fileType == .wav ? Int32(SF_FORMAT_PCM_U8) : Int32(SF_FORMAT_PCM_S8)
        case 24: Int32(SF_FORMAT_PCM_24)
        case 32: Int32(SF_FORMAT_FLOAT)
        default: Int32(SF_FORMAT_PCM_16)
        }
        switch format.fileType {
        case .wav: return Int32(SF_FORMAT_WAV) | pcm
        case .aiff: return Int32(SF_FORMAT_AIFF) | pcm
        case .caf: return Int32(SF_FORMAT_CAF) | pcm
        case .flac: return Int32(SF_FORMAT_FLAC) | (format.bitDepth == 8 ? Int32(SF_FORMAT_PCM_S8) : pcm)
        case .oggVorbis: return Int32(SF_FORMAT_OGG) | Int32(SF_FORMAT_VORBIS)
        case .opus: return Int32(SF_FORMAT_OGG) | Int32(SF_FORMAT_OPUS)
        case .aac, .appleLossless: return 0  // FFmpegFileWriter's; sf_format_check refuses 0
        }
    }
}
