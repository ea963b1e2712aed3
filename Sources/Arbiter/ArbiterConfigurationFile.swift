import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

extension Arbiter.Configuration {
    /// The configuration file of the arbiter an Earshot process hosts:
    /// `$XDG_CONFIG_HOME/earshot/arbiter.conf` (`~/.config/earshot/arbiter.conf` when unset).
    public static var userFilePath: String? {
        if let config = getenv("XDG_CONFIG_HOME").map({ String(cString: $0) }), config.hasPrefix("/") {
            return config + "/earshot/arbiter.conf"
        }
        guard let home = getenv("HOME").map({ String(cString: $0) }), home.hasPrefix("/") else { return nil }
        return home + "/.config/earshot/arbiter.conf"
    }

    /// The defaults, with what the user's file (``userFilePath``) says. The file holds
    /// `key = value` lines; `#` starts a comment. Known keys:
    /// - `others = pause | duck | observe`: what the arbiter does to other apps
    ///   (``Arbiter/OthersPolicy``).
    ///
    /// A missing file gives the defaults; unknown keys and values are ignored (a bad line
    /// must not keep the arbiter from running).
    public static func user() -> Arbiter.Configuration {
        var configuration = Arbiter.Configuration()
        guard let path = userFilePath, let data = FileManager.default.contents(atPath: path) else { return configuration }
        configuration.apply(String(decoding: data, as: UTF8.self))
        return configuration
    }

    /// Applies the `key = value` lines of a configuration file.
    public mutating func apply(_ text: String) {
        for line in text.split(whereSeparator: \.isNewline) {
            let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let parts = content.split(separator: "=", maxSplits: 1).map { part in
                String(part.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
            }
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "others":
                if let others = Arbiter.OthersPolicy(rawValue: parts[1]) { self.others = others }
            default:
                continue
            }
        }
    }
}
