extension AudioFile {
    /// Whether a libsndfile failure to open means "try FFmpeg": libsndfile did not recognise the
    /// contents, recognised the container but not the encoding in it (ALAC in a CAF whose format
    /// flags are 0, as ffmpeg writes them), or found the file malformed (a variant it does not
    /// parse). The file system's verdicts (missing, unreadable, …) are final.
    static func fallsBackToFFmpeg(_ error: AudioFileError) -> Bool {
        switch error.reason {
        case .unsupportedFormat, .decodeFailed: true
        default: false
        }
    }

    /// Opens `path` with FFmpeg after libsndfile failed with `sndfileError`.
    ///
    /// If FFmpeg does not recognise the contents either, libsndfile's error stands (it names
    /// what libsndfile saw); if FFmpeg recognises the container but cannot decode it, FFmpeg's
    /// error is thrown (a truncated or corrupt MP4, an unsupported codec, no audio stream).
    static func openWithFFmpeg(path: String, after sndfileError: AudioFileError) throws(AudioFileError) -> FFmpegDecoder {
        do {
            return try FFmpegDecoder(path: path)
        } catch {
            throw error.recognised ? error.error : sndfileError
        }
    }

    /// Opens bytes in memory with FFmpeg after libsndfile failed (see ``openWithFFmpeg(path:after:)``).
    static func openWithFFmpeg(bytes: VirtualSource, name: String, after sndfileError: AudioFileError) throws(AudioFileError) -> FFmpegDecoder {
        do {
            return try FFmpegDecoder(bytes: bytes, name: name)
        } catch {
            throw error.recognised ? error.error : sndfileError
        }
    }
}
