import Arbiter
import Foundation
import Testing

@Suite("The arbiter's configuration file")
struct ArbiterConfigurationFileTests {
    @Test(arguments: Arbiter.OthersPolicy.allCases)
    func othersIsRead(mode: Arbiter.OthersPolicy) {
        var configuration = Arbiter.Configuration()
        let problems = configuration.apply("# a comment\n\n  others =  \(mode.rawValue)  # trailing comment\n")
        #expect(configuration.others == mode)
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func badLinesAndUnknownKeysLeaveTheDefaultsAndAreSaidByLine() {
        var configuration = Arbiter.Configuration()
        let problems = configuration.apply("others = everything\nno equals sign\nvolume = 11\n=observe\n")
        #expect(configuration.others == .pause)
        #expect(problems == [
            "line 1: others must be one of pause, duck, observe, not “everything”; ignored",
            "line 2: not “key = value”; ignored",
            "line 3: unknown key “volume”; ignored",
            "line 4: not “key = value”; ignored",
        ])
    }

    @Test func theLastSettingWins() {
        var configuration = Arbiter.Configuration()
        configuration.apply("others = observe\nothers = duck\n")
        #expect(configuration.others == .duck)
    }

    /// A folder of its own for files the tests write.
    private func folder() throws -> String {
        let path = NSTemporaryDirectory() + "earshot-conf-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func aMissingFileGivesTheDefaultsQuietly() throws {
        let (configuration, problems) = Arbiter.Configuration.load(path: try folder() + "/arbiter.conf")
        #expect(configuration.others == Arbiter.Configuration().others)
        #expect(problems.isEmpty)
    }

    @Test func aFileIsRead() throws {
        let path = try folder() + "/arbiter.conf"
        try "others = observe\n".write(toFile: path, atomically: true, encoding: .utf8)
        let (configuration, problems) = Arbiter.Configuration.load(path: path)
        #expect(configuration.others == .observe)
        #expect(problems.isEmpty)
    }

    @Test func anOversizedFileIsNotReadAndSaysItsSize() throws {
        let path = try folder() + "/arbiter.conf"
        let big = "others = observe\n" + String(repeating: "# padding\n", count: Arbiter.Configuration.maximumFileSize / 10 + 1)
        try big.write(toFile: path, atomically: true, encoding: .utf8)
        let (configuration, problems) = Arbiter.Configuration.load(path: path)
        #expect(configuration.others == .pause)
        #expect(problems == ["cannot read it: \(big.utf8.count) bytes, more than the \(Arbiter.Configuration.maximumFileSize) read; using the defaults"])
    }

    /// A FIFO at the path (nobody writing) would block a plain read forever, in the process
    /// that hosts the arbiter.
    @Test(.timeLimit(.minutes(1))) func aFIFOIsRefusedWithoutWaiting() throws {
        let path = try folder() + "/arbiter.conf"
        #expect(mkfifo(path, 0o600) == 0)
        let (configuration, problems) = Arbiter.Configuration.load(path: path)
        #expect(configuration.others == .pause)
        #expect(problems == ["cannot read it: not a regular file; using the defaults"])
    }

    @Test func aFolderIsRefused() throws {
        let path = try folder() + "/arbiter.conf"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let (_, problems) = Arbiter.Configuration.load(path: path)
        #expect(problems == ["cannot read it: not a regular file; using the defaults"])
    }
}
