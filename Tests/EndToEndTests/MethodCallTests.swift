import DBus
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import TestSupport

/// The MPRIS methods playerctl does not cover, called with gdbus and dbus-send.
@Suite("gdbus and dbus-send against earshot publish")
struct MethodCallTests {
    @Test("OpenUri with a supported scheme reaches the publisher", arguments: [
        "file:///music/a%20song.ogg", "https://example.org/stream.mp3", "HTTP://example.org/loud.flac",
    ])
    func openSupportedURI(_ uri: String) async throws {
        let publisher = try await Publisher()
        let result = try await publisher.gdbus("OpenUri", [uri])
        #expect(result.status == 0, "\(result.stderr)")
        try await publisher.waitForLine("open-uri \(uri)")
    }

    @Test("OpenUri with an unsupported scheme fails with NotSupported", arguments: [
        "ftp://example.org/a.mp3", "mailto:someone@example.org", "smb://host/share/b.ogg",
    ])
    func openUnsupportedURI(_ uri: String) async throws {
        let publisher = try await Publisher()
        let result = try await publisher.gdbus("OpenUri", [uri])
        #expect(result.status != 0)
        #expect(result.stderr.contains(DBusError.Name.notSupported), "\(result.stderr)")
        try await publisher.expectResponsive()
        #expect(publisher.commands.isEmpty)
    }

    @Test("Raise reaches the publisher")
    func raise() async throws {
        let publisher = try await Publisher()
        let result = try await publisher.gdbus("Raise", interface: MPRIS.root)
        #expect(result.status == 0, "\(result.stderr)")
        try await publisher.waitForLine("raise")
    }

