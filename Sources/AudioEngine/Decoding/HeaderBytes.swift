import Glibc

/// Where the readers of a file's header (``FLACMetadata``, ``RIFFChunks``) read bytes from: a
/// file or bytes in memory.
protocol HeaderByteSource {
    /// The source's length in bytes.
    var count: Int { get }
    /// `count` bytes from `offset`, or nil when they are not all there (or cannot be read).
    func bytes(at offset: Int, count: Int) -> [UInt8]?
}

/// The two ``HeaderByteSource``s.
enum HeaderBytes {
    /// Bytes in memory.
    struct Memory: HeaderByteSource {
        let all: [UInt8]
        var count: Int { all.count }
        func bytes(at offset: Int, count: Int) -> [UInt8]? {
            guard offset >= 0, count >= 0, offset <= all.count - count else { return nil }
            return Array(all[offset..<offset + count])
        }
    }

    /// A regular file, read with `pread` where asked: what is skipped (a FLAC picture, a
    /// WAV's audio) is never read.
    final class File: HeaderByteSource {
        private let descriptor: Int32
        let count: Int

        /// Opens `path`; nil when it cannot be opened or is not a regular file.
        init?(path: String) {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            var status = stat()
            guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
                close(descriptor)
                return nil
            }
            self.descriptor = descriptor
            count = Int(status.st_size)
        }

        deinit { close(descriptor) }

        func bytes(at offset: Int, count wanted: Int) -> [UInt8]? {
            guard offset >= 0, wanted >= 0, offset <= count - wanted else { return nil }
            return readFully(descriptor, count: wanted, at: offset)
        }
    }
}
