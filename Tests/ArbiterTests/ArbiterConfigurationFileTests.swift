import Arbiter
import Testing

@Suite("The arbiter's configuration file")
struct ArbiterConfigurationFileTests {
    @Test(arguments: Arbiter.OthersPolicy.allCases)
    func othersIsRead(mode: Arbiter.OthersPolicy) {
        var configuration = Arbiter.Configuration()
        configuration.apply("# a comment\n\n  others =  \(mode.rawValue)  # trailing comment\n")
        #expect(configuration.others == mode)
    }

    @Test func badLinesAndUnknownKeysLeaveTheDefaults() {
        var configuration = Arbiter.Configuration()
        configuration.apply("others = everything\nno equals sign\nvolume = 11\n=observe\n")
        #expect(configuration.others == .pause)
    }

    @Test func theLastSettingWins() {
        var configuration = Arbiter.Configuration()
        configuration.apply("others = observe\nothers = duck\n")
        #expect(configuration.others == .duck)
    }
}
