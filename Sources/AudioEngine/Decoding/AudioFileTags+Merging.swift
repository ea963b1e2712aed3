internal import CFFmpeg
internal import CFFmpegLoader

extension AudioFileTags {
    /// The tags of a file libsndfile opened, completed from a second reading of the same
    /// bytes: libsndfile's seven string fields stand where it has them; the second reading adds
    /// the artists as a list, the album artists, the composer and the disc number, and any
    /// field libsndfile left empty. A FLAC file's comments are read by ``FLACMetadata``; a WAV
    /// or AIFF file whose chunks hold no tags (``RIFFChunks``) has libsndfile's alone; any
    /// other file's tags are read by FFmpeg. `path` or `bytes` is the file (bytes: a reader of their
    /// own, so that libsndfile's read position is not moved). When neither can read the
    /// file, the tags are libsndfile's alone.
    static func completing(_ sndfile: AudioFileTags, path: String?, bytes: VirtualSource?) -> AudioFileTags {
        let second: AudioFileTags?
        if let path {
            second = secondReading(of: HeaderBytes.File(path: path)) { FFmpegTagReader.tags(path: path) }
        } else if let bytes {
            second = secondReading(of: HeaderBytes.Memory(all: bytes.bytes)) { FFmpegTagReader.tags(bytes: VirtualSource(bytes: bytes.bytes)) }
        } else {
            second = nil
        }
        guard let second else { return sndfile }
        var tags = sndfile
        tags.title = sndfile.title ?? second.title
        tags.artist = sndfile.artist ?? second.artist
        tags.album = sndfile.album ?? second.album
        tags.genre = sndfile.genre ?? second.genre
        tags.trackNumber = sndfile.trackNumber ?? second.trackNumber
        tags.date = sndfile.date ?? second.date
        tags.comment = sndfile.comment ?? second.comment
        if !second.artists.isEmpty { tags.artists = second.artists }
        tags.albumArtists = second.albumArtists
        tags.composer = second.composer
        tags.discNumber = second.discNumber
        return tags
    }
}

extension AudioFileTags {
    /// The second reading of a file's tags (see ``completing(_:path:bytes:)``): a FLAC file's
    /// comments; nothing for a WAV or AIFF file whose chunks hold no tags (FFmpeg would add
    /// nothing, and its load is most of a plain WAV's start); else what `ffmpeg` reads.
    private static func secondReading(of source: (some HeaderByteSource)?, ffmpeg: () -> AudioFileTags?) -> AudioFileTags? {
        if let source, let flac = FLACMetadata.read(source, pictures: false) { return flac.tags }
        if let source, RIFFChunks.carryNoTags(source) { return nil }
        return ffmpeg()
    }
}

/// Reads only the tags of a file with libavformat: the header is parsed, nothing decoded.
enum FFmpegTagReader {
    static func tags(path: String) -> AudioFileTags? {
        read { context in
            var probe: UnsafeMutablePointer<AVIOContext>?
            guard ff.avio_open(&probe, path, AVIO_FLAG_READ) >= 0 else { return -1 }
            var found: UnsafePointer<AVInputFormat>?
            let score = ff.av_probe_input_buffer2(probe, &found, "", nil, 0, 0)
            _ = ff.avio_closep(&probe)  // a read-only probe: nothing to flush
            guard score >= 0, let found else { return -1 }
            return ff.avformat_open_input(&context, path, found, nil)
        }
    }

    static func tags(bytes: VirtualSource) -> AudioFileTags? {
        guard let input = FFmpegInput(bytes) else { return nil }
        return withExtendedLifetime(input) {
            read { context in
                context = ff.avformat_alloc_context()
                guard let allocated = context else { return -1 }
                allocated.pointee.pb = input.context
                allocated.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
                return ff.avformat_open_input(&context, nil, nil, nil)
            }
        }
    }

    private static func read(_ open: (inout UnsafeMutablePointer<AVFormatContext>?) -> Int32) -> AudioFileTags? {
        guard FFmpegLibrary.available else { return nil }
        var context: UnsafeMutablePointer<AVFormatContext>?
        let (status, _) = FFmpegLog.capturing { open(&context) }
        guard status >= 0, let opened = context else { return nil }
        defer { ff.avformat_close_input(&context) }
        var dictionaries: [OpaquePointer?] = [opened.pointee.metadata]
        for index in 0..<Int(opened.pointee.nb_streams) {
            guard let stream = opened.pointee.streams[index],
                  stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO else { continue }
            dictionaries.append(stream.pointee.metadata)
            break
        }
        return AudioFileTags(metadata: dictionaries)
    }
}
