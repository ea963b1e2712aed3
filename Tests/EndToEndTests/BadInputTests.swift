import DBus
import Foundation
import Testing
import TestSupport

/// Calls no player should accept. Each one must fail with the right error (or be
/// ignored where MPRIS says so), change nothing, and leave the process answering.
@Suite("bad input to earshot publish")
struct BadInputTests {
    @Test("a bad call is refused or ignored, changes nothing, and the player keeps answering", arguments: BadCall.all)
    func refused(_ bad: BadCall) async throws {
        // Paused, so that every property, Position included, holds still.
        let publisher = try await Publisher(["--paused", "--length", "60"])
        let before = try await publisher.getAll()
        let rootBefore = try await publisher.getAll(MPRIS.root)
        let error = await dbusErrorName {
            try await publisher.call(bad.method, bad.arguments(publisher), interface: bad.interface, path: bad.path)
        }
        #expect(error == bad.error)
        try await publisher.expectResponsive()
        #expect(try await publisher.getAll() == before)
        #expect(try await publisher.getAll(MPRIS.root) == rootBefore)
        #expect(publisher.commands.isEmpty, "a refused call reached the player")
    }

    @Test("Rate 0 pauses, as MPRIS says, and is not an error")
    func rateZeroPauses() async throws {
        let publisher = try await Publisher()
        try await publisher.set("Rate", .double(0))
        #expect(try await publisher.get("PlaybackStatus") == .string("Paused"))
        #expect(try await publisher.get("Rate") == .double(1), "Rate is the rate playback resumes at, never 0")
        #expect(publisher.commands == ["pause"])
        try await publisher.expectResponsive()
    }

    @Test("a negative Volume means 0")
    func negativeVolume() async throws {
        let publisher = try await Publisher()
        try await publisher.set("Volume", .double(-0.5))
        #expect(try await publisher.get("Volume") == .double(0))
        #expect(publisher.commands == ["volume 0.00"])
    }

    @Test("Seek by Int64.min goes to the start and by Int64.max acts as Next, without trapping")
    func extremeSeeks() async throws {
        let publisher = try await Publisher(titles: ["One", "Two"], ["--paused", "--length", "60"])
        try await publisher.call("SetPosition", [.objectPath(ObjectPath(publisher.trackID(0))), .int64(30_000_000)])
        try await publisher.call("Seek", [.int64(.min)])
        #expect(try await publisher.position() == 0)
        #expect(try await publisher.title() == "One")

        try await publisher.call("Seek", [.int64(.max)])
        #expect(try await publisher.title() == "Two")
        #expect(try await publisher.position() == 0)

        // On the last title there is no next: nothing happens, and nothing fails.
        let before = try await publisher.getAll()
        try await publisher.call("Seek", [.int64(.max)])
        try await publisher.call("Seek", [.int64(.min)])
        #expect(try await publisher.getAll() == before)
        #expect(publisher.commands.first == "set-position 30.000 s")
        #expect(publisher.commands.contains("next -> 2/2 Two"))
        try await publisher.expectResponsive()
    }

    @Test("a client sending a string that is not UTF-8 is cut off by the bus, and the player keeps answering")
    func invalidUTF8() async throws {
        let publisher = try await Publisher()
        // The same client with valid UTF-8 reaches the player: the raw client works.
        let valid = try await run("python3", ["-c", RawClient.script, publisher.bus.address, publisher.uniqueName,
                                              Data("file:///ok.ogg".utf8).hex], environment: publisher.bus.environment)
        #expect(valid.output == "reply", "\(valid.stdout) \(valid.stderr)")
        try await publisher.waitForLine("open-uri file:///ok.ogg")

        let invalid = try await run("python3", ["-c", RawClient.script, publisher.bus.address, publisher.uniqueName,
                                                (Data("file:///".utf8) + [0xFF, 0xFE]).hex], environment: publisher.bus.environment)
        #expect(invalid.status == 0, "\(invalid.stderr)")
        #expect(invalid.output == "disconnected" || invalid.output.hasPrefix("error "), "\(invalid.stdout)")
        try await publisher.expectResponsive()
        #expect(try await publisher.playerctlOutput("status") == "Playing")
        #expect(publisher.commands == ["open-uri file:///ok.ogg"])
    }
}

/// One call that must fail with `error`, or be ignored when `error` is nil.
struct BadCall: Sendable, CustomTestStringConvertible {
    let testDescription: String
    var interface = MPRIS.player
    var path = MPRIS.path
    let method: String
    /// The arguments, which may depend on the publisher (its track ids).
    let arguments: @Sendable (Publisher) throws -> [DBusValue]
    let error: String?

