import FoundationEssentials
import Platform
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

    /// The largest configuration file read (a few lines are expected).
    public static let maximumFileSize = 64 * 1024

    /// The defaults, with what the user's file (``userFilePath``) says. The file holds
    /// `key = value` lines; `#` starts a comment. Known keys:
    /// - `others = pause | duck | observe`: what the arbiter does to other apps
    ///   (``Arbiter/OthersPolicy``).
    ///
    /// A missing file gives the defaults. What is wrong in it (a line that is not
    /// `key = value`, an unknown key or value, a file that is not a regular file or is larger
    /// than ``maximumFileSize``) is said on standard error, naming the file and the line, and
    /// ignored: a bad line must not keep the arbiter from running.
    public static func user() -> Arbiter.Configuration {
        guard let path = userFilePath else { return Arbiter.Configuration() }
        let (configuration, problems) = load(path: path)
        for problem in problems { Arbiter.log("\(path): \(problem)") }
        return configuration
    }

    /// The defaults, with what the file at `path` says, and what was wrong in it (each
    /// problem ignored). A missing file gives the defaults and no problem. The file is opened
    /// without blocking and must be a regular file: a FIFO or a device at that path is a
    /// problem, never a wait.
    public static func load(path: String) -> (Arbiter.Configuration, problems: [String]) {
        var configuration = Arbiter.Configuration()
        let bytes: [UInt8]
        do {
            bytes = try SmallFile.read(path, limit: maximumFileSize)
        } catch {
            switch error {
            case .missing: return (configuration, [])
            case .unreadable(let reason): return (configuration, ["cannot read it: \(reason); using the defaults"])
            case .notARegularFile: return (configuration, ["cannot read it: not a regular file; using the defaults"])
            case .tooLarge(let size): return (configuration, ["cannot read it: \(size) bytes, more than the \(maximumFileSize) read; using the defaults"])
            }
        }
        let problems = configuration.apply(String(decoding: bytes, as: UTF8.self))
        return (configuration, problems)
    }

    /// Applies the `key = value` lines of a configuration file; returns what was wrong in
    /// it, by line (`line 3: unknown key “volume”`), each ignored.
    @discardableResult
    public mutating func apply(_ text: String) -> [String] {
        var problems: [String] = []
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            guard !content.allSatisfy({ $0 == " " || $0 == "\t" }) else { continue }
            let parts = content.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { part in
                String(part.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
            }
            let number = index + 1
            guard parts.count == 2, !parts[0].isEmpty else {
                problems.append("line \(number): not “key = value”; ignored")
                continue
            }
            switch parts[0] {
            case "others":
                if let others = Arbiter.OthersPolicy(rawValue: parts[1]) {
                    self.others = others
                } else {
                    let allowed = Arbiter.OthersPolicy.allCases.map(\.rawValue).joined(separator: ", ")
                    problems.append("line \(number): others must be one of \(allowed), not “\(Self.printable(parts[1]))”; ignored")
                }
            default:
                problems.append("line \(number): unknown key “\(Self.printable(parts[0]))”; ignored")
            }
        }
        return problems
    }

    /// `text` cut to 40 characters, control characters as `?`, for a message.
    private static func printable(_ text: String) -> String {
        let cut = text.count > 40 ? String(text.prefix(40)) + "…" : text
        return String(cut.map { $0.isASCII && ($0.asciiValue! < 0x20 || $0.asciiValue! == 0x7F) ? "?" : $0 })
    }
}
