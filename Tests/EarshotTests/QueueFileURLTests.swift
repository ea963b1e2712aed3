import Earshot
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

extension QueuePlayerTests {
/// `AddTrack`/`OpenUri` with a `file://` URI whose path is not UTF-8 (`%E9`, a Latin-1
/// name): the file is found by its bytes, as `earshot play` finds such an argument.
///
/// Nested in ``QueuePlayerTests`` (the in-process audio pass): adding an item prepares a
/// player on the engine, which needs the shared test sound server.
@Suite("QueuePlayer: file URIs by their bytes")
struct FileURLs {
    /// A copy of a short sine under the name `caf\xE9.wav` (not UTF-8) in a folder of its
    /// own; returns the folder and the file's URI.
    func latin1Copy() throws -> (folder: String, uri: String) {
        let source = try Data(contentsOf: URL(fileURLWithPath: try TestSignals.sine(frequency: 440, duration: 2)))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-latin1-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let bytes = Array(folder.utf8) + Array("/caf".utf8) + [0xE9] + Array(".wav".utf8) + [0]
        let fd = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { open($0, O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        }
        guard fd >= 0 else { throw TestFailure("cannot create the Latin-1 file in \(folder): errno \(errno)") }
        defer { close(fd) }
        let written = source.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == source.count else { throw TestFailure("short write of the Latin-1 file") }
        let encodedFolder = folder.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)!
        return (folder, "file://\(encodedFolder)/caf%E9.wav")
    }

    @Test("a URI naming a file whose name is not UTF-8 adds it, titled with U+FFFD; removing it closes what held it")
    func latin1Name() async throws {
        try await withSharedAudio(idleTimeout: 0) { _ in
            let (folder, uri) = try latin1Copy()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let queue = try QueuePlayer(urls: [URL(fileURLWithPath: try TestSignals.sine(frequency: 300, duration: 2))])
            #expect(queue.addTrack(uri: uri, after: "\(queue.items[0].id)", setAsCurrent: false) == .success)
            try #require(queue.items.count == 2)
            let added = queue.items[1]
            #expect(added.title == "caf\u{FFFD}")
            #expect(abs(added.duration - 2) < 0.01, "the file's own duration, read through its bytes")
            let held = added.url.path
            #expect(((try? FileManager.default.destinationOfSymbolicLink(atPath: held)) ?? "").hasPrefix(folder))
            #expect(queue.goTo("\(added.id)") == .success, "it loads")
            #expect(queue.removeTrack("\(added.id)") == .success)
            // The number may already be reused by another open: it must no longer lead to the file.
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: held)) ?? ""
            #expect(!target.hasPrefix(folder), "the descriptor \(held) is closed with the item gone (it leads to \(target))")
        }
    }

    @Test("a URI whose bytes name no file, or hold a NUL, adds nothing")
    func missing() async throws {
        try await withSharedAudio(idleTimeout: 0) { _ in
            let (folder, uri) = try latin1Copy()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let queue = try QueuePlayer(urls: [URL(fileURLWithPath: try TestSignals.sine(frequency: 300, duration: 2))])
            #expect(queue.addTrack(uri: uri.replacingOccurrences(of: "%E9", with: "%FF"), after: nil, setAsCurrent: false) == .noSuchContent)
            #expect(queue.addTrack(uri: uri.replacingOccurrences(of: "%E9", with: "%E9%00"), after: nil, setAsCurrent: false) == .noSuchContent)
            #expect(queue.addTrack(uri: uri.replacingOccurrences(of: "%E9", with: "%E"), after: nil, setAsCurrent: false) == .noSuchContent)
            #expect(queue.items.count == 1)
        }
    }
}
}