    static func set(_ property: String, _ value: DBusValue, interface: String = MPRIS.player, _ error: String?) -> BadCall {
        BadCall(testDescription: "Set \(property) to \(value)", interface: StandardInterface.properties, method: "Set",
                arguments: { _ in [.string(interface), .string(property), .variant(value)] }, error: error)
    }

    static func call(_ description: String, _ method: String, interface: String = MPRIS.player, path: ObjectPath = MPRIS.path,
                     _ error: String?, _ arguments: @escaping @Sendable (Publisher) throws -> [DBusValue]) -> BadCall {
        BadCall(testDescription: description, interface: interface, path: path, method: method, arguments: arguments, error: error)
    }

    static let all: [BadCall] = {
        typealias E = DBusError.Name
        let properties = StandardInterface.properties
        return [
            call("Seek with a string offset", "Seek", E.invalidArgs) { _ in [.string("10")] },
            call("Seek with an int32 offset", "Seek", E.invalidArgs) { _ in [.int32(10)] },
            call("Seek without an offset", "Seek", E.invalidArgs) { _ in [] },
            call("SetPosition with a string track id", "SetPosition", E.invalidArgs) { [.string($0.trackID(0)), .int64(5_000_000)] },
            call("SetPosition without a position", "SetPosition", E.invalidArgs) { [.objectPath(try ObjectPath($0.trackID(0)))] },
            call("SetPosition before the start", "SetPosition", nil) { [.objectPath(try ObjectPath($0.trackID(0))), .int64(-1)] },
            call("SetPosition beyond the length", "SetPosition", nil) { [.objectPath(try ObjectPath($0.trackID(0))), .int64(60_000_001)] },
            call("SetPosition at Int64.min", "SetPosition", nil) { [.objectPath(try ObjectPath($0.trackID(0))), .int64(.min)] },
            call("SetPosition with another track's id", "SetPosition", nil) { [.objectPath(try ObjectPath($0.trackID(1))), .int64(5_000_000)] },
            call("SetPosition with the NoTrack id", "SetPosition", nil) {
                _ in [.objectPath("/org/mpris/MediaPlayer2/TrackList/NoTrack"), .int64(5_000_000)]
            },
            call("OpenUri with text that is not a URI", "OpenUri", E.invalidArgs) { _ in [.string("not a uri")] },
            call("OpenUri with an empty string", "OpenUri", E.invalidArgs) { _ in [.string("")] },
            call("OpenUri with an unsupported scheme", "OpenUri", E.notSupported) { _ in [.string("gopher://example.org/x.ogg")] },
            call("OpenUri with two strings", "OpenUri", E.invalidArgs) { _ in [.string("file:///a.ogg"), .string("file:///b.ogg")] },
            call("Raise with an argument", "Raise", interface: MPRIS.root, E.invalidArgs) { _ in [.boolean(true)] },
            call("Play with an argument", "Play", E.invalidArgs) { _ in [.int32(1)] },
            call("an unknown method", "Rewind", E.unknownMethod) { _ in [] },
            call("a method of an unknown interface", "Play", interface: "org.mpris.MediaPlayer2.Playlists", E.unknownInterface) { _ in [] },
            call("a method on an unknown object", "Play", path: "/org/mpris/MediaPlayer2/Other", E.unknownObject) { _ in [] },
            call("Get of an unknown property", "Get", interface: properties, E.unknownProperty) { _ in [.string(MPRIS.player), .string("Loudness")] },
            call("Get of a property of an unknown interface", "Get", interface: properties, E.unknownInterface) {
                _ in [.string("org.mpris.MediaPlayer2.TrackList"), .string("Tracks")]
            },
            call("Get of a root property on the Player interface", "Get", interface: properties, E.unknownProperty) {
                _ in [.string(MPRIS.player), .string("Identity")]
            },
            call("Set without a value", "Set", interface: properties, E.invalidArgs) { _ in [.string(MPRIS.player), .string("Volume")] },
            set("Rate", .double(.nan), E.invalidArgs),
            set("Rate", .double(-1), E.invalidArgs),
            set("Rate", .double(100), E.invalidArgs),
            set("Rate", .double(.infinity), E.invalidArgs),
            set("Rate", .double(0.25), E.invalidArgs),
            set("Rate", .string("fast"), E.invalidArgs),
            set("Volume", .double(.nan), E.invalidArgs),
            set("Volume", .double(.infinity), E.invalidArgs),
            set("Volume", .int32(1), E.invalidArgs),
            set("LoopStatus", .string("Sometimes"), E.invalidArgs),
            set("LoopStatus", .string("track"), E.invalidArgs),
            set("Shuffle", .string("true"), E.invalidArgs),
            set("Shuffle", .int32(1), E.invalidArgs),
            set("PlaybackStatus", .string("Playing"), E.propertyReadOnly),
            set("Position", .int64(5_000_000), E.propertyReadOnly),
            set("Metadata", .vardict(["xesam:title": .string("Hijacked")]), E.propertyReadOnly),
            set("CanControl", .boolean(false), E.propertyReadOnly),
            set("Identity", .string("Someone else"), interface: MPRIS.root, E.propertyReadOnly),
            set("Loudness", .double(1), E.unknownProperty),
        ]
    }()
}

