import DBus
import Testing

@Suite("Signatures, paths and values (no bus)")
struct SignatureTests {
    @Test("every type code round-trips through parse and render", arguments: [
        "y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g", "v",
        "as", "a{sv}", "a{oa{sa{sv}}}", "(ii)", "a(sx)", "aay", "(s(ia{sv}))", "a{ya(bv)}",
    ])
    func roundTrip(_ signature: String) throws {
        #expect(try DBusType(signature).signature == signature)
    }

    @Test("invalid signatures are errors, not aborts", arguments: [
        "", "a", "(", "()", "{sv}", "a{vs}", "a{s}", "a{svs}", "z", "h", "ii",
        String(repeating: "a", count: 33) + "i", String(repeating: "(", count: 33) + "i" + String(repeating: ")", count: 33),
    ])
    func invalidSignature(_ signature: String) {
        #expect(throws: DBusError.self) { try DBusType(signature) }
    }

    @Test("argument lists parse into several complete types")
    func list() throws {
        #expect(try DBusType.parseList("sa{sv}as") == [.string, .dictionary(key: .string, value: .variant), .array(.string)])
        #expect(try DBusType.parseList("") == [])
    }

    @Test("object paths follow the specification", arguments: [
        ("/", true), ("/org/mpris/MediaPlayer2", true), ("/a_b/C9", true),
        ("", false), ("org", false), ("/org/", false), ("//", false), ("/a//b", false), ("/a-b", false), ("/ä", false),
    ])
    func paths(_ path: String, _ valid: Bool) {
        #expect(((try? ObjectPath(path)) != nil) == valid)
    }

    @Test("escaped path elements are always valid and distinct")
    func escaping() throws {
        let base: ObjectPath = "/org/earshot"
        let a = base.appending(escaped: "Track 1/ü")
        let b = base.appending(escaped: "Track_1_ü")
        #expect(try ObjectPath(a.rawValue) == a)
        #expect(a != b)
        #expect(base.appending(escaped: "").rawValue == "/org/earshot/_")
    }

    @Test("validation catches what libdbus would abort on")
    func validation() {
        #expect(throws: DBusError.self) { try DBusValue.string("a\0b").validate() }
        #expect(throws: DBusError.self) { try DBusValue.array(.string, [.int32(1)]).validate() }
        #expect(throws: DBusError.self) { try DBusValue.dictionary(key: .string, value: .variant, [.init(.int32(1), .variant(.int32(1)))]).validate() }
        #expect(throws: DBusError.self) { try DBusValue.variant(.array(.byte, [.string("x")])).validate() }
        #expect(throws: DBusError.self) { try DBusValue.structure([]).validate() }
        #expect(throws: Never.self) { try DBusValue.vardict(["a": .strings(["x", "y"])]).validate() }
    }

    @Test("building a message with an invalid value or name throws")
    func invalidMessages() {
        #expect(throws: DBusError.self) {
            try DBusMessage.methodCall(destination: "org.example", path: "/", interface: "org.example", method: "M", arguments: [.string("\0")])
        }
        #expect(throws: DBusError.self) {
            try DBusMessage.methodCall(destination: "not a name", path: "/", interface: "org.example", method: "M")
        }
        #expect(throws: DBusError.self) {
            try DBusMessage.methodCall(destination: "org.example", path: "/", interface: "noDots", method: "M")
        }
        #expect(throws: DBusError.self) {
            try DBusMessage.signal(path: "/", interface: "org.example", name: "bad-member")
        }
    }

    @Test("match rules quote and escape their values")
    func matchRuleText() {
        let rule = MatchRule(sender: "org.freedesktop.DBus", member: "NameOwnerChanged", arg0: "it's")
        #expect(rule.text == "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='it'\\''s'")
    }
}
