import Earshot
import Foundation
import Testing

/// A throwaway tree of sound base directories under a temporary root: `user`
/// (`$XDG_DATA_HOME/sounds`) and `system` (the one `$XDG_DATA_DIRS` entry's `sounds`).
private final class SoundTree {
    let root: String

    init() throws {
        root = NSTemporaryDirectory() + "SoundThemeTests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// The user's base directory.
    var user: String { root + "/home/sounds" }
    /// The system's base directory.
    var system: String { root + "/system/sounds" }

    /// An environment pointing the XDG variables at the tree.
    var environment: [String: String] {
        ["HOME": root + "/nobody", "XDG_DATA_HOME": root + "/home", "XDG_DATA_DIRS": root + "/system"]
    }

    /// A lookup of `theme` in the tree.
    func theme(_ name: String = "freedesktop", locale: String? = nil) -> SoundTheme {
        SoundTheme(name: name, environment: environment, locale: locale)
    }

    /// Creates `path` (absolute, in the tree) with `contents` and its directories; returns `path`.
    @discardableResult
    func file(_ path: String, _ contents: String = "") throws -> String {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Writes `<base>/<name>/index.theme` with the given `Inherits` and `Directories`
    /// (each a path and an optional `OutputProfile`).
    func index(
        _ name: String, in base: String, inherits: [String] = [],
        directories: [(String, String?)] = [("stereo", "stereo")]
    ) throws {
        var text = "[Sound Theme]\nName=\(name.capitalized)\nComment=A test theme\n"
        if !inherits.isEmpty { text += "Inherits=\(inherits.joined(separator: ","))\n" }
        text += "Directories=\(directories.map(\.0).joined(separator: ","))\n"
        for (path, profile) in directories {
            text += "\n[\(path)]\n" + (profile.map { "OutputProfile=\($0)\n" } ?? "")
        }
        try file("\(base)/\(name)/index.theme", text)
    }

    func remove(_ path: String) throws { try FileManager.default.removeItem(atPath: path) }
}

@Suite("SoundTheme")
struct SoundThemeTests {
    @Test("search paths: XDG_DATA_HOME then XDG_DATA_DIRS, with the XDG defaults")
    func searchPaths() {
        #expect(SoundTheme(environment: ["HOME": "/home/u"]).searchPaths
            == ["/home/u/.local/share/sounds", "/usr/local/share/sounds", "/usr/share/sounds"])
        let set = ["HOME": "/home/u", "XDG_DATA_HOME": "/d/home/", "XDG_DATA_DIRS": "/a:relative::/b/:/a"]
        #expect(SoundTheme(environment: set).searchPaths == ["/d/home/sounds", "/a/sounds", "/b/sounds"],
                "trailing slashes trimmed, relative and empty entries ignored, duplicates dropped")
        let relative = ["XDG_DATA_HOME": "rel", "XDG_DATA_DIRS": "also/relative"]
        #expect(SoundTheme(environment: relative).searchPaths == ["/usr/local/share/sounds", "/usr/share/sounds"],
                "no HOME and only relative values: the system defaults alone")
    }

    @Test("the user's files and index.theme override the system's; a theme may span base directories")
    func userOverridesSystem() throws {
        let tree = try SoundTree()
        try tree.index("freedesktop", in: tree.system)
        let systemBell = try tree.file("\(tree.system)/freedesktop/stereo/bell.oga")
        let systemOnly = try tree.file("\(tree.system)/freedesktop/stereo/complete.oga")
        let userBell = try tree.file("\(tree.user)/freedesktop/stereo/bell.oga")
        #expect(try tree.theme().file(for: "bell") == userBell, "the user's copy wins")
        #expect(try tree.theme().file(for: "complete") == systemOnly, "the system's part of the same theme still counts")
        try tree.remove(userBell)
        #expect(try tree.theme().file(for: "bell") == systemBell)

        // The first index.theme found describes the theme: the user's adds a directory.
        try tree.index("freedesktop", in: tree.user, directories: [("extra", nil), ("stereo", "stereo")])
        let extra = try tree.file("\(tree.system)/freedesktop/extra/bell.wav")
        #expect(try tree.theme().file(for: "bell") == extra)
    }

    @Test("Inherits is followed depth-first in order, each theme once despite cycles, then freedesktop")
    func inheritanceChain() throws {
        let tree = try SoundTree()
        try tree.index("a", in: tree.system, inherits: ["b", "c"])
        try tree.index("b", in: tree.system, inherits: ["a", "d"])   // a cycle back to a
        try tree.index("c", in: tree.system, inherits: ["b"])
        try tree.index("d", in: tree.user, inherits: ["c", "freedesktop-less"])
        try tree.file("\(tree.system)/c/stereo/shared.oga")
        let inD = try tree.file("\(tree.system)/d/stereo/shared.oga")   // d spans both bases
        let inC = try tree.file("\(tree.system)/c/stereo/only-c.oga")
        let inFreedesktop = try tree.file("\(tree.system)/freedesktop/stereo/bell.oga") // no index.theme

        let theme = tree.theme("a")
        #expect(try theme.file(for: "shared") == inD, "a → b → d comes before a → c")
        #expect(try theme.file(for: "only-c") == inC)
        #expect(try theme.file(for: "bell") == inFreedesktop, "freedesktop without index.theme: its stereo directory")
        #expect(throws: SoundThemeError.notFound(
            name: "nothing", themes: ["a", "b", "d", "c", "freedesktop-less", "freedesktop"],
            searched: [tree.user, tree.system]
        )) { try theme.file(for: "nothing") }
    }

    @Test("an unknown theme still falls back to freedesktop, then to unthemed sounds")
    func fallbacks() throws {
        let tree = try SoundTree()
        try tree.index("freedesktop", in: tree.system)
        let themed = try tree.file("\(tree.system)/freedesktop/stereo/bell.oga")
        try tree.file("\(tree.user)/bell.oga")
        let unthemed = try tree.file("\(tree.system)/beep.wav")
        let theme = tree.theme("no-such-theme")
        #expect(try theme.file(for: "bell") == themed, "a theme beats an unthemed file, even the user's")
        #expect(try theme.file(for: "beep") == unthemed)
        let traversal = tree.theme("../system/sounds/freedesktop")
        #expect(throws: SoundThemeError.notFound(name: "x", themes: ["freedesktop"], searched: [tree.user, tree.system]),
                "a theme name that is not one path component is not looked up") { try traversal.file(for: "x") }
    }

    @Test("stereo output-profile directories come before others, in listed order")
    func outputProfiles() throws {
        let tree = try SoundTree()
        try tree.index("t", in: tree.system, directories: [("5.1", "5.1"), ("plain", nil), ("stereo", "stereo")])
        let surround = try tree.file("\(tree.system)/t/5.1/bell.oga")
        let plain = try tree.file("\(tree.system)/t/plain/bell.oga")
        let stereo = try tree.file("\(tree.system)/t/stereo/bell.oga")
        #expect(try tree.theme("t").file(for: "bell") == plain, "no profile ranks with stereo, in listed order")
        try tree.remove(plain)
        #expect(try tree.theme("t").file(for: "bell") == stereo)
        try tree.remove(stereo)
        #expect(try tree.theme("t").file(for: "bell") == surround, "other profiles still count")
    }

    @Test("locale subdirectories: ll_CC.enc@mod, ll_CC@mod, ll_CC, ll.enc, ll, then none")
    func localeFallbackOrder() throws {
        let tree = try SoundTree()
        try tree.index("freedesktop", in: tree.system)
        let order = ["de_AT.UTF-8@euro", "de_AT@euro", "de_AT", "de.UTF-8", "de"]
        let plain = try tree.file("\(tree.system)/freedesktop/stereo/bell.oga")
        var files = try order.map { try tree.file("\(tree.system)/freedesktop/stereo/\($0)/bell.oga") }
        try tree.file("\(tree.system)/freedesktop/stereo/fr/bell.oga")
        let theme = tree.theme(locale: "de_AT.UTF-8@euro")
        while let best = files.first {
            #expect(try theme.file(for: "bell") == best)
            try tree.remove(best)
            files.removeFirst()
        }
        #expect(try theme.file(for: "bell") == plain)

        // Localized beats unlocalized, even the user's unlocalized override.
        let localized = try tree.file("\(tree.system)/freedesktop/stereo/de/bell.oga")
        try tree.file("\(tree.user)/freedesktop/stereo/bell.oga")
        #expect(try theme.file(for: "bell") == localized)
    }

    @Test("the locale comes from the parameter, else LC_ALL, LC_MESSAGES, LANG; C and POSIX mean none")
    func localeSources() throws {
        let tree = try SoundTree()
        let environment = tree.environment.merging(["LC_ALL": "", "LC_MESSAGES": "fr_FR.UTF-8", "LANG": "de_DE.UTF-8"]) { $1 }
        #expect(SoundTheme(environment: environment).locale == "fr_FR.UTF-8", "an empty LC_ALL is skipped")
        #expect(SoundTheme(environment: environment, locale: "pt_BR").locale == "pt_BR")
        #expect(SoundTheme(environment: [:]).locale == nil)

        try tree.index("freedesktop", in: tree.system)
        let plain = try tree.file("\(tree.system)/freedesktop/stereo/bell.oga")
        try tree.file("\(tree.system)/freedesktop/stereo/C/bell.oga")
        try tree.file("\(tree.system)/freedesktop/stereo/POSIX/bell.oga")
        let french = try tree.file("\(tree.system)/freedesktop/stereo/fr/bell.oga")
        #expect(try SoundTheme(environment: environment).file(for: "bell") == french)
        for locale in ["C", "C.UTF-8", "POSIX"] {
            #expect(try tree.theme(locale: locale).file(for: "bell") == plain, "\(locale) uses the plain directory")
        }
    }

    @Test("extensions are tried in the order .disabled, .oga, .ogg, .wav")
    func extensionOrder() throws {
        let tree = try SoundTree()
        try tree.index("freedesktop", in: tree.system)
        let directory = "\(tree.system)/freedesktop/stereo"
        try tree.file("\(directory)/bell.mp3")
        try tree.file("\(directory)/bell")
        let ordered = try [".oga", ".ogg", ".wav"].map { try tree.file("\(directory)/bell\($0)") }
        for path in ordered {
            #expect(try tree.theme().file(for: "bell") == path)
            try tree.remove(path)
        }
        #expect(throws: SoundThemeError.self, "neither extensionless nor .mp3 files count") { try tree.theme().file(for: "bell") }
    }

    @Test(".disabled turns a sound off, overriding later extensions, bases and parent themes")
    func disabled() throws {
        let tree = try SoundTree()
        try tree.index("mine", in: tree.user, inherits: ["freedesktop"])
        try tree.index("freedesktop", in: tree.system)
        try tree.file("\(tree.system)/freedesktop/stereo/bell.oga")
        try tree.file("\(tree.system)/freedesktop/stereo/complete.oga")
        try tree.file("\(tree.user)/mine/stereo/bell.oga")
        try tree.file("\(tree.user)/mine/stereo/bell.disabled")
        try tree.file("\(tree.user)/freedesktop/stereo/complete.disabled")

        #expect(throws: SoundThemeError.disabled(name: "bell", theme: "mine")) { try tree.theme("mine").file(for: "bell") }
        #expect(throws: SoundThemeError.disabled(name: "complete", theme: "freedesktop")) {
            try tree.theme("mine").file(for: "complete")
        }
        let error = SoundThemeError.disabled(name: "bell", theme: "mine")
        #expect(error.description == "sound “bell” is disabled in theme mine by a “bell.disabled” file")

        try tree.file("\(tree.system)/beep.disabled")
        #expect(throws: SoundThemeError.notFound(name: "beep", themes: ["mine", "freedesktop"], searched: [tree.user, tree.system]),
                "an unthemed .disabled file means nothing") { try tree.theme("mine").file(for: "beep") }
    }

    @Test("name fallback drops the last -component, only once the whole chain lacks the full name")
    func nameComponentFallback() throws {
        let tree = try SoundTree()
        try tree.index("mine", in: tree.system)
        try tree.index("freedesktop", in: tree.system)
        let minePrefix = try tree.file("\(tree.system)/mine/stereo/dialog-warning.oga")
        let fullInParent = try tree.file("\(tree.system)/freedesktop/stereo/dialog-warning-serious.oga")
        let dialog = try tree.file("\(tree.system)/freedesktop/stereo/dialog.oga")
        let theme = tree.theme("mine")
        #expect(try theme.file(for: "dialog-warning-serious") == fullInParent, "the full name anywhere beats a prefix")
        #expect(try theme.file(for: "dialog-warning-serious-extra") == fullInParent)
        #expect(try theme.file(for: "dialog-warning-other") == minePrefix)
        #expect(try theme.file(for: "dialog-information") == dialog)

        let unthemed = try tree.file("\(tree.user)/message-new.wav")
        try tree.file("\(tree.system)/freedesktop/stereo/message.oga")
        #expect(try theme.file(for: "message-new-instant") == unthemed, "an unthemed full(er) name beats a themed prefix")

        let error = #expect(throws: SoundThemeError.self) { try theme.file(for: "x-y") }
        #expect(error == .notFound(name: "x-y", themes: ["mine", "freedesktop"], searched: [tree.user, tree.system]))
    }

    @Test("invalid names are rejected before any file is touched", arguments: [
        "", ".", "..", "../bell", "bell/..", "a/b", "/etc/passwd", "a..b", "a b", " bell",
    ])
    func invalidNames(name: String) throws {
        let tree = try SoundTree()
        try tree.file("\(tree.system)/freedesktop/stereo/a b.oga")
        try tree.file("\(tree.root)/home/bell.oga")   // "../bell" from the user base
        #expect(throws: SoundThemeError.invalidName(name)) { try tree.theme().file(for: name) }
    }

    @Test("names with NUL, newlines, tabs or other control characters are rejected")
    func controlCharacterNames() {
        for name in ["a\u{0}b", "bell\n", "tab\tbed", "bell\u{7F}", "bell\u{85}"] {
            #expect(throws: SoundThemeError.invalidName(name)) { try SoundTheme(environment: [:]).file(for: name) }
        }
    }

    @Test("index.theme entries that would leave the theme directory are ignored")
    func unsafeIndexEntries() throws {
        let tree = try SoundTree()
        try tree.file("\(tree.system)/t/index.theme", """
            # a hostile index
            [Sound Theme]
            Name=T
            Inherits=../escape, /abs ,good
            Directories=../../outside,/tmp,stereo 5.1

            [5.1]
            OutputProfile=5.1
            """)
        try tree.file("\(tree.system)/outside/bell.oga")
        try tree.file("\(tree.system)/escape/stereo/bell.oga")
        let inside = try tree.file("\(tree.system)/t/5.1/bell.oga")
        #expect(try tree.theme("t").file(for: "bell") == inside, "space-separated Directories also parse")
        #expect(throws: SoundThemeError.notFound(name: "x", themes: ["t", "good", "freedesktop"], searched: [tree.user, tree.system])) {
            try tree.theme("t").file(for: "x")
        }
    }

    @Test("not found names the sound, its shorter forms, the themes and the directories")
    func notFoundDescription() {
        let error = SoundThemeError.notFound(name: "dialog-warning-serious", themes: ["mine", "freedesktop"],
                                             searched: ["/home/u/.local/share/sounds", "/usr/share/sounds"])
        #expect(error.description == "no sound named “dialog-warning-serious” (nor “dialog-warning”, “dialog”) "
            + "in themes mine, freedesktop (searched /home/u/.local/share/sounds, /usr/share/sounds)")
        #expect(SoundThemeError.notFound(name: "bell", themes: ["freedesktop"], searched: []).description
            == "no sound named “bell” in themes freedesktop (searched none)")
        #expect(SoundThemeError.invalidName("a\u{0}b").description.hasPrefix("“a\\0b” is not a valid sound name"))
    }

    @Test("the installed freedesktop theme resolves bell, complete and message-new-instant",
          .enabled(if: FileManager.default.fileExists(atPath: "/usr/share/sounds/freedesktop"),
                   "sound-theme-freedesktop is not installed (/usr/share/sounds/freedesktop is absent)"))
    func realSystem() throws {
        let theme = SoundTheme()
        #expect(try theme.file(for: "bell") == "/usr/share/sounds/freedesktop/stereo/bell.oga")
        #expect(try theme.file(for: "complete").hasSuffix("/freedesktop/stereo/complete.oga"))
        #expect(try theme.file(for: "message-new-instant").hasSuffix("/freedesktop/stereo/message-new-instant.oga"))
        #expect(try theme.file(for: "dialog-warning-serious").hasSuffix("/freedesktop/stereo/dialog-warning.oga"))
    }
}
