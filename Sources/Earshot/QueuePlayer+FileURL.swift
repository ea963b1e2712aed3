import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The local file a `file://` URI names, found by its bytes.
///
/// A URI may name a file whose name is not UTF-8 (`file:///music/caf%E9.flac`, from a
/// Latin-1 file system): Foundation's `URL.path` cannot hold those bytes and answers "".
/// The path is then percent-decoded to its bytes and opened with them, and the file is
/// reached as `/proc/self/fd/N` (as `earshot play` does for such an argument): a path
/// Swift can hold that opens the same file again for each player. The descriptor is held
/// while the item is in the queue.
struct LocalFile {
    /// A path that opens the file.
    let url: URL
    /// The name to title an untagged item with, when `url` is not the file's own path.
    let name: String?
    /// The descriptor `url` goes through, to close when the item leaves the queue.
    let heldDescriptor: Int32?

    /// Why a URI names no local file.
    enum Failure: Error {
        case notAFileURI, nul, cannotOpen(Int32)
    }

    init(uri: String) throws(Failure) {
        guard let parsed = URL(string: uri), parsed.isFileURL,
              let encoded = URLComponents(url: parsed, resolvingAgainstBaseURL: false)?.percentEncodedPath,
              let bytes = LocalFile.percentDecoded(encoded), !bytes.isEmpty else { throw .notAFileURI }
        // A NUL would end the path early for the C calls that open it: another file.
        guard !bytes.contains(0) else { throw .nul }
        if let path = String(validating: bytes, as: UTF8.self) {
            (self.url, name, heldDescriptor) = (URL(fileURLWithPath: path), nil, nil)
            return
        }
        let fd = (bytes + [0]).withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                // O_NONBLOCK: a FIFO must not make the open wait (inspection then refuses it).
                open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            }
        }
        guard fd >= 0 else { throw .cannotOpen(errno) }
        self.url = URL(fileURLWithPath: "/proc/self/fd/\(fd)")
        // The title shows the bytes that are not UTF-8 as U+FFFD.
        name = String(decoding: bytes, as: UTF8.self)
        heldDescriptor = fd
    }

    /// The bytes of a percent-encoded path; nil when an escape is malformed.
    static func percentDecoded(_ text: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
