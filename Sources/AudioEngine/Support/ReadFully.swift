import Glibc

/// Reads `count` bytes from `descriptor`, at `offset` (`pread`) or from its current position
/// (`read`), going on after short reads and EINTR; nil when the file ends first or a read
/// fails.
func readFully(_ descriptor: Int32, count: Int, at offset: Int? = nil) -> [UInt8]? {
    guard count >= 0 else { return nil }
    var bytes = [UInt8](repeating: 0, count: count)
    var done = 0
    while done < count {
        let got = bytes.withUnsafeMutableBytes { buffer in
            let start = buffer.baseAddress! + done
            return offset.map { pread(descriptor, start, count - done, off_t($0 + done)) } ?? read(descriptor, start, count - done)
        }
        if got < 0 && errno == EINTR { continue }
        guard got > 0 else { return nil }
        done += got
    }
    return bytes
}