/// A D-Bus client in Python with nothing but sockets, for what libdbus clients refuse
/// to send. Arguments: the bus address, the destination, and the bytes of the string
/// to pass to OpenUri, in hex. Prints `reply`, `error NAME`, `disconnected` or `no answer`.
enum RawClient {
    static let script = #"""
        import os, socket, struct, sys

        def pad(data, n):
            return data + b"\0" * (-len(data) % n)

        def string(data):
            return struct.pack("<I", len(data)) + data + b"\0"

        def header_field(fields, code, signature, value):
            fields = pad(fields, 8) + bytes([code, 1]) + signature + b"\0"
            if signature == b"g":
                return fields + bytes([len(value)]) + value + b"\0"
            return pad(fields, 4) + string(value)

        def method_call(serial, path, interface, member, destination, signature=b"", body=b""):
            fields = b""
            for code, sig, value in [(1, b"o", path), (2, b"s", interface), (3, b"s", member),
                                     (6, b"s", destination), (8, b"g", signature)]:
                if value:
                    fields = header_field(fields, code, sig, value)
            header = b"l\1\0\1" + struct.pack("<III", len(body), serial, len(fields)) + fields
            return pad(header, 8) + body

        def parse_fields(message, end):
            offset, fields = 16, {}
            while True:
                offset += -offset % 8
                if offset >= end:
                    return fields
                code, length = message[offset], message[offset + 1]
                signature = message[offset + 2:offset + 2 + length]
                offset += 3 + length
                if signature == b"u":
                    offset += -offset % 4
                    fields[code] = struct.unpack_from("<I", message, offset)[0]
                    offset += 4
                elif signature in (b"s", b"o"):
                    offset += -offset % 4
                    size = struct.unpack_from("<I", message, offset)[0]
                    fields[code] = message[offset + 4:offset + 4 + size].decode()
                    offset += 5 + size
                else:
                    fields[code] = message[offset + 1:offset + 1 + message[offset]]
                    offset += 2 + message[offset]

        address, destination, uri = sys.argv[1], sys.argv[2].encode(), bytes.fromhex(sys.argv[3])
        path = dict(part.split("=", 1) for part in address[len("unix:"):].split(","))["path"]
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(3)
        sock.connect(path)
        sock.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
        if not sock.recv(4096).startswith(b"OK "):
            sys.exit("authentication refused")
        sock.sendall(b"BEGIN\r\n")
        sock.sendall(method_call(1, b"/org/freedesktop/DBus", b"org.freedesktop.DBus", b"Hello", b"org.freedesktop.DBus"))
        sock.sendall(method_call(2, b"/org/mpris/MediaPlayer2", b"org.mpris.MediaPlayer2.Player", b"OpenUri",
                                 destination, b"s", string(uri)))
        received = b""
        try:
            while True:
                while len(received) >= 16:
                    body_length, _, fields_length = struct.unpack_from("<III", received, 4)
                    total = 16 + fields_length + (-fields_length % 8) + body_length
                    if len(received) < total:
                        break
                    kind, fields = received[1], parse_fields(received, 16 + fields_length)
                    received = received[total:]
                    if kind in (2, 3) and fields.get(5) == 2:
                        print("reply" if kind == 2 else "error " + fields.get(4, "?"))
                        sys.exit(0)
                chunk = sock.recv(4096)
                if not chunk:
                    print("disconnected")
                    break
                received += chunk
        except ConnectionResetError:
            print("disconnected")
        except socket.timeout:
            print("no answer")
        """#
}

extension Data {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
