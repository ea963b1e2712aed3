/// Why an audio file could not be opened, decoded or read, naming the file.
///
/// The ``description`` is a sentence fit for a log or an error alert, for example
/// `cannot open /x/y.wav: no such file` or `cannot decode /x/y.mp3: truncated at 12.4 s`.
public struct AudioFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Hashable {
        /// Nothing exists at the path (or a component of it is not a directory).
        case notFound
        /// The path names a directory.
        case isDirectory
        /// The process may not read the file.
        case permissionDenied
        /// The file (or the data) has no bytes at all.
        case empty
        /// Neither libsndfile nor FFmpeg recognises the contents, or the container holds no
        /// audio stream or one in a codec neither decodes. The text says what was found (the
        /// decoder's own words included).
        case unsupportedFormat(String)
        /// The audio stops before the end its header declares (a file cut short, for example
        /// by an interrupted copy). Everything up to `atSeconds` was delivered.
        case truncated(atSeconds: Double)
        /// The decoder failed: a malformed header, or damaged data in the middle of the stream.
        /// The text names the position where it is known.
        case decodeFailed(String)
        /// The operating system failed to read the file (an I/O error, a file that is not a
        /// regular file, too many open files, …).
        case readFailed(String)
        /// A network stream could not be opened: the server refused or did not answer, answered
        /// with an HTTP error, redirected too often, or the name did not resolve. The text says which.
        case networkFailed(String)
    }

    /// The path or, for data in memory, the name it was given.
    public let source: String
    /// What went wrong.
    public let reason: Reason

    /// Creates an error for `source`.
    public init(source: String, reason: Reason) {
        self.source = source
        self.reason = reason
    }

    public var description: String {
        switch reason {
        case .notFound: "cannot open \(source): no such file"
        case .isDirectory: "cannot open \(source): it is a directory"
        case .permissionDenied: "cannot open \(source): permission denied"
        case .empty: "cannot open \(source): the file is empty"
        case .unsupportedFormat(let detail): "cannot open \(source): not a supported audio format (\(detail))"
        case .truncated(let seconds): "cannot decode \(source): truncated at \(Self.format(seconds: seconds)) s"
        case .decodeFailed(let detail): "cannot decode \(source): \(detail)"
        case .readFailed(let detail): "cannot read \(source): \(detail)"
        case .networkFailed(let detail): "cannot open \(source): \(detail)"
        }
    }
}

extension AudioFileError {
    /// Seconds with one decimal ("12.4").
    static func format(seconds: Double) -> String { seconds.fixed(1) }
}
