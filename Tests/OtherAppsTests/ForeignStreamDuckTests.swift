import OtherApps
import Testing

@Suite("Foreign stream duck")
struct ForeignStreamDuckTests {
    @Test func theDuckedVolumeIsTheGainOnTheCubicScale() {
        let duck = ForeignStreamDuck(original: [65536, 32768])
        let ducked = duck.volume(atGain: 0.3)
        // 0.3^(1/3) = 0.66943
        #expect(ducked == [43872, 21936])
        #expect(duck.volume(atGain: 1) == [65536, 32768])
        #expect(duck.volume(atGain: 0) == [0, 0])
    }

    @Test func theRampEndsAtTheDuckedVolumeAndGoesDown() {
        let duck = ForeignStreamDuck(original: [65536])
        let ramp = duck.rampSteps(to: 0.3, steps: 4)
        #expect(ramp.count == 4)
        #expect(ramp.last == duck.volume(atGain: 0.3))
        #expect(zip(ramp, ramp.dropFirst()).allSatisfy { $0[0] > $1[0] })
        #expect(ramp[0][0] < 65536)
    }

    @Test func theOriginalComesBackUnlessTheUserChangedTheVolume() {
        var duck = ForeignStreamDuck(original: [50000, 50000])
        duck.lastSet = duck.volume(atGain: 0.3)
        #expect(duck.volumeToRestore(current: duck.lastSet) == [50000, 50000])
        #expect(duck.volumeToRestore(current: [60000, 60000]) == nil)
        #expect(duck.volumeToRestore(current: [duck.lastSet[0]]) == nil)
    }
}
