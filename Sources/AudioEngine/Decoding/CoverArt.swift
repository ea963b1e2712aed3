internal import CFFmpeg
internal import CFFmpegLoader
import Glibc

/// A picture that goes with an audio file: embedded in it (ID3v2 `APIC`, MP4 `covr`, a FLAC
/// `PICTURE` block, an Ogg `METADATA_BLOCK_PICTURE` comment) or lying beside it
/// (`cover.*`, `folder.*`, `front.*`).
public struct CoverArt: Sendable, Hashable {
    /// The image file's bytes, as stored.
    public var data: [UInt8]
    /// "image/jpeg", "image/png", "image/gif", "image/webp" or "image/bmp", from the bytes
    /// themselves; `application/octet-stream` when they are none of these.
    public var mimeType: String
    /// Where it was found: nil when embedded, else the path of the image file.
    public var path: String?

    /// Creates cover art from an image's bytes; the MIME type comes from their signature.
    public init(data: [UInt8], path: String? = nil) {
        self.data = data
        self.path = path
        mimeType = Self.mimeType(of: data)
    }

    /// The usual file name extension for ``mimeType`` ("jpg", "png", …, "bin").
    public var fileExtension: String {
        switch mimeType {
        case "image/jpeg": "jpg"
        case "image/png": "png"
        case "image/gif": "gif"
        case "image/webp": "webp"
        case "image/bmp": "bmp"
        default: "bin"
        }
    }

    /// The largest image read, embedded or beside the file: 16 MiB. A larger one is ignored.
    public static let maximumSize = 16 << 20

    /// The art of the audio file at `path`: the embedded picture (the front cover when there
    /// are several), else an image beside the file, else nil. Reads the file's header (nothing
    /// is decoded); an unreadable file or image is taken for no art.
    public static func find(forAudioFileAt path: String) -> CoverArt? {
        embedded(inAudioFileAt: path) ?? beside(audioFileAt: path)
    }

    /// The picture embedded in the audio file at `path`, if any. A FLAC file's pictures are
    /// read by ``FLACMetadata``; a WAV or AIFF file without tags has none (a picture comes in
    /// an ID3 chunk, see ``RIFFChunks``); any other file's are read by FFmpeg.
    public static func embedded(inAudioFileAt path: String) -> CoverArt? {
        let file = HeaderBytes.File(path: path)
        if let file, let flac = FLACMetadata.read(file, pictures: true) {
            return flac.coverPicture.map { CoverArt(data: $0.data) }
        }
        if let file, RIFFChunks.carryNoTags(file) { return nil }
        return embeddedByFFmpeg(inAudioFileAt: path)
    }

    /// The picture FFmpeg finds embedded in the file at `path`: a stream with the attached
    /// picture disposition, the front cover preferred.
    static func embeddedByFFmpeg(inAudioFileAt path: String) -> CoverArt? {
        guard FFmpegLibrary.available else { return nil }
        var probe: UnsafeMutablePointer<AVIOContext>?
        FFmpegLog.install()
        guard ff.avio_open(&probe, path, AVIO_FLAG_READ) >= 0 else { return nil }
        var found: UnsafePointer<AVInputFormat>?
        let score = ff.av_probe_input_buffer2(probe, &found, "", nil, 0, 0)
        _ = ff.avio_closep(&probe)  // a read-only probe: nothing to flush
        guard score >= 0, let found else { return nil }
        var context: UnsafeMutablePointer<AVFormatContext>?
        guard ff.avformat_open_input(&context, path, found, nil) >= 0, let opened = context else { return nil }
        defer { ff.avformat_close_input(&context) }
        var best: (art: CoverArt, front: Bool)?
        for index in 0..<Int(opened.pointee.nb_streams) {
            guard let stream = opened.pointee.streams[index],
                  stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 else { continue }
            let picture = stream.pointee.attached_pic
            guard let bytes = picture.data, picture.size > 0, Int(picture.size) <= maximumSize else { continue }
            let art = CoverArt(data: Array(UnsafeBufferPointer(start: bytes, count: Int(picture.size))))
            // ID3 and FLAC name the picture's role; FFmpeg keeps it as the stream's "comment".
            let role = ff.av_dict_get(stream.pointee.metadata, "comment", nil, 0).flatMap { $0.pointee.value.map { String(cString: $0) } }
            let front = role == nil || role == "Cover (front)"
            if best == nil || (front && !best!.front) { best = (art, front) }
        }
        return best?.art
    }

    /// An image beside the audio file at `path`: `cover`, `folder` or `front` with a `jpg`,
    /// `jpeg`, `png`, `gif`, `webp` or `bmp` extension, in any case, in that order of names.
    public static func beside(audioFileAt path: String) -> CoverArt? {
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let folder = directory.isEmpty ? (path.hasPrefix("/") ? "/" : ".") : directory
        guard let stream = opendir(folder) else { return nil }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            names.append(name)
        }
        closedir(stream)
        let extensions: Set<String> = ["jpg", "jpeg", "png", "gif", "webp", "bmp"]
        for stem in ["cover", "folder", "front"] {
            let matches = names.filter { name in
                let parts = name.lowercased().split(separator: ".", maxSplits: 1)
                return parts.count == 2 && parts[0] == stem && extensions.contains(String(parts[1]))
            }.sorted()
            for name in matches {
                let imagePath = folder == "/" ? "/" + name : folder + "/" + name
                if let data = readSmallFile(imagePath) { return CoverArt(data: data, path: imagePath) }
            }
        }
        return nil
    }

    /// The bytes of a regular file of at most ``maximumSize`` bytes.
    private static func readSmallFile(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
              status.st_size > 0, status.st_size <= maximumSize else { return nil }
        return readFully(descriptor, count: Int(status.st_size))
    }

    static func mimeType(of data: [UInt8]) -> String {
        func starts(_ prefix: [UInt8]) -> Bool { data.count >= prefix.count && data.prefix(prefix.count).elementsEqual(prefix) }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if starts(Array("GIF8".utf8)) { return "image/gif" }
        if starts(Array("RIFF".utf8)) && data.count >= 12 && data[8..<12].elementsEqual("WEBP".utf8) { return "image/webp" }
        if starts(Array("BM".utf8)) { return "image/bmp" }
        return "application/octet-stream"
    }
}
