internal import CSndFile
import Glibc

extension AudioFile {
    /// Opens audio from bytes in memory (a bundled resource, a download), through libsndfile's
    /// virtual I/O. `name` stands for the file in errors and in ``source``.
    ///
    /// The bytes are kept, not copied again, for the life of the decoder. Formats are recognised
    /// from the contents only (there is no file name extension to hint with).
    public convenience init(data: [UInt8], name: String) throws(AudioFileError) {
        guard !data.isEmpty else { throw AudioFileError(source: name, reason: .empty) }
        let bytes = VirtualSource(bytes: data)
        var io = SF_VIRTUAL_IO(
            get_filelen: { user in VirtualSource.from(user).length },
            seek: { offset, whence, user in VirtualSource.from(user).seek(offset, whence: whence) },
            read: { destination, count, user in VirtualSource.from(user).read(into: destination, count: count) },
            write: nil,
            tell: { user in VirtualSource.from(user).position }
        )
        let user = Unmanaged.passUnretained(bytes).toOpaque()
        let (handle, info): (OpaquePointer, SF_INFO)
        do {
            (handle, info) = try Self.openHandle(source: name, leadingBytes: { Array(data.prefix(12)) }) { info in
                sf_open_virtual(&io, Int32(SFM_READ), info, user)
            }
        } catch where Self.fallsBackToFFmpeg(error) {
            bytes.rewind()
            self.init(ffmpeg: try Self.openWithFFmpeg(bytes: bytes, name: name, after: error))
            return
        }
        // libsndfile copied `io`; `bytes` stays alive as a property until after `sf_close`.
        self.init(handle: handle, info: info, source: name, virtualSource: bytes)
    }
}

/// Bytes and a read position, behind libsndfile's virtual I/O callbacks.
final class VirtualSource {
    let bytes: [UInt8]
    private(set) var position: sf_count_t = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    var length: sf_count_t { sf_count_t(bytes.count) }

    /// Back to the first byte, for another reader (FFmpeg after libsndfile gave up).
    func rewind() { position = 0 }

    static func from(_ user: UnsafeMutableRawPointer?) -> VirtualSource {
        Unmanaged<VirtualSource>.fromOpaque(user!).takeUnretainedValue()
    }

    /// lseek(2) semantics: past the end is allowed (reads there return 0), before the start is not.
    func seek(_ offset: sf_count_t, whence: Int32) -> sf_count_t {
        let base: sf_count_t
        switch whence {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = position
        case SEEK_END: base = length
        default: return -1
        }
        let (target, overflow) = base.addingReportingOverflow(offset)
        guard !overflow, target >= 0 else { return -1 }
        position = target
        return position
    }

    func read(into destination: UnsafeMutableRawPointer?, count: sf_count_t) -> sf_count_t {
        guard let destination, count > 0, position < length else { return 0 }
        let available = min(count, length - position)
        bytes.withUnsafeBytes { source in
            destination.copyMemory(from: source.baseAddress! + Int(position), byteCount: Int(available))
        }
        position += available
        return available
    }
}
