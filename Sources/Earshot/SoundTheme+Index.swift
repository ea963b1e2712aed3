// A sound theme's index.theme: the parts of it the lookup uses.

import FoundationEssentials
import AudioEngine

/// The lookup's view of a theme's `index.theme`: what it inherits and where its sounds are.
///
/// The file is ini-style UTF-8 text, as in the Desktop Entry Specification:
///
/// ```ini
/// [Sound Theme]
/// Name=Birch
/// Inherits=wood,default
/// Directories=stereo,5.1
///
/// [stereo]
/// OutputProfile=stereo
///
/// [5.1]
/// OutputProfile=5.1
/// ```
///
/// Lists are comma-separated; whitespace separates too, as in the specification's own
/// example (`Directories=stereo 5.1`), since theme and directory names hold neither.
/// Names that are not safe relative paths (`..`, absolute paths) are dropped.
struct SoundThemeIndex: Sendable, Equatable {
    /// The file's name in a theme directory.
    static let fileName = "index.theme"
    /// The group that makes a file a theme index.
    static let themeGroup = "Sound Theme"
    /// The output profile sounds are looked up for first.
    static let preferredProfile = "stereo"

    /// One sound directory of the theme.
    struct Directory: Sendable, Equatable {
        /// The path relative to the theme directory, such as `stereo` or `stereo/alerts`.
        var path: String
        /// The directory's `OutputProfile`, such as `stereo` or `5.1`, if it has one.
        var outputProfile: String?
    }

    /// The `Inherits` themes, in order.
    var inherits: [String]
    /// The `Directories`, in the order listed.
    var directories: [Directory]

    /// The directory paths in lookup order: those for the `stereo` profile (or with no
    /// profile, so for any output) first, then the others, each group in listed order.
    var preferredDirectories: [String] {
        let (preferred, others) = directories.reduce(into: ([String](), [String]())) { groups, directory in
            if (directory.outputProfile ?? Self.preferredProfile) == Self.preferredProfile {
                groups.0.append(directory.path)
            } else {
                groups.1.append(directory.path)
            }
        }
        return preferred + others
    }

    /// Reads an `index.theme`; `nil` if the file is unreadable or has no `[Sound Theme]`.
    init?(contentsOfFile path: String) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        self.init(parsing: text)
    }

    /// Parses the text of an `index.theme`; `nil` if it has no `[Sound Theme]` group.
    init?(parsing text: String) {
        let groups = Self.groups(in: text)
        guard let theme = groups[Self.themeGroup] else { return nil }
        inherits = Self.list(theme["Inherits"]).filter(SoundTheme.isValidName)
        directories = SoundTheme.unique(Self.list(theme["Directories"]))
            .filter(SoundTheme.isSafeRelativePath)
            .map { Directory(path: $0, outputProfile: groups[$0]?["OutputProfile"]) }
    }

    /// The items of a comma- (or whitespace-) separated list.
    private static func list(_ value: String?) -> [String] {
        (value ?? "").split { $0 == "," || $0.isWhitespace }.map(String.init)
    }

    /// The `[group]`s of an ini file and their `key=value` entries, keys and values trimmed.
    /// Blank lines, `#` comments and lines outside a group are skipped; the first of a
    /// repeated group or key wins.
    private static func groups(in text: String) -> [String: [String: String]] {
        var groups: [String: [String: String]] = [:]
        var current: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                let group = String(line.dropFirst().dropLast())
                current = groups[group] == nil ? group : nil
                if let current { groups[current] = [:] }
            } else if let current, let equals = line.firstIndex(of: "=") {
                let key = line[..<equals].trimmingWhitespace()
                let value = line[line.index(after: equals)...].trimmingWhitespace()
                if groups[current]?[key] == nil { groups[current]?[key] = value }
            }
        }
        return groups
    }
}
