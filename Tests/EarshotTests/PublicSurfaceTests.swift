import Foundation
import Testing
import TestSupport

/// What an app that imports Earshot can name: the iOS-shaped surface, and not the layers
/// below it; and that all of it is documented. The name checks type-check a small app
/// source with `swiftc -typecheck` against the modules the test build made, with the flags
/// SwiftPM compiled Earshot with (from the build's `description.json`); the documentation
/// check reads the same modules with `swift-symbolgraph-extract`.
@Suite("Public surface")
struct PublicSurfaceTests {
    /// The compiler and the arguments that make the built modules importable.
    struct Compiler {
        let swiftc: String
        let target: String
        let arguments: [String]

        /// The build folder this test binary was built in (so that a build with another
        /// `--scratch-path` checks its own modules), or `.build/debug`.
        static var buildDirectory: String {
            if let binary = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
                let folder = URL(fileURLWithPath: binary).deletingLastPathComponent().path
                if FileManager.default.fileExists(atPath: folder + "/description.json") { return folder }
            }
            return Paths.packageRoot + "/.build/debug"
        }

        static func fromBuild() throws -> Compiler {
            let path = buildDirectory + "/description.json"
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let commands = root["swiftCommands"] as? [String: [String: Any]],
                  let earshot = commands.values.first(where: { $0["moduleName"] as? String == "Earshot" }),
                  let swiftc = earshot["executable"] as? String,
                  let modules = earshot["importPath"] as? String,
                  let other = earshot["otherArguments"] as? [String]
            else { throw TestFailure("\(path) has no swift command for the Earshot module") }
            // The C modules' maps and their headers' include paths (from pkg-config), which
            // loading the built Swift modules needs.
            guard let flag = other.firstIndex(of: "-target"), flag + 1 < other.endIndex else {
                throw TestFailure("\(path): Earshot's swift command has no -target")
            }
            var arguments = ["-I", modules]
            var index = other.startIndex
            while index < other.endIndex {
                // Every clang flag (`-Xcc X`: module maps, and a C target's include folder,
                // given as `-Xcc -I -Xcc PATH`) goes along as it came.
                if other[index] == "-Xcc", index + 1 < other.endIndex {
                    arguments += other[index...index + 1]
                    index += 2
                    continue
                }
                if other[index].hasPrefix("-I") { arguments.append(other[index]) }
                index += 1
            }
            return Compiler(swiftc: swiftc, target: other[flag + 1], arguments: arguments)
        }

        /// Type-checks `source` as one file of an app module.
        func typecheck(_ source: String, name: String) async throws -> CommandResult {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-surface-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent(name).path
            try source.write(toFile: file, atomically: true, encoding: .utf8)
            return try await run(swiftc, ["-typecheck", "-swift-version", "6", "-module-name", "App"] + arguments + [file], timeout: 60)
        }

