import DBus
import Foundation
import Testing
import TestSupport

/// Checks in the spirit of the MPRIS specification's tester: property types and
/// ranges, metadata types, and how PropertiesChanged and Seeked are emitted.
@Suite("MPRIS conformance of earshot publish")
struct ConformanceTests {
    static let rootTypes = [
        "CanQuit": "b", "CanRaise": "b", "HasTrackList": "b", "Identity": "s", "DesktopEntry": "s",
        "SupportedUriSchemes": "as", "SupportedMimeTypes": "as",
    ]
    static let playerTypes = [
        "PlaybackStatus": "s", "LoopStatus": "s", "Rate": "d", "Shuffle": "b", "Metadata": "a{sv}", "Volume": "d",
        "Position": "x", "MinimumRate": "d", "MaximumRate": "d", "CanGoNext": "b", "CanGoPrevious": "b",
        "CanPlay": "b", "CanPause": "b", "CanSeek": "b", "CanControl": "b",
    ]

    @Test("GetAll on both interfaces returns every property with its exact type")
    func propertyTypes() async throws {
        // Paused, so that Position holds still and Get and GetAll agree.
        let publisher = try await Publisher(["--paused"])
        for (interface, types) in [(MPRIS.root, Self.rootTypes), (MPRIS.player, Self.playerTypes)] {
            let all = try await publisher.getAll(interface)
            #expect(Set(all.keys) == Set(types.keys), "\(interface)")
            for (name, type) in types {
                let value = try #require(all[name], "\(interface).\(name) is missing from GetAll")
                #expect(value.type.signature == type, "\(interface).\(name) is \(value.type), not \(type)")
                #expect(try await publisher.get(name, interface: interface) == value, "Get and GetAll disagree on \(name)")
            }
        }
    }

    @Test("values are within their ranges and the root properties describe earshot")
    func propertyValues() async throws {
        let publisher = try await Publisher()
        let player = try await publisher.getAll()
        let minimum = try #require(player["MinimumRate"]?.double)
        let maximum = try #require(player["MaximumRate"]?.double)
        let rate = try #require(player["Rate"]?.double)
        #expect(minimum <= 1 && 1 <= maximum)
        #expect(minimum == 0.5 && maximum == 2, "earshot publish supports rates 0.5…2")
        #expect(minimum <= rate && rate <= maximum)
        #expect(minimum > 0)
        #expect(try #require(player["Volume"]?.double) >= 0)
        #expect(player["PlaybackStatus"] == .string("Playing"))
        #expect(player["LoopStatus"] == .string("None"))
        #expect(player["CanControl"] == .boolean(true))
        #expect(try #require(player["Position"]?.int64) >= 0)

        let root = try await publisher.getAll(MPRIS.root)
        #expect(root["Identity"] == .string("Earshot"))
        #expect(root["DesktopEntry"] == .string("earshot"))
        #expect(root["HasTrackList"] == .boolean(false))
        #expect(root["SupportedUriSchemes"]?.stringArray == ["file", "http", "https"])
        #expect(root["SupportedMimeTypes"]?.stringArray?.contains("audio/mpeg") == true)
    }

    @Test("metadata entries have the types MPRIS and xesam give them")
    func metadataTypes() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("earshot e2e \(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let art = folder.appendingPathComponent("cover art.png")
        try Data([0x89, 0x50, 0x4E, 0x47]).write(to: art)

        // A title that cannot run out while the test reads it: with 42.5 s, a loaded machine
        // (56 s for this test once) read the second title's metadata.
        let publisher = try await Publisher(["--artist", "Someone", "--album", "Something", "--length", "4242.5", "--art", art.path])
        let metadata = try await publisher.metadata()
        let trackID = try #require(metadata["mpris:trackid"])
        #expect(trackID.type.signature == "o")
        #expect(trackID.string == publisher.trackID(0))
        #expect(trackID.string?.hasPrefix("/org/mpris/") == false, "MPRIS reserves /org/mpris for itself")
        #expect(metadata["mpris:length"] == .int64(4_242_500_000))
        #expect(metadata["xesam:artist"] == .strings(["Someone"]))
        #expect(metadata["xesam:title"] == .string("One"))
        #expect(metadata["xesam:album"] == .string("Something"))
        let artURL = try #require(metadata["mpris:artUrl"]?.string)
        #expect(artURL == "file://" + art.path.replacingOccurrences(of: " ", with: "%20"))
        #expect(URL(string: artURL)?.path == art.path)
    }

    @Test("setting the position emits Seeked with the new position")
    func seekedAfterSetPosition() async throws {
        let publisher = try await Publisher(["--paused"])
        let signals = try await publisher.recordSignals()
        try await publisher.playerctlOutput("position", "12")
        try await eventually("Seeked") { !signals.seeks.value.isEmpty }
        let seeked = signals.seeks.value
        #expect(seeked.count == 1)
        #expect(abs(seeked[0] - 12_000_000) < 50_000, "Seeked carries \(seeked[0])")
    }