    @Test("Quit makes the publisher exit 0 and give up its name")
    func quit() async throws {
        let publisher = try await Publisher()
        let result = try await publisher.gdbus("Quit", interface: MPRIS.root)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await publisher.process.wait(timeout: 5) == 0)
        #expect(publisher.commands == ["quit"])
        #expect(try await publisher.client.nameOwner(publisher.busName) == nil)
    }

    @Test("SetPosition with the current track id moves the position")
    func setPositionCurrentTrack() async throws {
        let publisher = try await Publisher(["--paused"])
        let result = try await publisher.gdbus("SetPosition", [publisher.trackID(0), "20000000"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await publisher.position() == 20)
        #expect(publisher.commands == ["set-position 20.000 s"])
    }

    @Test("SetPosition with a stale track id is ignored without an error")
    func setPositionStaleTrack() async throws {
        let publisher = try await Publisher(["--paused"])
        try await publisher.call("Next")
        try await publisher.waitForLine("next -> 2/3 Two")
        for stale in [publisher.trackID(0), publisher.trackID(2), "/org/earshot/elsewhere/Track/1"] {
            let result = try await publisher.gdbus("SetPosition", [stale, "20000000"])
            #expect(result.status == 0, "\(stale): \(result.stderr)")
        }
        #expect(try await publisher.position() == 0)
        #expect(try await publisher.title() == "Two")
        #expect(publisher.commands == ["next -> 2/3 Two"])
    }

    @Test("Seek by a huge negative offset clamps to the start")
    func seekBeforeStart() async throws {
        let publisher = try await Publisher(["--paused"])
        try await publisher.call("SetPosition", [.objectPath(ObjectPath(publisher.trackID(0))), .int64(30_000_000)])
        #expect(try await publisher.position() == 30)
        let result = try await publisher.gdbus("Seek", ["--", "-999999999999"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await publisher.position() == 0)
        #expect(try await publisher.title() == "One")
        #expect(publisher.commands == ["set-position 30.000 s", "seek -30.000 s -> 0.000 s"])
    }

    @Test("Seek past the end acts as Next")
    func seekPastEnd() async throws {
        let publisher = try await Publisher(["--paused", "--length", "60"])
        let result = try await publisher.gdbus("Seek", ["61000000"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await publisher.title() == "Two")
        #expect(try await publisher.position() == 0)
        #expect(publisher.commands == ["next -> 2/3 Two"])
    }

    @Test("Introspect describes both MPRIS interfaces completely")
    func introspection() async throws {
        let publisher = try await Publisher()
        let result = try await publisher.dbusSend("Introspect", interface: StandardInterface.introspectable)
        #expect(result.status == 0, "\(result.stderr)")
        let document = try XMLDocument(xmlString: result.output.trimmingCharacters(in: .whitespaces))
        func strings(_ xpath: String) throws -> [String] {
            try document.nodes(forXPath: xpath).compactMap(\.stringValue)
        }
        func interface(_ name: String) -> String { "/node/interface[@name='\(name)']" }

        for standard in [StandardInterface.properties, StandardInterface.introspectable, StandardInterface.peer] {
            #expect(try !strings(interface(standard) + "/@name").isEmpty, "\(standard) is missing")
        }

        let root = interface(MPRIS.root)
        #expect(try Set(strings(root + "/method/@name")) == ["Raise", "Quit"])
        #expect(try strings(root + "/method/arg").isEmpty)
        let rootProperties = ["CanQuit": "b", "CanRaise": "b", "HasTrackList": "b", "Identity": "s",
                              "DesktopEntry": "s", "SupportedUriSchemes": "as", "SupportedMimeTypes": "as"]
        #expect(try Set(strings(root + "/property/@name")) == Set(rootProperties.keys))
        for (name, type) in rootProperties {
            #expect(try strings(root + "/property[@name='\(name)']/@type") == [type], "\(name)")
            #expect(try strings(root + "/property[@name='\(name)']/@access") == ["read"], "\(name)")
        }

        let player = interface(MPRIS.player)
        #expect(try Set(strings(player + "/method/@name"))
            == ["Next", "Previous", "Pause", "PlayPause", "Stop", "Play", "Seek", "SetPosition", "OpenUri"])
        for (method, types) in ["Seek": ["x"], "SetPosition": ["o", "x"], "OpenUri": ["s"], "Next": [], "PlayPause": []] {
            #expect(try strings(player + "/method[@name='\(method)']/arg[@direction='in']/@type") == types, "\(method)")
            #expect(try strings(player + "/method[@name='\(method)']/arg[@direction='out']").isEmpty, "\(method)")
        }
        #expect(try strings(player + "/signal/@name") == ["Seeked"])
        #expect(try strings(player + "/signal[@name='Seeked']/arg/@type") == ["x"])

        let playerProperties: [String: (type: String, access: String)] = [
            "PlaybackStatus": ("s", "read"), "LoopStatus": ("s", "readwrite"), "Rate": ("d", "readwrite"),
            "Shuffle": ("b", "readwrite"), "Metadata": ("a{sv}", "read"), "Volume": ("d", "readwrite"),
            "Position": ("x", "read"), "MinimumRate": ("d", "read"), "MaximumRate": ("d", "read"),
            "CanGoNext": ("b", "read"), "CanGoPrevious": ("b", "read"), "CanPlay": ("b", "read"),
            "CanPause": ("b", "read"), "CanSeek": ("b", "read"), "CanControl": ("b", "read"),
        ]
        #expect(try Set(strings(player + "/property/@name")) == Set(playerProperties.keys))
        for (name, expected) in playerProperties {
            #expect(try strings(player + "/property[@name='\(name)']/@type") == [expected.type], "\(name)")
            #expect(try strings(player + "/property[@name='\(name)']/@access") == [expected.access], "\(name)")
        }
        func emitsChanged(_ property: String) throws -> [String] {
            try strings(player + "/property[@name='\(property)']/annotation[@name='org.freedesktop.DBus.Property.EmitsChangedSignal']/@value")
        }
        #expect(try emitsChanged("Position") == ["false"])
        #expect(try emitsChanged("CanControl") == ["const"])
        #expect(try emitsChanged("Metadata").isEmpty, "Metadata emits PropertiesChanged, the default")
    }

    @Test("Introspect of the parent paths leads to the MPRIS object")
    func introspectionTree() async throws {
        let publisher = try await Publisher()
        for (path, child) in [("/", "org"), ("/org", "mpris"), ("/org/mpris", "MediaPlayer2")] as [(ObjectPath, String)] {
            let result = try await publisher.dbusSend("Introspect", interface: StandardInterface.introspectable, path: path)
            #expect(result.status == 0, "\(path): \(result.stderr)")
            let document = try XMLDocument(xmlString: result.output.trimmingCharacters(in: .whitespaces))
            #expect(try document.nodes(forXPath: "/node/node/@name").compactMap(\.stringValue) == [child], "\(path)")
        }
    }
}
