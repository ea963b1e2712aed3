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
        var values: [String: [String]] = [:]
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
            for (key, list) in seen where values[key] == nil { values[key] = list }
        }
        func first(_ keys: String...) -> String? {
            for key in keys { if let value = values[key]?.first { return value } }
            return nil
        }
        func list(_ keys: String...) -> [String] {
            for key in keys {
                guard let entries = values[key] else { continue }
                // Several entries (Vorbis comments repeat a key), or one FFmpeg joined with ";" (ID3v2.4's NUL-separated lists).
                let split = entries.flatMap { $0.split(separator: ";").map { $0.trimmingWhitespace() } }.filter { !$0.isEmpty }
                if !split.isEmpty { return split }
            }
            return []
        }
        self.init(
            title: first("title"), artist: first("artist"), album: first("album"), genre: first("genre"),
            trackNumber: first("track", "tracknumber"), date: first("date", "year", "creation_time"),
            comment: first("comment", "description")
        )
        artists = list("artist", "artists")
        albumArtists = list("album_artist", "albumartist", "album artist")
        composer = first("composer")
        discNumber = first("disc", "discnumber")
    }

    /// Text from FFmpeg, which passes tag bytes through as they were: invalid UTF-8 is repaired
    /// with replacement characters; control characters other than tab and newline are dropped.
    static func repairedText(_ text: UnsafePointer<CChar>) -> String {
        let bytes = UnsafeRawBufferPointer(start: text, count: strlen(text))
        let string = String(decoding: bytes, as: UTF8.self)
        return String(String.UnicodeScalarView(string.unicodeScalars.filter {
            $0.value >= 0x20 || $0 == "\t" || $0 == "\n"
        }))
    }
}
