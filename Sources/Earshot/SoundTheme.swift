// Sound themes: the XDG Sound Theme Specification and the Sound Naming Specification
// (freedesktop.org), which turn an event name such as "bell" or "message-new-instant"
// into a sound file.

public import FoundationEssentials

/// Finds sound files by freedesktop event name.
///
/// A sound theme maps a sound name from the freedesktop Sound Naming Specification
/// (`bell`, `message-new-instant`, `complete`, `dialog-warning`, …) to a file, following
/// the XDG Sound Theme Specification:
///
/// - Themes live in `<base>/<theme>/` for each of the ``searchPaths``; a theme may be
///   spread over several base directories, and earlier ones (the user's) override later
///   ones (the system's). The first `index.theme` found describes the theme: its
///   `Inherits` list and its sound `Directories`, each with an `OutputProfile`.
/// - The lookup tries the theme, then its parents depth-first in `Inherits` order (each
///   theme once, so cycles end), and finally `freedesktop`. If `freedesktop` has no
///   `index.theme`, its `stereo` directory is still searched. Unthemed sounds in a base
///   directory itself (`<base>/<name>.<ext>`) come last.
/// - Within a theme, localized sounds (`<subdir>/<locale>/<name>.<ext>`) come before
///   plain ones, directories with the `stereo` output profile before the others, and
///   each directory is searched in every base directory before the next directory.
/// - In each directory the extensions are tried in the order `.disabled`, `.oga`, `.ogg`,
///   `.wav`. A `.disabled` file means the theme turns the sound off: the lookup stops
///   with ``SoundThemeError/disabled(name:theme:)``.
/// - If the whole chain has no file for the name, its last `-component` is dropped and
///   the lookup starts over: `dialog-warning-serious`, then `dialog-warning`, then
///   `dialog`.
///
/// Each call to ``file(for:)`` reads the file system afresh, so newly installed themes
/// and sounds are seen without making a new value.
///
/// ```swift
/// let path = try SoundTheme().file(for: "bell")
/// // "/usr/share/sounds/freedesktop/stereo/bell.oga"
/// ```
public struct SoundTheme: Sendable {
    /// The theme's internal name: the name of its directory, such as `freedesktop`.
    public let name: String

    /// The locale whose sounds are preferred, such as `de_DE.UTF-8`; `nil` for none.
    public let locale: String?

    /// The base directories searched, in order: `$XDG_DATA_HOME/sounds` (by default
    /// `~/.local/share/sounds`, using `HOME`), then each `$XDG_DATA_DIRS` entry with
    /// `/sounds` appended (by default `/usr/local/share` and `/usr/share`).
    ///
    /// Relative entries are ignored, as the XDG Base Directory Specification asks.
    /// Applications may add their own directories.
    public var searchPaths: [String]

    /// Makes a theme lookup.
    ///
    /// - Parameters:
    ///   - name: The theme's internal name. Whatever it is, `freedesktop` is searched
    ///     last. A name that is not a single path component is never looked up.
    ///   - environment: Where `HOME`, `XDG_DATA_HOME`, `XDG_DATA_DIRS` and the locale
    ///     variables come from.
    ///   - locale: The locale for localized sounds; when `nil`, the first non-empty of
    ///     `LC_ALL`, `LC_MESSAGES` and `LANG` in `environment`.
    public init(
        name: String = "freedesktop",
        environment: [String: String] = ProcessInfo.processInfo.environment,
        locale: String? = nil
    ) {
        self.name = name
        self.locale = locale ?? Self.messagesLocale(in: environment)
        self.searchPaths = Self.baseDirectories(in: environment)
    }

    /// The file for a sound name.
    ///
    /// - Parameter soundName: A sound name such as `bell` or `dialog-warning`.
    /// - Returns: The path of the sound file.
    /// - Throws: ``SoundThemeError/invalidName(_:)`` for a name that is empty or holds
    ///   `/`, `..`, whitespace or control characters; ``SoundThemeError/disabled(name:theme:)``
    ///   when a theme turns the sound off with a `.disabled` file;
    ///   ``SoundThemeError/notFound(name:themes:searched:)``, listing the themes and base
    ///   directories searched, when nothing matches.
    public func file(for soundName: String) throws(SoundThemeError) -> String {
        guard Self.isValidName(soundName) else { throw .invalidName(soundName) }
        let chain = themeChain()
        let locales = Self.localeVariants(of: locale)
        for candidate in Self.fallbackNames(for: soundName) {
            if let path = try themedFile(named: candidate, in: chain, locales: locales) ?? unthemedFile(named: candidate) {
                return path
            }
        }
        throw .notFound(name: soundName, themes: chain.map(\.name), searched: searchPaths)
    }
}

// MARK: - Lookup

extension SoundTheme {
    /// The theme every chain ends with.
    static let fallbackThemeName = "freedesktop"
    /// The directory searched in the fallback theme when it has no `index.theme`.
    static let fallbackDirectory = "stereo"
    /// The extension of a file that turns a sound off.
    static let disabledExtension = ".disabled"
    /// Sound file extensions, most preferred first.
    static let soundExtensions = [".oga", ".ogg", ".wav"]
    /// What is looked for in a theme directory: a `.disabled` file, then the sounds.
    static let themedExtensions = [disabledExtension] + soundExtensions

