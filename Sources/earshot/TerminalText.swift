/// Text from outside the program (file names, tags, URIs and strings from the bus, the
/// arguments themselves) made safe to print on a terminal: nothing in it can move the
/// cursor, clear the screen, retitle the window, reorder the line or hide what follows.
///
/// Escaped: C0 controls (U+0000–U+001F, ESC included, so no escape sequence survives),
/// DEL, C1 controls (U+0080–U+009F, CSI among them), the bidirectional formatting
/// characters (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069), and the backslash
/// itself, so that the result reads back unambiguously. Bytes that are not UTF-8 (only
/// raw byte input has them; a Swift `String` cannot) are written `\xFF`. Everything
/// else, non-ASCII letters included, is kept.
enum TerminalText {
    /// `text` with every character that could act on a terminal written as an escape.
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars { append(scalar, to: &out) }
        return out
    }

    /// `bytes` decoded as UTF-8, with each byte of an invalid sequence written `\xNN` and
    /// every character ``escaped(_:)`` escapes escaped.
    static func escaped(bytes: some Collection<UInt8>) -> String {
        let bytes = Array(bytes)
        var out = ""
        var i = 0
        while i < bytes.count {
            let lead = bytes[i]
            let length = lead < 0x80 ? 1 : lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3
                : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0
            if length > 0, i + length <= bytes.count,
               let text = String(validating: bytes[i..<(i + length)], as: UTF8.self) {
                for scalar in text.unicodeScalars { append(scalar, to: &out) }
                i += length
            } else {
                out += hex(lead)
                i += 1
            }
        }
        return out
    }

    private static func append(_ scalar: Unicode.Scalar, to out: inout String) {
        switch scalar.value {
        case 0x5C: out += "\\\\"
        case 0x0A: out += "\\n"
        case 0x09: out += "\\t"
        case 0x0D: out += "\\r"
        case 0x00...0x1F, 0x7F: out += hex(UInt8(scalar.value))
        case 0x80...0x9F, 0x061C, 0x200E...0x200F, 0x202A...0x202E, 0x2066...0x2069:
            out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        default: out.unicodeScalars.append(scalar)
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return "\\x" + (digits.count == 1 ? "0" + digits : digits)
    }
}
