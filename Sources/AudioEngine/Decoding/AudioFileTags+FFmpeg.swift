internal import CFFmpeg
internal import CFFmpegLoader
import Glibc

extension AudioFileTags {
    /// Reads tags from FFmpeg's metadata dictionaries (the container's, then the audio stream's:
    /// Ogg keeps its Vorbis comments on the stream). FFmpeg has already mapped ID3v2 frames, MP4
    /// atoms, Vorbis comments and RIFF INFO chunks to common keys ("title", "artist",
    /// "album_artist", "track", "disc", "composer", "date", …); keys are compared without case.
    /// The first dictionary that has a key wins.
    init(metadata dictionaries: [OpaquePointer?]) {
        var fields: [String: [String]] = [:]
        for dictionary in dictionaries {
            guard let dictionary else { continue }
            var seen: [String: [String]] = [:]
            var entry: UnsafeMutablePointer<AVDictionaryEntry>? = nil
            while let next = ff.av_dict_get(dictionary, "", entry, AV_DICT_IGNORE_SUFFIX) {
                entry = next
                guard let key = next.pointee.key, let value = next.pointee.value else { continue }
                let text = Self.repairedText(value)
                guard !text.isEmpty else { continue }
                seen[Self.repairedText(key).lowercased(), default: []].append(text)
            }
            for (key, list) in seen where fields[key] == nil { fields[key] = list }
        }
        self.init(fields: fields)
    }

    /// Text from FFmpeg, which passes tag bytes through as they were: repaired as the bytes
    /// of a file are.
    static func repairedText(_ text: UnsafePointer<CChar>) -> String {
        repairedText(UnsafeRawBufferPointer(start: text, count: strlen(text)))
    }
}