    /// The first file for `name` in a theme of `chain`, in chain order.
    private func themedFile(named name: String, in chain: [Theme], locales: [String]) throws(SoundThemeError) -> String? {
        for theme in chain {
            let directories = theme.directories(locales: locales)
            guard let path = Self.firstFile(named: name, extensions: Self.themedExtensions, in: directories) else {
                continue
            }
            if path.hasSuffix(Self.disabledExtension) { throw .disabled(name: name, theme: theme.name) }
            return path
        }
        return nil
    }

    /// The first unthemed file for `name`, `<base>/<name>.<ext>`. A `.disabled` file is a
    /// theme's statement, so it means nothing here.
    private func unthemedFile(named name: String) -> String? {
        Self.firstFile(named: name, extensions: Self.soundExtensions, in: searchPaths)
    }

    /// The first existing `<directory>/<name><extension>`, directories outermost.
    static func firstFile(named name: String, extensions: [String], in directories: [String]) -> String? {
        for directory in directories {
            for fileExtension in extensions {
                let path = joined(directory, name + fileExtension)
                if exists(path, asDirectory: false) { return path }
            }
        }
        return nil
    }

    /// The name, then the name without its last `-component`, and so on:
    /// `dialog-warning-serious`, `dialog-warning`, `dialog`.
    static func fallbackNames(for name: String) -> [String] {
        var names = [name]
        var rest = Substring(name)
        while let dash = rest.lastIndex(of: "-") {
            rest = rest[..<dash]
            if !rest.isEmpty { names.append(String(rest)) }
        }
        return names
    }
}

// MARK: - Themes

extension SoundTheme {
    /// One theme of the inheritance chain, as found in the base directories.
    struct Theme: Sendable, Equatable {
        /// The theme's internal name.
        var name: String
        /// `<base>/<name>` for each base directory that has the theme, in search order.
        var roots: [String]
        /// The theme's sound directories, most preferred first.
        var subdirectories: [String]
        /// The themes it inherits from, in order.
        var parents: [String]

        /// The directories to search, most preferred first: for each locale variant and
        /// then without a locale, each sound directory in each root.
        func directories(locales: [String]) -> [String] {
            (locales.map(Optional.some) + [nil]).flatMap { locale in
                subdirectories.flatMap { subdirectory in
                    roots.map { root in SoundTheme.joined(root, subdirectory, locale) }
                }
            }
        }
    }

    /// The theme, its ancestors depth-first in `Inherits` order, each once, then
    /// `freedesktop` unless already visited. Names that are not safe path components are
    /// skipped.
    func themeChain() -> [Theme] {
        var visited: Set<String> = []
        var chain: [Theme] = []
        func visit(_ themeName: String) {
            guard Self.isValidName(themeName), visited.insert(themeName).inserted else { return }
            let theme = loadTheme(named: themeName)
            chain.append(theme)
            theme.parents.forEach(visit)
        }
        visit(name)
        visit(Self.fallbackThemeName)
        return chain
    }

    /// The theme's directories, described by the first readable `index.theme` in them.
    func loadTheme(named themeName: String) -> Theme {
        let roots = searchPaths.map { Self.joined($0, themeName) }.filter { Self.exists($0, asDirectory: true) }
        let index = roots.lazy.compactMap { SoundThemeIndex(contentsOfFile: Self.joined($0, SoundThemeIndex.fileName)) }.first
        let defaultSubdirectories = themeName == Self.fallbackThemeName ? [Self.fallbackDirectory] : []
        return Theme(
            name: themeName,
            roots: roots,
            subdirectories: index?.preferredDirectories ?? defaultSubdirectories,
            parents: index?.inherits ?? []
        )
    }
}

// MARK: - Environment

extension SoundTheme {
    /// `$XDG_DATA_HOME/sounds` then each `$XDG_DATA_DIRS` entry's `sounds`, with the XDG
    /// defaults for unset, empty or relative values, without duplicates.
    static func baseDirectories(in environment: [String: String]) -> [String] {
        let dataHome = absolutePath(environment["XDG_DATA_HOME"])
            ?? absolutePath(environment["HOME"]).map { joined($0, ".local/share") }
        let dataDirs = (environment["XDG_DATA_DIRS"] ?? "")
            .split(separator: ":")
            .compactMap { absolutePath(String($0)) }
        let dataDirectories = [dataHome].compactMap { $0 } + (dataDirs.isEmpty ? ["/usr/local/share", "/usr/share"] : dataDirs)
        return unique(dataDirectories.map { joined($0, "sounds") })
    }

    /// The locale for messages: the first non-empty of `LC_ALL`, `LC_MESSAGES`, `LANG`.
    static func messagesLocale(in environment: [String: String]) -> String? {
        ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
    }

