internal import CFFmpeg
internal import CFFmpegLoader
import Glibc
import Synchronization

/// FFmpeg's log, caught instead of printed: the last error-level message of each thread that asks,
/// so that an error can quote what the demuxer said ("moov atom not found").
///
/// FFmpeg logs through one process-wide callback; installing ours also keeps FFmpeg's chatter
/// off the application's standard error.
enum FFmpegLog {
    /// The last error message per thread, for threads inside ``capturing(_:)``.
    private static let messages = Mutex<[UInt: String]>([:])

    private static let installed: Void = {
        ff.av_log_set_callback { _, level, format, arguments in
            guard level <= AV_LOG_ERROR, let format, let arguments else { return }
            let thread = UInt(pthread_self())
            var buffer = [CChar](repeating: 0, count: 512)
            _ = vsnprintf(&buffer, buffer.count, format, arguments)
            let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            var text = String(decoding: bytes, as: UTF8.self)
            while text.last == "\n" || text.last == " " || text.last == "." { text.removeLast() }
            guard !text.isEmpty else { return }
            FFmpegLog.messages.withLock { messages in
                if messages[thread] != nil { messages[thread] = text }
            }
        }
    }()

    /// Runs `body`, returning its result and the last error FFmpeg logged on this thread meanwhile.
    static func capturing<T>(_ body: () -> T) -> (T, String?) {
        _ = installed
        let thread = UInt(pthread_self())
        messages.withLock { $0[thread] = "" }
        let result = body()
        let message = messages.withLock { $0.removeValue(forKey: thread) }
        return (result, message.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// Installs the callback (so that nothing reaches standard error) without capturing.
    static func install() { _ = installed }
}

/// FFmpeg's error codes, and the words for them.
enum FFmpegError {
    static let endOfFile = earshot_averror_eof()
    static let again = earshot_averror_eagain()
    static let invalidData = earshot_averror_invaliddata()
    static let decoderNotFound = earshot_averror_decoder_not_found()
    static let demuxerNotFound = earshot_averror_demuxer_not_found()
    static let streamNotFound = earshot_averror_stream_not_found()
    static let patchWelcome = earshot_averror_patchwelcome()
    static let outOfMemory = earshot_averror_enomem()

    /// `av_strerror`'s text for `code`.
    static func text(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        _ = ff.av_strerror(code, &buffer, buffer.count)  // an unknown code still gets a generic text
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// "FFmpeg: <what the code means>; <what the log said>", the log's words first when it said something.
    static func detail(_ code: Int32, log: String?) -> String {
        if let log { return "FFmpeg: \(log) (\(text(code)))" }
        return "FFmpeg: \(text(code))"
    }

    /// The ``AudioFileError/Reason`` for a failure to open (demux the header of) a file.
    static func openReason(_ code: Int32, log: String?) -> AudioFileError.Reason {
        switch code {
        case demuxerNotFound: .unsupportedFormat("FFmpeg: no demuxer recognises the contents")
        case decoderNotFound: .unsupportedFormat("unsupported codec (\(detail(code, log: log)))")
        case streamNotFound: .unsupportedFormat("no audio stream (\(detail(code, log: log)))")
        case patchWelcome: .unsupportedFormat("a feature FFmpeg does not implement (\(detail(code, log: log)))")
        case endOfFile: .decodeFailed("truncated header (\(detail(code, log: log)))")
        case invalidData: .decodeFailed("corrupt or incomplete file (\(detail(code, log: log)))")
        case outOfMemory: .decodeFailed("out of memory (\(detail(code, log: log)))")
        case -EACCES: .permissionDenied
        case -ENOENT: .notFound
        default: code < 0 && code > -4096
            ? .readFailed(detail(code, log: log))
            : .decodeFailed(detail(code, log: log))
        }
    }
}
