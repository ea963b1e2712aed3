/// The text of Icecast/SHOUTcast (ICY) metadata, as FFmpeg's http protocol keeps it: the last
/// in-band block (`StreamTitle='Artist - Title';StreamUrl='…';`) and the response headers
/// (`icy-name: Station\r\n…`).
enum ICYMetadata {
    /// The `StreamTitle` of a metadata block; nil when it has none or it is empty.
    ///
    /// The value runs to the next `';` (a title may hold a lone `'`, as in "Guns N' Roses").
    /// Servers send UTF-8 or Latin-1: bytes that are not valid UTF-8 are read as Latin-1.
    static func streamTitle(_ packet: [UInt8]) -> String? {
        value(of: "StreamTitle", in: packet)
    }

    static func streamTitle(_ packet: String) -> String? { streamTitle(Array(packet.utf8)) }

    /// The `icy-name` header of a response, if any.
    static func stationName(_ headers: String) -> String? {
        for line in headers.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            guard line[..<colon].lowercased() == "icy-name" else { continue }
            let name = line[line.index(after: colon)...].drop { $0 == " " }
            let trimmed = String(name).trimmingSuffix { $0 == " " || $0 == "\r" }
            return trimmed.isEmpty ? nil : trimmed
        }
        return nil
    }

    private static func value(of key: String, in bytes: [UInt8]) -> String? {
        let opening = Array("\(key)='".utf8)
        guard let start = bytes.firstRange(of: opening)?.upperBound else { return nil }
        let rest = bytes[start...]
        let end = rest.firstRange(of: Array("';".utf8))?.lowerBound ?? rest.lastIndex(of: UInt8(ascii: "'")) ?? rest.endIndex
        let raw = Array(bytes[start..<end])
        let text = String(validating: raw, as: UTF8.self) ?? String(String.UnicodeScalarView(raw.map { Unicode.Scalar($0) }))
        let trimmed = text.trimmingSuffix { $0 == " " }.drop { $0 == " " }
        return trimmed.isEmpty ? nil : String(trimmed)
    }
}

extension String {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var text = self[...]
        while let last = text.last, predicate(last) { text.removeLast() }
        return String(text)
    }
}
