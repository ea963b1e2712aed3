/// Why a recording could not start or go on. Each names the file or the input and the reason.
public enum RecordingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file cannot be created or written (“No space left on device”, “Permission denied”).
    case cannotWrite(path: String, reason: String)
    /// The format asked for cannot be written.
    case unsupportedFormat(path: String, reason: String)
    /// The input cannot be opened, or failed while recording (the server went away).
    case inputFailed(input: String, reason: String)

    /// “cannot write /x/y.flac: No space left on device”.
    public var description: String {
        switch self {
        case let .cannotWrite(path, reason): "cannot write \(path): \(reason)"
        case let .unsupportedFormat(path, reason): "cannot record \(path): unsupported format: \(reason)"
        case let .inputFailed(input, reason): "cannot record from \(input): \(reason)"
        }
    }
}
