import Arbiter
import ArbiterTestSupport
import DBus
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import TestSupport

/// One member of an interface as introspection describes it: what a client depends on
/// (names, argument names, types and directions, property type and access, how a property
/// announces changes), without doc comments.
struct InterfaceMember: Hashable, CustomStringConvertible {
    enum Kind: String { case method, signal, property }
    struct Argument: Hashable { var name: String, type: String, direction: String }

    var kind: Kind
    var name: String
    var arguments: [Argument] = []  // in order: order is part of the signature
    var type = ""
    var access = ""
    var emitsChangedSignal = ""

    var description: String {
        let args = arguments.map { "\($0.direction) \($0.name): \($0.type)" }.joined(separator: ", ")
        return switch kind {
        case .method, .signal: "\(kind.rawValue) \(name)(\(args))"
        case .property: "property \(name): \(type) \(access) (EmitsChangedSignal \(emitsChangedSignal))"
        }
    }
}

/// Reads one interface out of an introspection document. Arguments without a direction
/// are `in` for methods and `out` for signals (the introspection format's defaults);
/// a property without the EmitsChangedSignal annotation emits `true`.
final class InterfaceReader: NSObject, XMLParserDelegate {
    let interface: String
    private(set) var members: Set<InterfaceMember> = []
    private var inInterface = false
    private var current: InterfaceMember?
    private(set) var error: String?

    init(interface: String) { self.interface = interface }

    static func members(of interface: String, in xml: String) throws -> Set<InterfaceMember> {
        let reader = InterfaceReader(interface: interface)
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = reader
        guard parser.parse() else {
            throw TestFailure("\(interface): not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "unknown error")")
        }
        if let error = reader.error { throw TestFailure(error) }
        return reader.members
    }

    func parser(_ parser: XMLParser, didStartElement element: String, namespaceURI: String?,
                qualifiedName: String?, attributes: [String: String] = [:]) {
        switch element {
        case "interface":
            inInterface = attributes["name"] == interface
        case "method" where inInterface, "signal" where inInterface:
            current = InterfaceMember(kind: element == "method" ? .method : .signal, name: attributes["name"] ?? "")
        case "property" where inInterface:
            current = InterfaceMember(kind: .property, name: attributes["name"] ?? "", type: attributes["type"] ?? "",
                                      access: attributes["access"] ?? "", emitsChangedSignal: "true")
        case "arg" where inInterface:
            guard current != nil, current?.kind != .property else {
                error = "an <arg> outside a method or signal in \(interface)"
                return
            }
            let direction = attributes["direction"] ?? (current?.kind == .method ? "in" : "out")
            current?.arguments.append(.init(name: attributes["name"] ?? "", type: attributes["type"] ?? "", direction: direction))
        case "annotation" where inInterface:
            if attributes["name"] == "org.freedesktop.DBus.Property.EmitsChangedSignal", current?.kind == .property {
                current?.emitsChangedSignal = attributes["value"] ?? ""
            }
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
        switch element {
        case "interface":
            inInterface = false
        case "method", "signal", "property":
            guard inInterface, let member = current else { return }
            if members.contains(where: { $0.kind == member.kind && $0.name == member.name }) {
                error = "\(member.kind.rawValue) \(member.name) is declared twice in \(interface)"
            }
            members.insert(member)
            current = nil
        default:
            break
        }
    }
}

@Suite("org.earshot.AudioSession: the documented interface is the live one")
struct InterfaceDocumentTests {
    static let documentPath = "\(Paths.packageRoot)/dbus/org.earshot.AudioSession.xml"

    static func documented() throws -> Set<InterfaceMember> {
        let xml = try String(contentsOfFile: documentPath, encoding: .utf8)
        return try InterfaceReader.members(of: ArbiterName.interface, in: xml)
    }

