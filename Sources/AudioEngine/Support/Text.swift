/// Text helpers the package's modules share, so that none of them needs Foundation's
/// formatters (the binary then links FoundationEssentials alone, without ICU's data).

extension Double {
    /// The value with a fixed number of decimals, rounded half away from zero:
    /// `12.4`, `-0.5`, `3` for `decimals: 0`. Not finite: its plain description.
    package func fixed(_ decimals: Int) -> String {
        guard isFinite, decimals >= 0, decimals <= 9 else { return "\(self)" }
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(self) * Double(scale)).rounded()
        guard scaled < 9.0e18 else { return "\(self)" }
        let units = Int64(scaled)
        let sign = self < 0 && units != 0 ? "-" : ""
        guard decimals > 0 else { return "\(sign)\(units)" }
        let fraction = String(units % scale)
        return "\(sign)\(units / scale)." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (what Foundation's
    /// `trimmingCharacters(in: .whitespaces)` removes, for ASCII text).
    package func trimmingWhitespace() -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\u{A0}" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(self[first...last])
    }
}
