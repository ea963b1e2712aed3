import DBus
import Foundation
import MPRIS
import Testing
import TestSupport

@Suite("Metadata: every NowPlayingInfo field as its xesam type")
struct MetadataMappingTests {
    @Test("lists are string arrays, numbers int32, the date and URL strings")
    func exactTypes() async throws {
        let f = try await PlayerFixture()
        var info = NowPlayingInfo(title: "T", artists: ["A", "B"], album: "Al", duration: 2)
        info.albumArtists = ["AA"]
        info.genres = ["Folk"]
        info.trackNumber = 3
        info.discNumber = 1
        info.composers = ["C"]
        info.comment = "live"
        info.contentCreated = "2019-05-01"
        info.url = "file:///music/a%20b.mp3"
        info.artworkPath = "/cache/earshot/art/ab.png"
        f.nowPlaying.nowPlayingInfo = info
        let metadata = try #require(try await f.all()["Metadata"]?.stringKeyedDictionary)
        #expect(metadata["xesam:artist"] == .strings(["A", "B"]))
        #expect(metadata["xesam:albumArtist"] == .strings(["AA"]))
        #expect(metadata["xesam:genre"] == .strings(["Folk"]))
        #expect(metadata["xesam:composer"] == .strings(["C"]))
        #expect(metadata["xesam:comment"] == .strings(["live"]))
        #expect(metadata["xesam:trackNumber"] == .int32(3))
        #expect(metadata["xesam:discNumber"] == .int32(1))
        #expect(metadata["xesam:contentCreated"] == .string("2019-05-01"))
        #expect(metadata["xesam:url"] == .string("file:///music/a%20b.mp3"))
        #expect(metadata["mpris:artUrl"] == .string("file:///cache/earshot/art/ab.png"))
    }

    @Test("absent fields are absent keys")
    func absentFields() async throws {
        let f = try await PlayerFixture()
        f.nowPlaying.nowPlayingInfo = NowPlayingInfo(title: "T", duration: 2)
        let metadata = try #require(try await f.all()["Metadata"]?.stringKeyedDictionary)
        for key in ["xesam:composer", "xesam:comment", "xesam:contentCreated", "xesam:url", "mpris:artUrl"] {
            #expect(metadata[key] == nil, "\(key)")
        }
    }
}
