@testable import Earshot
import Testing

/// How the queue turns tag text into MPRIS's typed fields.
@Suite("Now playing: tag text to numbers and ISO 8601 dates")
struct NowPlayingTagTests {
    @Test("track and disc numbers: the leading number, positive")
    func numbers() {
        #expect(QueuePlayer.leadingNumber("3") == 3)
        #expect(QueuePlayer.leadingNumber("3/12") == 3)
        #expect(QueuePlayer.leadingNumber(" 07") == 7)
        #expect(QueuePlayer.leadingNumber("0") == nil)
        #expect(QueuePlayer.leadingNumber("A1") == nil)
        #expect(QueuePlayer.leadingNumber("") == nil)
        #expect(QueuePlayer.leadingNumber("99999999999999999999") == nil)
        #expect(QueuePlayer.leadingNumber("٣") == nil, "only ASCII digits")
    }

    @Test("dates: ISO 8601 passes, a space before the time becomes T, other spellings are dropped")
    func dates() {
        #expect(QueuePlayer.isoDate("2019") == "2019")
        #expect(QueuePlayer.isoDate("2019-05") == "2019-05")
        #expect(QueuePlayer.isoDate(" 2019-05-01 ") == "2019-05-01")
        #expect(QueuePlayer.isoDate("2019-05-01T12:30:00Z") == "2019-05-01T12:30:00Z")
        #expect(QueuePlayer.isoDate("2019-05-01 12:30") == "2019-05-01T12:30")
        #expect(QueuePlayer.isoDate("May 2019") == nil)
        #expect(QueuePlayer.isoDate("01/05/2019") == nil)
        #expect(QueuePlayer.isoDate("2019-5-1") == nil)
        #expect(QueuePlayer.isoDate("20190501") == nil)
        #expect(QueuePlayer.isoDate("") == nil)
    }
}
