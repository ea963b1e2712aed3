import DBus
import Foundation
import Testing
import TestSupport

/// Hostile calls to a real player over the bus: property values of the wrong shape, and
/// strings that would drive the terminal the player prints to. (Track-list edits against
/// `earshot play` are in ``SessionPlayerFaultTests``.)
@Suite("faults: players over the bus", .serialized)
struct PlayerFaultTests {
    // MARK: Property types

    @Test("Set Rate to a variant inside a variant ('<<1.5>>') over gdbus is InvalidArgs and leaves Rate alone")
    func nestedVariantRate() async throws {
        let publisher = try await Publisher()
        let result = try await publisher.gdbus("Set", interface: StandardInterface.properties, [MPRIS.player, "Rate", "<<1.5>>"])
        #expect(result.status != 0, "the nested variant was accepted: \(result.stdout)")
        #expect(result.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs"), "\(result.stderr)")
        #expect(try await publisher.get("Rate") == .double(1))
        #expect(publisher.commands.isEmpty, "the player received \(publisher.commands)")
        // The same value in one variant is accepted.
        #expect(try await publisher.gdbus("Set", interface: StandardInterface.properties, [MPRIS.player, "Rate", "<1.5>"]).status == 0)
        #expect(try await publisher.get("Rate") == .double(1.5))
    }

    @Test("every settable property refuses nested variants and out-of-range numbers, changing nothing")
    func badSets() async throws {
        // One player for all of them (each checks that nothing changed), to keep the
        // parallel pass light.
        let publisher = try await Publisher(["--paused", "--length", "60"])
        let before = try await publisher.getAll()
        for bad in Self.badSets {
            let error = await dbusErrorName {
                try await publisher.call(bad.method, bad.arguments(publisher), interface: bad.interface, path: bad.path)
            }
            #expect(error == bad.error, "\(bad.testDescription)")
            #expect(try await publisher.getAll() == before, "\(bad.testDescription)")
        }
        #expect(publisher.commands.isEmpty, "a refused Set reached the player: \(publisher.commands)")
        try await publisher.expectResponsive()
    }

    static let badSets: [BadCall] = {
        let invalid = DBusError.Name.invalidArgs
        var all: [BadCall] = []
        for (property, value) in [("Rate", DBusValue.double(1.5)), ("Volume", .double(0.5)), ("LoopStatus", .string("Track")),
                                  ("Shuffle", .boolean(true))] {
            all.append(.set(property, .variant(value), invalid))
            all.append(.set(property, .variant(.variant(value)), invalid))
        }
        all += [
            .set("Rate", .double(-.infinity), invalid),
            .set("Rate", .double(-0.5), invalid),
            .set("Rate", .double(1e308), invalid),
            .set("Rate", .double(.leastNonzeroMagnitude), invalid),
            .set("Rate", .double(-.nan), invalid),
            .set("Volume", .double(-.infinity), invalid),
            .set("Volume", .double(-.nan), invalid),
            .set("Rate", .int64(1), invalid),
            .set("Volume", .int64(1), invalid),
            .set("Shuffle", .byte(1), invalid),
            .set("LoopStatus", .objectPath("/None"), invalid),
        ]
        return all
    }()

    // MARK: Terminal escapes

    @Test("an OpenUri string with terminal escapes is printed escaped by earshot publish")
    func openURIEscaped() async throws {
        let publisher = try await Publisher()
        try await publisher.call("OpenUri", [.string("file:///x\u{1B}[2J\u{1B}]0;owned\u{07}\u{9B}31m\u{202E}gpj.ogg\u{7F}")])
        try await publisher.waitForLine(#"open-uri file:///x\x1B[2J\x1B]0;owned\x07\u{9B}31m\u{202E}gpj.ogg\x7F"#)
        #expect(!publisher.process.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F...0x9F).contains($0.value) },
                "a control character reached the output: \(publisher.process.stdout.debugDescription)")
    }

    @Test("titles with terminal escapes are printed escaped by earshot publish")
    func titleEscaped() async throws {
        let publisher = try await Publisher(titles: ["One", "Two\u{1B}[31m\r\nThree"])
        try await publisher.call("Next")
        try await publisher.waitForLine(#"next -> 2/2 Two\x1B[31m\r\nThree"#)
        #expect(!publisher.process.stdout.contains("\u{1B}"))
    }
}
