import Foundation
import Testing
import TestSupport

/// README.md's Swift blocks are compiled code: each is part of a file in `Examples/` (the
/// `earshot-examples` target, which the test build compiles), and a package manifest shown
/// in the README is one that SwiftPM parses.
@Suite("README snippets")
struct ReadmeSnippetTests {
    static let readme = (try? String(contentsOfFile: Paths.packageRoot + "/README.md", encoding: .utf8)) ?? ""

    /// The README's fenced Swift blocks, each as its lines.
    static var blocks: [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in readme.components(separatedBy: "\n") {
            if current == nil, line.hasPrefix("```swift") {
                current = []
            } else if current != nil, line.hasPrefix("```") {
                blocks.append(current!)
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    static func trimmed(_ lines: [String]) -> [String] {
        lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    @Test("the README has Swift blocks to check")
    func found() {
        #expect(Self.blocks.count >= 4, "README.md at \(Paths.packageRoot) has \(Self.blocks.count) Swift blocks")
    }

    @Test("every Swift block is compiled in Examples/ (indentation and blank lines aside)")
    func compiled() throws {
        let directory = Paths.packageRoot + "/Examples"
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".swift") }
        let sources = try files.map { Self.trimmed(try String(contentsOfFile: "\(directory)/\($0)", encoding: .utf8).components(separatedBy: "\n")) }
        for block in Self.blocks where !(block.first ?? "").hasPrefix("// swift-tools-version") {
            let lines = Self.trimmed(block)
            // `import` lines sit at the top of the example's file; the rest runs in order.
            let imports = lines.filter { $0.hasPrefix("import ") }
            let body = lines.filter { !$0.hasPrefix("import ") }
            let found = sources.contains { source in
                imports.allSatisfy(source.contains) && (0...max(0, source.count - body.count)).contains { start in
                    source.count >= body.count && Array(source[start..<start + body.count]) == body
                }
            }
            #expect(found, "this README block is in no file of Examples/:\n\(block.joined(separator: "\n"))")
        }
    }

    @Test("a package manifest in the README is one SwiftPM parses")
    func manifest() async throws {
        let manifests = Self.blocks.filter { ($0.first ?? "").hasPrefix("// swift-tools-version") }
        #expect(!manifests.isEmpty, "the README shows how to depend on Earshot")
        for manifest in manifests {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-readme-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            try manifest.joined(separator: "\n").write(to: directory.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
            let result = try await run("/usr/bin/env", ["swift", "package", "--package-path", directory.path, "dump-package"], timeout: 120)
            #expect(result.status == 0, "swift package dump-package: \(result.stderr)")
            #expect(result.stdout.contains("\"Earshot\""), "the manifest depends on the Earshot product")
        }
    }
}