    @Test("Introspect on /org/earshot/AudioSession matches dbus/org.earshot.AudioSession.xml member for member")
    func liveMatchesDocument() async throws {
        let f = try await ArbiterFixture()
        let client = try DBusConnection(.address(f.bus.address))
        let reply = try await client.call(destination: ArbiterName.bus, path: ArbiterName.path,
                                          interface: "org.freedesktop.DBus.Introspectable", method: "Introspect", [])
        let xml = try #require(reply.first?.string, "Introspect returns a string")
        let live = try InterfaceReader.members(of: ArbiterName.interface, in: xml)
        let documented = try Self.documented()
        #expect(!live.isEmpty, "the live object declares \(ArbiterName.interface)")
        #expect(!documented.isEmpty, "\(Self.documentPath) declares \(ArbiterName.interface)")
        let onlyLive = live.subtracting(documented).map(\.description).sorted()
        let onlyDocumented = documented.subtracting(live).map(\.description).sorted()
        #expect(onlyLive.isEmpty, "served but not as documented: \(onlyLive)")
        #expect(onlyDocumented.isEmpty, "documented but not served so: \(onlyDocumented)")
    }

    @Test("ArbiterProtocol names exactly the documented methods, signals and properties")
    func namesMatchDocument() throws {
        let documented = try Self.documented()
        func names(_ kind: InterfaceMember.Kind) -> Set<String> { Set(documented.filter { $0.kind == kind }.map(\.name)) }
        #expect(Set(ArbiterProtocol.Method.allCases.map(\.rawValue)) == names(.method))
        #expect(Set(ArbiterProtocol.Signal.allCases.map(\.rawValue)) == names(.signal))
        #expect(Set(ArbiterProtocol.Property.allCases.map(\.rawValue)) == names(.property))
    }

    @Test("the reader sees a change of argument name, type, direction, order or property access")
    func readerDistinguishesChanges() throws {
        func members(_ body: String) throws -> Set<InterfaceMember> {
            try InterfaceReader.members(of: "a.B", in: "<node><interface name=\"a.B\">\(body)</interface></node>")
        }
        let base = try members("""
            <!-- a comment --><method name="M"><arg name="x" type="s" direction="in"/><arg name="y" type="b"/></method>
            <signal name="S"><arg name="g" type="d"/></signal><property name="P" type="s" access="read"/>
            """)
        #expect(base.count == 3)
        #expect(try members("""
            <method name="M"><arg name="x" type="s"/><arg name="y" type="b" direction="in"/></method>
            <signal name="S"><arg name="g" type="d" direction="out"/></signal>
            <property name="P" type="s" access="read"><annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="true"/></property>
            """) == base, "defaults and comments change nothing")
        for changed in [
            #"<method name="M"><arg name="x" type="s" direction="in"/><arg name="z" type="b"/></method>"#,
            #"<method name="M"><arg name="x" type="i" direction="in"/><arg name="y" type="b"/></method>"#,
            #"<method name="M"><arg name="x" type="s" direction="out"/><arg name="y" type="b"/></method>"#,
            #"<method name="M"><arg name="y" type="b"/><arg name="x" type="s" direction="in"/></method>"#,
        ] {
            let other = try members(changed + #"<signal name="S"><arg name="g" type="d"/></signal><property name="P" type="s" access="read"/>"#)
            #expect(other != base, "\(changed)")
        }
        #expect(try members(#"<method name="M"><arg name="x" type="s" direction="in"/><arg name="y" type="b"/></method><signal name="S"><arg name="g" type="d"/></signal><property name="P" type="s" access="readwrite"/>"#) != base)
        #expect(try members(#"<method name="M"><arg name="x" type="s" direction="in"/><arg name="y" type="b"/></method><signal name="S"><arg name="g" type="d"/></signal><property name="P" type="s" access="read"><annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="invalidates"/></property>"#) != base)
        #expect(throws: TestFailure.self) { try members(#"<signal name="S"/><signal name="S"/>"#) }
    }
}
