extension AudioFileTags {
    /// Tags from named fields, each name lowercased with its values in file order: FFmpeg's
    /// common keys ("title", "artist", "album_artist", "track", "disc", "composer", "date", …,
    /// to which it maps ID3v2 frames, MP4 atoms and RIFF INFO chunks), and the Vorbis comment
    /// names it leaves as they are ("albumartist", "tracknumber", "discnumber", "description").
    init(fields: [String: [String]]) {
        func first(_ keys: String...) -> String? {
            for key in keys { if let value = fields[key]?.first { return value } }
            return nil
        }
        func list(_ keys: String...) -> [String] {
            for key in keys {
                guard let entries = fields[key] else { continue }
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

    /// Tag text as a file holds it: invalid UTF-8 is repaired with replacement characters;
    /// control characters other than tab and newline are dropped.
    static func repairedText(_ bytes: some Collection<UInt8>) -> String {
        let string = String(decoding: bytes, as: UTF8.self)
        return String(String.UnicodeScalarView(string.unicodeScalars.filter {
            $0.value >= 0x20 || $0 == "\t" || $0 == "\n"
        }))
    }
}