        /// The public symbols of `module` (its own, as `swift-symbolgraph-extract` lists
        /// them for an importer), each as its JSON object.
        func symbols(of module: String, skippingInheritedDocs: Bool = false) async throws -> [[String: Any]] {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-symbols-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let extract = URL(fileURLWithPath: swiftc).deletingLastPathComponent().appendingPathComponent("swift-symbolgraph-extract").path
            let result = try await run(extract, [
                "-module-name", module, "-target", target, "-output-dir", directory.path, "-minimum-access-level", "public",
            ] + (skippingInheritedDocs ? ["-skip-inherited-docs"] : []) + arguments, timeout: 60)
            guard result.status == 0 else { throw TestFailure("swift-symbolgraph-extract \(module) failed: \(result.stderr.prefix(4000))") }
            var symbols: [[String: Any]] = []
            for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".symbols.json") {
                let graph = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent(file))) as? [String: Any]
                symbols += graph?["symbols"] as? [[String: Any]] ?? []
            }
            return symbols
        }
    }

    /// Names of the layers below that an app importing only Earshot must not see: the bus,
    /// the engine's internals, the policy's generic names, the route monitors.
    static let hiddenNames = [
        "DBusConnection", "DBusMessage", "DBusValue", "ObjectPath",
        "Voice", "AudioEngine", "AudioFile", "SampleRateConverter", "PCMAudio", "FrameSource",
        "Session", "SessionID", "SessionPolicy", "Category", "CategoryOptions", "Mode", "Decision", "Event",
        "RouteMonitor", "InputMonitor", "RouteChange", "RouteChangeReason",
        "Observers", "PlaybackState",
    ]

    @Test("an app that imports Earshot names none of the bus's, the engine's or the policy's own types")
    func hidesLayers() async throws {
        let compiler = try Compiler.fromBuild()
        let source = "import Earshot\n\n" + Self.hiddenNames.map { "let _: \($0).Type? = nil\n" }.joined()
        let result = try await compiler.typecheck(source, name: "Hidden.swift")
        #expect(result.status != 0, "an app importing Earshot compiled while naming \(Self.hiddenNames)")
        let visible = Self.hiddenNames.filter { !result.stderr.contains("cannot find type '\($0)' in scope") }
        #expect(visible.isEmpty, "visible through `import Earshot`: \(visible)\n\(result.stderr.prefix(4000))")
    }

    /// The modules below Earshot, which an app that imports only Earshot does not see.
    static let layersBelow: Set<String> = ["DBus", "AudioEngine", "AudioRoutes", "SessionPolicy", "Arbiter", "MPRIS", "Platform"]

    /// The module a Swift symbol's USR (`s:11AudioEngineAAC11InputChoiceV`) belongs to.
    static func module(ofUSR usr: String) -> String? {
        guard usr.hasPrefix("s:") else { return nil }
        let rest = usr.dropFirst(2)
        let digits = rest.prefix(while: \.isNumber)
        guard let length = Int(digits) else { return nil }
        return String(rest.dropFirst(digits.count).prefix(length))
    }

    @Test("no public declaration of Earshot takes or returns a type that an app importing only Earshot cannot name")
    func signaturesNameOnlyTheSurface() async throws {
        let symbols = try await Compiler.fromBuild().symbols(of: "Earshot")
        // A typealias names the type below on purpose (that is how the surface is made);
        // every other declaration's signature must name types through Earshot's names.
        let leaks = symbols.filter { ($0["kind"] as? [String: Any])?["identifier"] as? String != "swift.typealias" }
            .compactMap { symbol -> String? in
                let fragments = symbol["declarationFragments"] as? [[String: Any]] ?? []
                let leaked = fragments.filter { $0["kind"] as? String == "typeIdentifier" }.compactMap { fragment -> String? in
                    guard let usr = fragment["preciseIdentifier"] as? String, let module = Self.module(ofUSR: usr),
                          Self.layersBelow.contains(module) else { return nil }
                    return "\(fragment["spelling"] as? String ?? "?") (\(module))"
                }
                guard !leaked.isEmpty else { return nil }
                let path = (symbol["pathComponents"] as? [String] ?? []).joined(separator: ".")
                let declaration = fragments.compactMap { $0["spelling"] as? String }.joined()
                return "\(path) names \(leaked.joined(separator: ", ")): \(declaration)"
            }
        #expect(symbols.count > 50, "Earshot lists only \(symbols.count) public symbols")
        #expect(leaks.isEmpty, "\(leaks.count) public declarations name the layers below:\n\(leaks.sorted().joined(separator: "\n"))")
    }

    /// The iOS-shaped surface: every name an app ported from AVFoundation and MediaPlayer
    /// spells, nested as AVFoundation nests it.
    static let surface = """
        import Earshot

        func names(session: AudioSession, queue: QueuePlayer) {
            let _: AudioSession.Category = .playback
            let _: AudioSession.CategoryOptions = [.duckOthers, .mixWithOthers]
            let _: AudioSession.Mode = .spokenAudio
            let _: AudioSession.SetActiveOptions = [.notifyOthersOnDeactivation]
            let _: AudioSession.InterruptionType = .ended(shouldResume: true)
            let _: AudioSession.InterruptionReason = .screenLocked
            let _: AudioSession.SessionID? = AudioSession.InterruptionReason.screenLocked.interrupter
            let _: AudioSession.RouteChangeReason = .oldDeviceUnavailable
            let _: AudioSession.RouteChange? = nil
            let _: AudioSession.Notification = .mediaServicesWereReset
            let _: AudioRoute = session.currentRoute
            let _: [AudioInputPort] = session.availableInputs
            let _: AudioPort.PortType = .headphones
            let _: AudioSessionError? = nil
            let _: DBusError? = nil
            let _: AudioFileError? = nil
            let _: AudioEngineError? = nil
            let _: AudioFileTags? = queue.currentItem?.tags
            let _: AudioPlayer.NetworkStream? = nil
            let _: AudioPlayerDelegate? = nil
            let _: QueuePlayer.Item? = queue.currentItem
            let _: QueuePlayer.TimeControlStatus = queue.timeControlStatus
            let _: AudioRecorder.Settings = AudioRecorder.Settings(numberOfChannels: 1)
            let _: AudioRecorder.Format? = nil
            let _: AudioRecorder.InputChoice = AudioRecorder.InputChoice()
            let _: AudioRecorder.InputKind? = nil
            let _: AudioRecorder.RecordingError? = nil
            let _: AudioRecorderError? = nil
            let _: AudioRecorderDelegate? = nil
            let _: SystemSound.Type = SystemSound.self
            let _: SystemSoundError? = nil
            let _: SoundTheme = SoundTheme()
            let _: RemoteCommandCenter = .shared
            let _: RemoteCommand<ChangePlaybackPositionCommandEvent> = RemoteCommandCenter.shared.changePlaybackPositionCommand
            let _: RemoteCommandHandlerStatus = .success
            let _: [RemoteCommandKind] = [.play, .seek]
            let _: (RemoteCommandEvent, SeekCommandEvent, ChangePlaybackRateCommandEvent)? = nil
            let _: (ChangeRepeatModeCommandEvent, ChangeShuffleModeCommandEvent, ChangeVolumeCommandEvent, OpenURICommandEvent)? = nil
            let _: RemoteCommandTarget? = nil
            let _: NowPlayingInfoCenter = .default
            let _: NowPlayingInfo = NowPlayingInfo(title: "Song A")
            let _: NowPlayingInfoCenter.PlaybackState = .paused
            let _: (RepeatMode, ShuffleMode) = (.all, .items)
            let _: any TrackListSource = queue
            let _: ObservationToken? = nil
            let _: MPRISPlayer.Type = MPRISPlayer.self
            let _: MPRISConfiguration = MPRISConfiguration(appName: "myapp", identity: "My App")
        }
        """

    @Test("an app that imports Earshot names the iOS-shaped surface")
    func namesSurface() async throws {
        let result = try await Compiler.fromBuild().typecheck(Self.surface, name: "Surface.swift")
        #expect(result.status == 0, "\(result.stderr.prefix(4000))")
    }

    @Test("an app that also imports the layers below sees each name once (Earshot's name shadows)")
    func layersAlongside() async throws {
        let source = """
            import Earshot
            import DBus
            import MPRIS
            import AudioEngine
            import AudioRoutes
            import SessionPolicy

            func both(queue: QueuePlayer) -> Bool {
                let info: NowPlayingInfo = NowPlayingInfo(title: "Song A")
                let _: MPRISConfiguration = MPRISConfiguration(appName: "myapp", identity: "My App")
                let _: DBusError? = nil
                let _: AudioFileError? = nil
                let _: AudioRoute = .empty
                let _: any TrackListSource = queue
                let _: Category = AudioSession.shared.category
                let _: DBusConnection.Bus = .session
                let _: Voice? = nil
                return info.title != nil
            }
            """
        let result = try await Compiler.fromBuild().typecheck(source, name: "Both.swift")
        #expect(result.status == 0, "\(result.stderr.prefix(4000))")
    }

    @Test("every public declaration of Earshot and MPRIS has a doc comment of its own", arguments: ["Earshot", "MPRIS"])
    func documented(module: String) async throws {
        let symbols = try await Compiler.fromBuild().symbols(of: module, skippingInheritedDocs: true)
        // Synthesized members (Equatable's ==, an OptionSet's defaults) have no location.
        let missing = symbols.filter { $0["docComment"] == nil && $0["location"] != nil }.map { symbol -> String in
            let kind = (symbol["kind"] as? [String: Any])?["identifier"] as? String ?? "?"
            let path = (symbol["pathComponents"] as? [String] ?? []).joined(separator: ".")
            let location = symbol["location"] as? [String: Any]
            let uri = (location?["uri"] as? String ?? "").components(separatedBy: "/Sources/").last ?? "?"
            let line = ((location?["position"] as? [String: Any])?["line"] as? Int ?? -1) + 1
            return "\(kind) \(path) (\(uri):\(line))"
        }
        #expect(symbols.count > 50, "\(module) lists only \(symbols.count) public symbols")
        #expect(missing.isEmpty, "\(missing.count) public declarations of \(module) without a doc comment:\n\(missing.sorted().joined(separator: "\n"))")
        print("\(module): \(symbols.count) public symbols, \(missing.count) without a doc comment")
    }
}