    @Test("PropertiesChanged never carries Position or CanControl, only declared properties")
    func signalledProperties() async throws {
        let publisher = try await Publisher()
        let signals = try await publisher.recordSignals()
        try await publisher.playerctlOutput("play-pause")
        try await signals.waitForChange("PlaybackStatus", .string("Paused"))
        try await publisher.playerctlOutput("next")
        try await signals.waitForChange("Metadata")
        try await publisher.playerctlOutput("position", "20")
        try await publisher.playerctlOutput("volume", "0.3")
        try await signals.waitForChange("Volume", .double(0.3))
        try await publisher.set("Rate", .double(1.5))
        try await signals.waitForChange("Rate", .double(1.5))
        try await publisher.waitForLine("rate 1.5")
        try await publisher.playerctlOutput("play")
        try await signals.waitForChange("PlaybackStatus", .string("Playing"))
        try await publisher.playerctlOutput("loop", "Track")
        try await signals.waitForChange("LoopStatus", .string("Track"))

        let changes = signals.allChanges
        #expect(!signals.seeks.value.isEmpty, "position 20 emits Seeked instead")
        #expect(signals.malformed.value == 0)
        for change in changes {
            #expect(change.changed["Position"] == nil, "\(change)")
            #expect(change.changed["CanControl"] == nil, "\(change)")
            #expect(change.invalidated.isEmpty, "\(change)")
            #expect(change.interface == MPRIS.player || change.interface == MPRIS.root, "\(change)")
            let declared = change.interface == MPRIS.player ? Self.playerTypes : Self.rootTypes
            for (name, value) in change.changed {
                #expect(declared[name] == value.type.signature, "\(name) = \(value) in \(change)")
            }
        }
    }

    @Test("CanGoNext and CanGoPrevious follow the place in the list and the loop status, and are signalled")
    func navigationAbilities() async throws {
        let publisher = try await Publisher(["--paused"])
        let signals = try await publisher.recordSignals()
        func abilities() async throws -> [DBusValue?] {
            let all = try await publisher.getAll()
            return [all["CanGoPrevious"], all["CanGoNext"]]
        }
        #expect(try await abilities() == [.boolean(false), .boolean(true)])
        try await publisher.call("Next")
        #expect(try await abilities() == [.boolean(true), .boolean(true)])
        try await signals.waitForChange("CanGoPrevious", .boolean(true))
        try await publisher.call("Next")
        #expect(try await abilities() == [.boolean(true), .boolean(false)])
        try await signals.waitForChange("CanGoNext", .boolean(false))
        // Next at the end does nothing, and is not an error.
        try await publisher.call("Next")
        #expect(try await publisher.title() == "Three")
        try await publisher.set("LoopStatus", .string("Playlist"))
        #expect(try await abilities() == [.boolean(true), .boolean(true)])
        try await signals.waitForChange("CanGoNext", .boolean(true))
        try await publisher.call("Next")
        #expect(try await publisher.title() == "One")
        #expect(publisher.commands == ["next -> 2/3 Two", "next -> 3/3 Three", "loop all", "next -> 1/3 One"])
    }

    @Test("a no-op emits no PropertiesChanged", arguments: NoOp.all)
    func noOpIsSilent(_ noOp: NoOp) async throws {
        let publisher = try await Publisher()
        let signals = try await publisher.recordSignals()
        try await noOp.perform(publisher)
        try await signals.waitForChange(noOp.property, noOp.value)
        try await noOp.perform(publisher)
        // A change that is real, to know when the no-op's signal would have arrived.
        try await publisher.set("Shuffle", .boolean(true))
        try await signals.waitForChange("Shuffle", .boolean(true))
        let changes = signals.allChanges
        #expect(changes.count == 2, "\(changes)")
        #expect(changes.last?.changed.keys.sorted() == ["Shuffle"], "\(changes)")
    }

    @Test("a burst of changes arrives in one PropertiesChanged")
    func burstIsCoalesced() async throws {
        let publisher = try await Publisher()
        let signals = try await publisher.recordSignals()
        // A change that goes out at once and opens the 100 ms window the burst lands in. (The
        // burst used to land in the window of a change the publisher made as it started; since
        // publishing also joins the app's MPRIS entry, a few round trips more, that window can
        // be over before the test gets here, and the burst's first change then goes out at once,
        // as the first change after a quiet interval should.)
        try await publisher.set("Rate", .double(1.5))
        let opener = try await signals.waitForChange("Rate", .double(1.5))
        // Sent together, so that they arrive well within the 100 ms window even on a busy machine.
        async let next = publisher.call("Next")
        async let volume: Void = publisher.set("Volume", .double(0.25))
        async let loop: Void = publisher.set("LoopStatus", .string("Playlist"))
        _ = try await (next, volume, loop)
        let change = try await signals.waitForChange("Metadata")
        // The window ends 100 ms after the opener was sent, which reached this a little later.
        #expect(change.received - opener.received >= .milliseconds(90), "PropertiesChanged did not wait for the 100 ms window")
        #expect(change.changed["Volume"] == .double(0.25))
        #expect(change.changed["LoopStatus"] == .string("Playlist"))
        #expect(change.changed["CanGoPrevious"] == .boolean(true))
        #expect(change.changed["Metadata"]?.stringKeyedDictionary?["xesam:title"] == .string("Two"))
        // Then a later change, to be sure nothing of the burst trailed behind.
        try await publisher.set("Shuffle", .boolean(true))
        try await signals.waitForChange("Shuffle", .boolean(true))
        #expect(signals.allChanges.count == 3, "\(signals.allChanges)")
    }
}

/// A command that changes something the first time and nothing the second.
struct NoOp: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let property: String
    let value: DBusValue
    let perform: @Sendable (Publisher) async throws -> Void

    static let all = [
        NoOp(testDescription: "Pause twice", property: "PlaybackStatus", value: .string("Paused")) { try await $0.call("Pause") },
        NoOp(testDescription: "Volume set to its value", property: "Volume", value: .double(0.5)) { try await $0.set("Volume", .double(0.5)) },
        NoOp(testDescription: "LoopStatus set to its value", property: "LoopStatus", value: .string("Track")) {
            try await $0.set("LoopStatus", .string("Track"))
        },
        NoOp(testDescription: "Rate set to its value", property: "Rate", value: .double(2)) { try await $0.set("Rate", .double(2)) },
    ]
}
