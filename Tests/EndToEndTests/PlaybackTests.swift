import DBus
import Foundation
import Testing
import TestSupport

/// The stand-in player's clock: what happens at the end of a title. Each test starts
/// paused, records the signals, then plays, so that a slow machine cannot miss a title.
@Suite("earshot publish plays through its titles")
struct PlaybackTests {
    /// A publisher of two 0.4 s titles, paused, with `loop` set, whose signals are recorded.
    func playing(loop: String? = nil, app: String = #function) async throws -> (Publisher, SignalLog) {
        let publisher = try await Publisher(app: app, titles: ["One", "Two"], ["--length", "0.4", "--paused"])
        let signals = try await publisher.recordSignals()
        if let loop { try await publisher.set("LoopStatus", .string(loop)) }
        try await publisher.call("Play")
        return (publisher, signals)
    }

    @Test("at the end of a title the next one starts, and after the last playback stops")
    func playsThrough() async throws {
        let (publisher, signals) = try await playing()
        try await eventually("playback to stop after the last title") {
            signals.firstIndex("PlaybackStatus", .string("Stopped")) != nil
        }
        #expect(signals.titles == ["Two"])
        #expect(signals.values(of: "PlaybackStatus") == [.string("Playing"), .string("Stopped")])
        let two = try #require(signals.firstIndex("Metadata", try await publisher.get("Metadata")))
        #expect(two <= signals.firstIndex("PlaybackStatus", .string("Stopped"))!, "it stopped before the second title")
        #expect(try await publisher.title() == "Two")
        #expect(try await publisher.position() == 0)
        #expect(try await publisher.get("PlaybackStatus") == .string("Stopped"))
    }

    @Test("with LoopStatus Track the title repeats, announced by Seeked")
    func loopTrack() async throws {
        let (publisher, signals) = try await playing(loop: "Track")
        try await eventually("two Seeked back to the start") { signals.seeks.value.filter { $0 < 100_000 }.count >= 2 }
        #expect(signals.titles.isEmpty)
        #expect(try await publisher.title() == "One")
        #expect(try await publisher.get("PlaybackStatus") == .string("Playing"))
    }

    @Test("with LoopStatus Playlist the last title wraps around to the first")
    func loopPlaylist() async throws {
        let (publisher, signals) = try await playing(loop: "Playlist")
        try await eventually("the second title, then the first again") { signals.titles.count >= 2 }
        #expect(signals.titles.prefix(2) == ["Two", "One"])
        #expect(!signals.values(of: "PlaybackStatus").contains(.string("Stopped")))
        #expect(try await publisher.get("PlaybackStatus") == .string("Playing"))
    }
}
