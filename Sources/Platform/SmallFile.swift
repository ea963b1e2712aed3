#if canImport(Glibc)
import Glibc
#endif

/// Reading a small file a process is handed (the arbiter's configuration, its state): untrusted, so
/// read only if it is a regular file of at most `limit` bytes, opened without blocking (a
/// FIFO or a device at the path is refused, never waited on).
package enum SmallFile {
    /// Why the file could not be read.
    package enum Failure: Error, Equatable {
        /// No file at the path (`ENOENT`).
        case missing
        /// `open`, `fstat` or `read` failed: the system's words.
        case unreadable(reason: String)
        /// A FIFO, a device, a folder, or (without `followsLinks`) a symbolic link.
        case notARegularFile
        /// Larger than the limit.
        case tooLarge(size: Int)
    }

    /// The bytes of the file at `path`. `followsLinks` false refuses a symbolic link (for a
    /// file the arbiter itself writes, where a link can only be someone else's doing).
    package static func read(_ path: String, limit: Int, followsLinks: Bool = true) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (followsLinks ? 0 : O_NOFOLLOW))
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { throw .missing }
            if code == ELOOP { throw .notARegularFile }
            throw .unreadable(reason: String(cString: strerror(code)))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(reason: String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notARegularFile }
        guard info.st_size <= limit else { throw .tooLarge(size: Int(info.st_size)) }
        // One byte more than the limit: a file that grew since fstat is still caught.
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw .unreadable(reason: String(cString: strerror(errno))) }
            if count == 0 { break }
            filled += count
        }
        guard filled <= limit else { throw .tooLarge(size: filled) }
        return Array(bytes[..<filled])
    }
}
