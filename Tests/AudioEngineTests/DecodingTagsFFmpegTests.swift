import AudioEngine
import Foundation
import Testing
import TestSupport

// Tags read through FFmpeg's metadata dictionaries: MP4 atoms for the files FFmpeg decodes, and
// what libsndfile's string fields lack (artist lists, album artists, composer, disc) for the rest.

@Suite("Decoding: tags through FFmpeg")
struct DecodingTagsFFmpegTests {
    @Test func mp4AtomsAreRead() async throws {
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let tags = try AudioFile(contentsOf: fixtures.taggedAAC).tags
        let expected = DecodingFFmpegFixtures.tags
        #expect(tags.title == expected["title"])
        #expect(tags.artist == "First Artist;Second Artist")
        #expect(tags.artists == ["First Artist", "Second Artist"])
        #expect(tags.album == expected["album"])
        #expect(tags.albumArtists == ["The Band"])
        #expect(tags.composer == expected["composer"])
        #expect(tags.trackNumber == "3/12")
        #expect(tags.discNumber == "1/2")
        #expect(tags.genre == expected["genre"])
        #expect(tags.date == expected["date"])
        #expect(tags.comment == expected["comment"])
    }

    @Test func id3v2ExtrasCompleteLibsndfilesTags() async throws {
        // libsndfile decodes the MP3 and reads title, artist, album; FFmpeg adds the rest.
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let file = try AudioFile(contentsOf: fixtures.taggedMP3)
        #expect(file.format.container == "MPEG")
        let tags = file.tags
        #expect(tags.title == DecodingFFmpegFixtures.tags["title"])
        #expect(tags.artists == ["First Artist", "Second Artist"])
        #expect(tags.albumArtists == ["The Band"])
        #expect(tags.composer == "A Composer")
        #expect(tags.discNumber == "1/2")
        #expect(tags.trackNumber == "3/12")
        // The same from memory.
        let fromMemory = try AudioFile(data: DecodingFixtures.bytes(fixtures.taggedMP3), name: "tagged")
        #expect(fromMemory.tags == tags)
    }

    @Test func vorbisCommentsGainListsToo() async throws {
        let fixtures = try await DecodingFixtures.shared()
        let tags = try AudioFile(contentsOf: fixtures.flac).tags
        #expect(tags.artist == "Earshot Tests")
        #expect(tags.artists == ["Earshot Tests"])
        #expect(tags.albumArtists.isEmpty && tags.composer == nil && tags.discNumber == nil)
    }

    @Test func invalidUTF8InAnMP4TitleIsRepaired() async throws {
        let fixtures = try await DecodingFFmpegFixtures.shared()
        let title = try #require(try AudioFile(contentsOf: fixtures.latin1AAC).tags.title)
        #expect(title == "La \u{FFFD}t\u{FFFD}")
    }

    @Test func untaggedFilesHaveNoExtras() async throws {
        let fixtures = try await DecodingFFmpegFixtures.shared()
        for path in [fixtures.alacMP4, fixtures.base.pcm16] {
            let tags = try AudioFile(contentsOf: path).tags
            #expect(tags.title == nil && tags.artists.isEmpty && tags.albumArtists.isEmpty && tags.composer == nil)
        }
    }
}
