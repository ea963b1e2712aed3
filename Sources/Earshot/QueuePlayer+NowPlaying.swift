import AudioEngine
import MPRIS
import FoundationEssentials

extension QueuePlayer.Item {
    /// What the desktop shows of the item: every tag, its URL and its cached art, as
    /// ``NowPlayingInfo`` (the queue adds the position, rate and queue place).
    func nowPlayingInfo(artworkPath: String?, playbackState: PlaybackState) -> NowPlayingInfo {
        var artists = tags.artists
        if artists.isEmpty, let artist { artists = [artist] }
        var info = NowPlayingInfo(title: title, artists: artists, album: album, duration: duration, playbackState: playbackState)
        info.trackID = "\(id)"
        info.albumArtists = tags.albumArtists
        info.genres = tags.genre.map { [$0] } ?? []
        info.trackNumber = tags.trackNumber.flatMap(QueuePlayer.leadingNumber)
        info.discNumber = tags.discNumber.flatMap(QueuePlayer.leadingNumber)
        info.composers = tags.composer.map { [$0] } ?? []
        info.comment = tags.comment
        info.contentCreated = tags.date.flatMap(QueuePlayer.isoDate)
        info.url = url.absoluteString
        info.artworkPath = artworkPath
        return info
    }
}

extension QueuePlayer {
    /// The number a track or disc tag starts with ("3" of "3/12"); nil when it starts with
    /// none or it is not positive.
    static func leadingNumber(_ tag: String) -> Int? {
        let digits = tag.drop { $0 == " " }.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 9, let number = Int(digits), number > 0 else { return nil }
        return number
    }

    /// A date tag as ISO 8601, when it is one: `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, or a date and
    /// time (`2019-05-01T12:00:00Z`, `2019-05-01 12:00:00`, written back with a `T`). Other
    /// spellings ("May 2019", "01/05/2019") are not guessed at: nil.
    static func isoDate(_ tag: String) -> String? {
        let text = tag.trimmingWhitespace()
        let characters = Array(text)
        func digits(_ range: Range<Int>) -> Bool {
            range.upperBound <= characters.count && characters[range].allSatisfy { $0.isASCII && $0.isNumber }
        }
        guard digits(0..<4) else { return nil }
        switch characters.count {
        case 4: return text
        case 7 where characters[4] == "-" && digits(5..<7): return text
        case 10 where characters[4] == "-" && characters[7] == "-" && digits(5..<7) && digits(8..<10): return text
        default:
            guard characters.count > 10, characters[4] == "-", characters[7] == "-", digits(5..<7), digits(8..<10),
                  characters[10] == "T" || characters[10] == " ", digits(11..<13), characters.count >= 16,
                  characters[13] == ":", digits(14..<16) else { return nil }
            return String(characters[0..<10]) + "T" + String(characters[11...])
        }
    }
}
