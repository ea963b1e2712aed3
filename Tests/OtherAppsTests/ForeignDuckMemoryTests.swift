import OtherApps
import Testing

@Suite("Foreign duck memory: a new stream that the server started at a ducked volume")
struct ForeignDuckMemoryTests {
    static func ladder(_ original: [UInt32], gain: Float = 0.3) -> [[UInt32]] {
        [original] + ForeignStreamDuck(original: original).rampSteps(to: gain, steps: 5)
    }

    @Test func theGroupIsTheServersRestoreKeyInItsOrder() {
        #expect(ForeignDuckMemory.group(of: ["application.name": "radio", "media.name": "Playback"]) == "application.name:radio")
        #expect(ForeignDuckMemory.group(of: ["media.role": "music", "application.id": "org.radio", "application.name": "radio"]) == "media.role:music")
        #expect(ForeignDuckMemory.group(of: ["application.id": "org.radio", "application.name": "radio"]) == "application.id:org.radio")
        #expect(ForeignDuckMemory.group(of: ["media.name": "Playback", "node.name": "paplay"]) == "media.name:Playback")
        #expect(ForeignDuckMemory.group(of: ["node.name": "paplay"]) == "node.name:paplay")
        #expect(ForeignDuckMemory.group(of: ["media.role": "", "application.name": "radio"]) == "application.name:radio")
        #expect(ForeignDuckMemory.group(of: ["application.process.id": "42"]) == nil)
    }

    @Test func aStreamAtTheDuckedVolumeTakesTheDucksLadderOnItsRung() throws {
        var memory = ForeignDuckMemory()
        let ladder = Self.ladder([65536, 65536])
        memory.remember(ladder, for: "application.name:radio")
        let top = try #require(memory.inherited(by: ladder[5], in: "application.name:radio"))
        #expect(top == .init(ladder: ladder, rung: 5))
        // Mid-ramp: the rung the server last had.
        #expect(memory.inherited(by: ladder[2], in: "application.name:radio") == .init(ladder: ladder, rung: 2))
        // Another group's stream, or a volume of its own (also the group's volume before), is its own.
        #expect(memory.inherited(by: ladder[5], in: "application.name:tv") == nil)
        #expect(memory.inherited(by: [50000, 50000], in: "application.name:radio") == nil)
        #expect(memory.inherited(by: ladder[0], in: "application.name:radio") == nil)
        #expect(memory.inherited(by: [], in: "application.name:radio") == nil)
    }

    @Test func aVolumeTheServerRoundedStillMatchesAndTheLadderCarriesTheStreamsVolume() throws {
        var memory = ForeignDuckMemory()
        let ladder = Self.ladder([65536, 65536])
        memory.remember(ladder, for: "g")
        let rounded = ladder[5].map { $0 + 1 }
        let inherited = try #require(memory.inherited(by: rounded, in: "g"))
        #expect(inherited.rung == 5)
        #expect(inherited.ladder[5] == rounded)
        #expect(inherited.ladder[0] == [65536, 65536])
        #expect(Array(inherited.ladder[1..<5]) == Array(ladder[1..<5]))
        #expect(memory.inherited(by: ladder[5].map { $0 + ForeignDuckMemory.tolerance + 1 }, in: "g") == nil)
    }

    @Test func aStreamOfOtherChannelsTakesAUniformLadderMapped() throws {
        var memory = ForeignDuckMemory()
        let stereo = Self.ladder([41000, 41000])
        memory.remember(stereo, for: "g")
        let mono = try #require(memory.inherited(by: [stereo[5][0]], in: "g"))
        #expect(mono.rung == 5)
        #expect(mono.ladder == stereo.map { [$0[0]] })
        // A ladder of unequal channels cannot be mapped.
        var uneven = ForeignDuckMemory()
        let balanced = Self.ladder([65536, 32768])
        uneven.remember(balanced, for: "g")
        #expect(uneven.inherited(by: [balanced[5][0]], in: "g") == nil)
        #expect(uneven.inherited(by: balanced[5], in: "g")?.rung == 5)
    }

    @Test func theLatestLadderOfAGroupWinsAndForgettingDropsIt() throws {
        var memory = ForeignDuckMemory()
        let first = Self.ladder([65536, 65536])
        let second = Self.ladder([41000, 41000])
        memory.remember(first, for: "g")
        memory.remember(second, for: "g")
        #expect(memory.ladders["g"] == [second, first])
        #expect(memory.inherited(by: first[5], in: "g")?.ladder == first)
        #expect(memory.inherited(by: second[5], in: "g")?.ladder == second)
        memory.remember(first, for: "g")
        #expect(memory.ladders["g"] == [first, second])
        #expect(memory.remembers("g"))
        memory.forget("g")
        #expect(!memory.remembers("g"))
        #expect(memory.inherited(by: first[5], in: "g") == nil)
    }

    @Test func aRampToSilenceMatchesItsFirstSilentRung() throws {
        var memory = ForeignDuckMemory()
        let silent = Self.ladder([65536], gain: 0)
        memory.remember(silent, for: "g")
        #expect(memory.inherited(by: [0], in: "g")?.rung == 1)
    }

    @Test func theMemoryKeepsAtMostItsCapacityOfGroups() {
        var memory = ForeignDuckMemory()
        for n in 0...ForeignDuckMemory.capacity { memory.remember(Self.ladder([65536]), for: "g\(n)") }
        #expect(memory.ladders.count == ForeignDuckMemory.capacity)
        #expect(!memory.remembers("g0"))
        #expect(memory.remembers("g\(ForeignDuckMemory.capacity)"))
        // A ladder of one rung (nothing set) is not remembered.
        var none = ForeignDuckMemory()
        none.remember([[65536]], for: "g")
        #expect(!none.remembers("g"))
    }
}
