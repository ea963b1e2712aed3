internal import CFFmpegLoader

/// FFmpeg's libraries, loaded at their first use rather than linked (`CFFmpegLoader.h` says
/// why: they would bring about 130 shared libraries into every process at start). Everything
/// that calls FFmpeg first asks ``available`` (or ``unavailableReason``) and then calls
/// through ``ff``.
enum FFmpegLibrary {
    /// The loaded table, or why FFmpeg cannot be loaded ("cannot load libavformat.so.59: …").
    /// Loaded once, by whichever thread asks first.
    static let loaded: Result<earshot_ffmpeg, Unavailable> = {
        var error: UnsafePointer<CChar>?
        if let table = earshot_ffmpeg_load(&error) { return .success(table.pointee) }
        return .failure(Unavailable(reason: error.map { String(cString: $0) } ?? "unknown reason"))
    }()

    /// Why FFmpeg cannot be used here.
    struct Unavailable: Error, CustomStringConvertible {
        let reason: String
        var description: String { "FFmpeg cannot be loaded: \(reason)" }
    }

    /// Whether FFmpeg's libraries are loaded (loading them if not yet tried).
    static var available: Bool { if case .success = loaded { true } else { false } }

    /// Why FFmpeg cannot be used, or nil when it can.
    static var unavailableReason: String? { if case .failure(let error) = loaded { error.description } else { nil } }
}

/// FFmpeg's functions. Only after ``FFmpegLibrary/available`` said yes on the way here: a
/// call without FFmpeg is a programming error, and stops the process saying so.
let ff: earshot_ffmpeg = {
    switch FFmpegLibrary.loaded {
    case .success(let table): return table
    case .failure(let error): fatalError("FFmpeg was called without checking that it loaded: \(error)")
    }
}()