    /// The locale subdirectories to try for `ll_CC.encoding@modifier`, most specific
    /// first: `ll_CC.encoding@modifier`, `ll_CC@modifier`, `ll_CC`, `ll.encoding`, `ll`
    /// (the forms the locale has, without duplicates). None for `C` and `POSIX`, whose
    /// sounds are the unlocalized ones.
    static func localeVariants(of locale: String?) -> [String] {
        guard let locale else { return [] }
        let (beforeModifier, modifier) = split(Substring(locale), at: "@")
        let (beforeEncoding, encoding) = split(beforeModifier, at: ".")
        let (languageCode, country) = split(beforeEncoding, at: "_")
        let language = String(languageCode)
        guard !language.isEmpty, language != "C", language != "POSIX" else { return [] }
        let territory = country.map { "_\($0)" } ?? ""
        let codeset = encoding.map { ".\($0)" } ?? ""
        let variant = modifier.map { "@\($0)" } ?? ""
        let variants = [
            language + territory + codeset + variant,
            language + territory + variant,
            country == nil ? nil : language + territory,
            language + codeset,
            language,
        ]
        return unique(variants.compactMap { $0 }).filter(isValidName)
    }

    /// The part before the first `separator` and, if there is one, the part after it.
    private static func split(_ text: Substring, at separator: Character) -> (Substring, Substring?) {
        guard let index = text.firstIndex(of: separator) else { return (text, nil) }
        return (text[..<index], text[text.index(after: index)...])
    }
}

// MARK: - Paths

extension SoundTheme {
    /// Whether `name` is safe as one path component: not empty, not `.`, and without `/`,
    /// `..`, whitespace or control characters (NUL among them).
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && !name.contains("/") && !name.contains("..")
            && !name.unicodeScalars.contains { $0.properties.isWhitespace || $0.properties.generalCategory == .control }
    }

    /// Whether `path` is a relative path of valid names, such as `stereo/alerts`.
    static func isSafeRelativePath(_ path: String) -> Bool {
        path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { isValidName(String($0)) }
    }

    /// `base`, without trailing slashes, joined to each non-`nil` part with `/`.
    static func joined(_ base: String, _ parts: String?...) -> String {
        var trimmed = Substring(base)
        while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        // Appended one by one rather than `joined(separator:)`: that generic resolves its
        // element type at run time, a scan of every protocol conformance in the static binary
        // (about 0.2 ms of `earshot sound NAME`'s start; perf record).
        var path = String(trimmed)
        for part in parts { if let part { path += "/" + part } }
        return path
    }

    /// `path` without trailing slashes if it is absolute; `nil` otherwise.
    private static func absolutePath(_ path: String?) -> String? {
        guard let path, path.hasPrefix("/") else { return nil }
        let trimmed = joined(path)
        return trimmed.isEmpty ? "/" : trimmed
    }

    /// Whether something exists at `path` and is (or is not) a directory; symbolic links
    /// are followed.
    static func exists(_ path: String, asDirectory: Bool) -> Bool {
        var isDirectory = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory == asDirectory
    }

    /// `items` in order, each once.
    static func unique(_ items: [String]) -> [String] {
        var seen: Set<String> = []
        return items.filter { seen.insert($0).inserted }
    }
}

// MARK: - Errors

/// Why ``SoundTheme/file(for:)`` found no file.
public enum SoundThemeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The sound name is empty or holds `/`, `..`, whitespace or control characters.
    case invalidName(String)
    /// No theme in the chain, and no base directory, has a file for the name or any
    /// shorter form of it.
    ///
    /// - Parameters:
    ///   - name: The sound name asked for.
    ///   - themes: The themes searched, in order.
    ///   - searched: The base directories searched, in order.
    case notFound(name: String, themes: [String], searched: [String])
    /// A theme turns the sound off with a `<name>.disabled` file.
    ///
    /// - Parameters:
    ///   - name: The name whose `.disabled` file was found: the one asked for, or a
    ///     shorter form of it.
    ///   - theme: The theme that holds the file.
    case disabled(name: String, theme: String)

    /// A sentence naming the sound and the reason.
    public var description: String {
        switch self {
        case .invalidName(let name):
            "\(Self.quoted(name)) is not a valid sound name: it must be non-empty, without “/”, “..”, spaces or control characters"
        case .notFound(let name, let themes, let searched):
            "no sound named \(Self.namesTried(for: name)) in themes \(Self.list(themes)) (searched \(Self.list(searched)))"
        case .disabled(let name, let theme):
            "sound \(Self.quoted(name)) is disabled in theme \(theme) by a \(Self.quoted(name + SoundTheme.disabledExtension)) file"
        }
    }

    /// `“dialog-warning-serious” (nor “dialog-warning”, “dialog”)`, or `“bell”`.
    private static func namesTried(for name: String) -> String {
        let names = SoundTheme.fallbackNames(for: name).map(quoted)
        guard names.count > 1 else { return names[0] }
        return "\(names[0]) (nor \(names.dropFirst().joined(separator: ", ")))"
    }

    private static func list(_ items: [String]) -> String {
        items.isEmpty ? "none" : items.joined(separator: ", ")
    }

    /// The text in curly quotes, with control characters escaped.
    private static func quoted(_ text: String) -> String {
        "“" + text.unicodeScalars.map { $0.escaped(asASCII: false) }.joined() + "”"
    }
}
