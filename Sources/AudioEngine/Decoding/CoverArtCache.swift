import Glibc

/// Cover art written to files that a desktop shell can read (`mpris:artUrl` is a `file://` URL),
/// in `$XDG_CACHE_HOME/earshot/art/` (`~/.cache/earshot/art/` when unset).
///
/// Each image is stored once, under the SHA-256 of its bytes (`<hex>.jpg`): the name changes
/// when the art changes (so shells that cache by URL refresh), and tracks with the same art share
/// one file. The folder is kept under ``capacity`` bytes by deleting the least recently used
/// files (storing an image that is already there counts as a use and refreshes its time).
///
/// Several processes may share the folder: files are written under a temporary name and renamed.
public struct CoverArtCache: Sendable {
    /// The folder.
    public let directory: String
    /// The most bytes the folder holds after a ``store(_:)``.
    public let capacity: Int

    /// A cache in `directory` (default: `$XDG_CACHE_HOME/earshot/art`, or `$HOME/.cache/earshot/art`)
    /// of at most `capacity` bytes (default 64 MiB).
    public init(directory: String? = nil, capacity: Int = 64 << 20) {
        self.directory = directory ?? Self.defaultDirectory()
        self.capacity = capacity
    }

    /// Why art could not be stored.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The file or folder.
        public let path: String
        /// What the system said.
        public let reason: String
        /// "cannot store cover art in <path>: <reason>".
        public var description: String { "cannot store cover art in \(path): \(reason)" }
    }

    /// Writes `art` (unless an identical image is already there) and returns the file's path.
    public func store(_ art: CoverArt) throws(Failure) -> String {
        try makeDirectory(directory)
        let path = directory + "/" + Self.digest(art.data) + "." + art.fileExtension
        if access(path, F_OK) == 0 {
            utimensat(AT_FDCWD, path, nil, 0)  // a use: now is its time for the LRU
        } else {
            let temporary = path + ".\(getpid()).tmp"
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw Failure(path: temporary, reason: Self.systemMessage(errno)) }
            var written = 0
            while written < art.data.count {
                let count = art.data.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else {
                    let message = Self.systemMessage(errno)
                    close(descriptor)
                    unlink(temporary)
                    throw Failure(path: temporary, reason: message)
                }
                written += count
            }
            close(descriptor)
            guard rename(temporary, path) == 0 else {
                let message = Self.systemMessage(errno)
                unlink(temporary)
                throw Failure(path: path, reason: message)
            }
        }
        evict(keeping: path)
        return path
    }

    /// `store(art)` as a `file://` URL (the path percent-encoded where RFC 3986 requires).
    public func storeURL(_ art: CoverArt) throws(Failure) -> String {
        let path = try store(art)
        var url = "file://"
        for byte in path.utf8 {
            let unreserved = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E || byte == 0x2F
            url += unreserved ? String(UnicodeScalar(byte)) : "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
        }
        return url
    }

    /// Deletes the least recently used files until the folder holds at most ``capacity`` bytes
    /// (never `keeping`, the file just stored).
    private func evict(keeping: String) {
        guard let stream = opendir(directory) else { return }
        var files: [(path: String, size: Int, time: timespec)] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name != ".", name != "..", !name.hasSuffix(".tmp") else { continue }
            let path = directory + "/" + name
            var status = stat()
            guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { continue }
            files.append((path, Int(status.st_size), status.st_mtim))
        }
        closedir(stream)
        var total = files.reduce(0) { $0 + $1.size }
        guard total > capacity else { return }
        files.sort { ($0.time.tv_sec, $0.time.tv_nsec) < ($1.time.tv_sec, $1.time.tv_nsec) }
        for file in files where total > capacity && file.path != keeping {
            if unlink(file.path) == 0 || errno == ENOENT { total -= file.size }
        }
    }

    private func makeDirectory(_ path: String) throws(Failure) {
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw Failure(path: prefix, reason: Self.systemMessage(errno))
            }
        }
    }

    private static func defaultDirectory() -> String {
        if let cache = getenv("XDG_CACHE_HOME").map({ String(cString: $0) }), cache.hasPrefix("/") {
            return cache + "/earshot/art"
        }
        let home = getenv("HOME").map { String(cString: $0) } ?? "/tmp"
        return home + "/.cache/earshot/art"
    }

    /// The SHA-256 of `data` in lower-case hexadecimal.
    static func digest(_ data: [UInt8]) -> String {
        SHA256.hexDigest(data)
    }

    private static func systemMessage(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "error \(code)"
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
