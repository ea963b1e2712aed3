import Foundation
import OtherApps
import Testing

/// The state file that lets the next arbiter restore other apps' streams a killed one
/// ducked: written atomically, read back the same, and anything else is an error naming
/// the file and the reason.
@Suite("The arbiter's state file of ducked streams and paused players")
struct OtherAppsStateFileTests {
    final class Directory {
        /// Stands for `$XDG_RUNTIME_DIR`, which exists; `earshot/` in it does not yet.
        let path = NSTemporaryDirectory() + "earshot-state-\(UUID().uuidString)"
        init() { try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        var file: OtherAppsStateFile { OtherAppsStateFile(path: path + "/earshot/arbiter-state.json") }
        deinit { try? FileManager.default.removeItem(atPath: path) }

        func write(_ text: String) throws {
            try FileManager.default.createDirectory(atPath: path + "/earshot", withIntermediateDirectories: true)
            try text.write(toFile: file.path, atomically: false, encoding: .utf8)
        }
    }

    static let stream = OtherAppsStateFile.Stream(index: 7, pid: 1234, original: [41000, 40000],
                                                      set: [[37838, 36915], [27447, 26777]])

    @Test("a written file reads back the same; writing none removes it; no file reads as none")
    func roundTrip() throws {
        let directory = Directory()
        #expect(try directory.file.read().isEmpty)
        let contents = OtherAppsStateFile.Contents(streams: [Self.stream], players: [.init(player: ":1.50", pausedBy: ":1.10")])
        try directory.file.write(contents)
        #expect(try directory.file.read() == contents)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/earshot")
        #expect(leftovers == ["arbiter-state.json"], "a temporary file was left: \(leftovers)")
        try directory.file.write(OtherAppsStateFile.Contents())
        #expect(!FileManager.default.fileExists(atPath: directory.file.path))
    }

    @Test("a truncated file is an error naming the file; it is not read")
    func truncated() throws {
        let directory = Directory()
        try directory.write("{\"version\": 1, \"streams\": [{\"index\": 3")
        #expect {
            try directory.file.read()
        } throws: { error in
            "\(error)".contains(directory.file.path) && "\(error)".contains("not the expected JSON")
        }
    }

    @Test("an oversized file is an error naming its size")
    func oversized() throws {
        let directory = Directory()
        try directory.write(String(repeating: " ", count: OtherAppsStateFile.maximumSize + 1))
        #expect {
            try directory.file.read()
        } throws: { error in
            "\(error)".contains(directory.file.path) && "\(error)".contains("\(OtherAppsStateFile.maximumSize + 1) bytes")
        }
    }

    @Test("values out of range are errors naming the reason", arguments: [
        (#"{"version": 2, "streams": []}"#, "version 2"),
        (#"{"version": 1, "streams": [{"index": 1, "pid": 0, "original": [1], "set": []}]}"#, "process 0"),
        (#"{"version": 1, "streams": [{"index": 1, "pid": 5, "original": [], "set": []}]}"#, "0 channels"),
        (#"{"version": 1, "streams": [{"index": 1, "pid": 5, "original": [1, 2], "set": [[1]]}]}"#, "channel counts differ"),
        (#"{"version": 1, "streams": [{"index": 1, "pid": 5, "original": [4294967295], "set": []}]}"#, "out of range"),
        (#"{"version": 1, "streams": [{"index": 1, "pid": 5, "original": [1], "set": []}, {"index": 1, "pid": 6, "original": [1], "set": []}]}"#, "listed twice"),
        (#"{"version": 1, "streams": [], "players": [{"player": "org.mpris.MediaPlayer2.mpv", "pausedBy": ":1.10"}]}"#, "not a unique bus name"),
    ])
    func invalid(text: String, reason: String) throws {
        let directory = Directory()
        try directory.write(text)
        #expect {
            try directory.file.read()
        } throws: { error in
            "\(error)".contains(directory.file.path) && "\(error)".contains(reason)
        }
    }
}
