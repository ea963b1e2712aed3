@testable import AudioEngine
import Testing

@Suite("ICY metadata: StreamTitle and icy-name")
struct ICYMetadataTests {
    @Test(arguments: [
        ("StreamTitle='Artist - Song';StreamUrl='';", "Artist - Song"),
        ("StreamTitle='Guns N' Roses - Patience';", "Guns N' Roses - Patience"),
        ("StreamUrl='http://x';StreamTitle='Late';", "Late"),
        ("StreamTitle='No end", "No end"),
    ])
    func theTitleIsTheValueUpToTheClosingQuote(_ packet: String, _ title: String) {
        #expect(ICYMetadata.streamTitle(packet) == title)
    }

    @Test(arguments: ["StreamTitle='';", "StreamUrl='http://x';", "", "StreamTitle='   ';"])
    func noOrEmptyTitleIsNil(_ packet: String) {
        #expect(ICYMetadata.streamTitle(packet) == nil)
    }

    @Test func latin1IsReadAsLatin1() {
        let packet = Array("StreamTitle='Caf".utf8) + [0xE9] + Array("';".utf8)
        #expect(ICYMetadata.streamTitle(packet) == "Café")
    }

    @Test func theStationNameIsTheIcyNameHeader() {
        #expect(ICYMetadata.stationName("icy-br: 128\r\nicy-name: Radio One\r\nicy-genre: Pop\r\n") == "Radio One")
        #expect(ICYMetadata.stationName("Icy-Name:Two\n") == "Two")
        #expect(ICYMetadata.stationName("icy-genre: Pop\n") == nil)
    }
}
