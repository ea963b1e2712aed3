import OtherApps
import Testing

/// The ducking of other apps' streams as a reconciler: each event in, the reads, sets,
/// saves and wakes out, checked against a sound server kept in a dictionary.
@Suite("Foreign duck ramp: other apps' streams lowered and put back, without I/O")
struct ForeignDuckRampTests {
    static let interval = ForeignDuckRamp.interval.components.attoseconds / 1_000_000_000
    static let full: [UInt32] = [65536, 65536]

    static func stream(pid: Int64, role: String = "", corked: Bool = false, volume: [UInt32] = full,
                       writable: Bool = true, group: String? = nil) -> PlaybackStream {
        PlaybackStream(pid: pid, role: role, corked: corked, volume: volume, volumeWritable: writable, group: group)
    }

    static func ladder(_ original: [UInt32], gain: Float = 0.3) -> [[UInt32]] {
        [original] + ForeignStreamDuck(original: original).rampSteps(to: gain, steps: ForeignDuckRamp.steps)
    }

    /// A sound server's stream volumes, and the ramp's actions carried out on them (as
    /// ``ForeignStreamDucker`` does), with a clock that jumps to each wake.
    struct Server {
        var ramp = ForeignDuckRamp()
        var streams: [UInt32: PlaybackStream] = [:]
        var now: UInt64 = 1_000_000_000
        var saves: [[ForeignDuckRamp.Record]] = []
        var sets: [(UInt32, [UInt32])] = []
        var wakes = 0
        var pending: [ForeignDuckRamp.Action] = []

        var volumes: [UInt32: [UInt32]] { streams.mapValues(\.volume) }

        mutating func update(gain: Float?, exempt: Set<Int64> = [], holdAdopted: Bool = false) {
            pending += ramp.update(.init(streams: streams, gain: gain, exempt: exempt, holdAdopted: holdAdopted), now: now)
        }

        /// Answers the reads and sets in order, then the earliest wake, until nothing is left.
        mutating func settle() {
            while !pending.isEmpty {
                if let i = pending.firstIndex(where: { if case .wake = $0 { false } else { true } }) {
                    answer(pending.remove(at: i))
                } else {
                    let at = pending.compactMap { action -> UInt64? in if case .wake(let at) = action { at } else { nil } }.min()!
                    pending.removeAll { $0 == .wake(at: at) }
                    now = max(now, at)
                    wakes += 1
                    pending += ramp.woke(now: now)
                }
            }
        }

        mutating func answer(_ action: ForeignDuckRamp.Action) {
            switch action {
            case .save(let records):
                saves.append(records)
            case .read(let index):
                let result: PlaybackStreamWatcher.VolumeUpdate = streams[index].map { .kept(before: $0.volume) } ?? .failed
                pending += ramp.volumeRead(index, result, now: now)
            case .set(let index, let expected, let volume, let rung):
                let result: PlaybackStreamWatcher.VolumeUpdate
                if let before = streams[index]?.volume {
                    if expected.contains(before) {
                        streams[index]?.volume = volume
                        sets.append((index, volume))
                        result = .set(before: before, after: volume)
                    } else {
                        result = .kept(before: before)
                    }
                } else {
                    result = .failed
                }
                pending += ramp.stepped(index, to: rung, result, now: now)
            case .wake:
                pending.append(action)
            }
        }
    }

    @Test func aNewStreamIsReadSavedThenLoweredInStepsAndPutBackExactly() {
        var server = Server()
        server.streams[7] = Self.stream(pid: 100, volume: [50000, 40000])
        let ladder = Self.ladder([50000, 40000])
        server.update(gain: 0.3)
        #expect(server.pending == [.read(7)])
        server.answer(server.pending.removeFirst())
        // The ladder is saved before the first set.
        #expect(server.pending == [.save([.init(index: 7, pid: 100, ladder: ladder)]),
                                   .set(7, expected: [ladder[0]], volume: ladder[1], rung: 1)])
        server.settle()
        #expect(server.volumes[7] == ladder[5])
        #expect(server.sets.map { $0.1 } == Array(ladder[1...5]))
        #expect(server.wakes == 4)
        #expect(server.ramp.ducked[7]?.position == 5)

        server.update(gain: nil)
        server.settle()
        #expect(server.volumes[7] == [50000, 40000])
        #expect(server.sets.map { $0.1 }.suffix(5) == Array(ladder[0...4].reversed()))
        #expect(server.ramp.ducked.isEmpty)
        #expect(server.saves.last == [])
    }

    @Test func eachStepWaitsTheIntervalAndStreamsRestingTogetherShareOneWake() {
        var server = Server()
        for index: UInt32 in 1...3 { server.streams[index] = Self.stream(pid: Int64(100 + index)) }
        server.update(gain: 0.3)
        #expect(server.pending == [.read(1), .read(2), .read(3)])
        // The reads and the first sets answered at one tick: the three rest until one wake.
        let start = server.now
        while let i = server.pending.firstIndex(where: { if case .wake = $0 { false } else { true } }) {
            server.answer(server.pending.remove(at: i))
        }
        #expect(server.pending == [.wake(at: start + UInt64(Self.interval))])
        server.settle()
        #expect(server.wakes == 4)
        #expect(server.now == start + 4 * UInt64(Self.interval))
        #expect(Set(server.volumes.values) == [Self.ladder(Self.full)[5]])
    }

    @Test func aStepBeforeItsPauseEndsIsNotTaken() {
        var ramp = ForeignDuckRamp()
        let streams = [UInt32(1): Self.stream(pid: 100)]
        let ladder = Self.ladder(Self.full)
        _ = ramp.update(.init(streams: streams, gain: 0.3), now: 0)
        _ = ramp.volumeRead(1, .kept(before: Self.full), now: 0)
        #expect(ramp.stepped(1, to: 1, .set(before: ladder[0], after: ladder[1]), now: 10) == [.wake(at: 10 + UInt64(Self.interval))])
        // Another event meanwhile: nothing to do for this stream, and no second wake.
        #expect(ramp.update(.init(streams: streams, gain: 0.3), now: 20) == [])
        #expect(ramp.woke(now: 20) == [])
        #expect(ramp.woke(now: 10 + UInt64(Self.interval)) == [.set(1, expected: [ladder[1]], volume: ladder[2], rung: 2)])
    }

    @Test func theUsersVolumeStandsAndTheStreamIsForgotten() {
        var server = Server()
        server.streams[7] = Self.stream(pid: 100)
        server.update(gain: 0.3)
        server.settle()
        server.streams[7]?.volume = [30000, 30000]  // the user
        server.update(gain: nil)
        server.settle()
        #expect(server.volumes[7] == [30000, 30000])
        #expect(server.ramp.ducked.isEmpty)
        #expect(server.saves.last == [])
    }

    @Test func onlyOtherAppsPlayingStreamsWithASettableVolumeAreDucked() {
        var server = Server()
        server.streams = [1: Self.stream(pid: 100, role: "event"), 2: Self.stream(pid: 101, corked: true),
                          3: Self.stream(pid: 102, writable: false), 4: Self.stream(pid: -1),
                          5: Self.stream(pid: 42), 6: Self.stream(pid: 103)]
        server.update(gain: 0.3, exempt: [42])
        #expect(server.pending == [.read(6)])
    }

    @Test func nothingHappensWithoutDuckingOrBeforeTheFirstSituation() {
        var ramp = ForeignDuckRamp()
        #expect(ramp.woke(now: 5) == [])
        #expect(ramp.volumeRead(1, .kept(before: Self.full), now: 5) == [])
        #expect(ramp.update(.init(streams: [1: Self.stream(pid: 100)], gain: nil), now: 5) == [])
    }

    @Test func aGoneStreamIsForgottenAndTheFileRewritten() {
        var server = Server()
        server.streams = [1: Self.stream(pid: 100), 2: Self.stream(pid: 101)]
        server.update(gain: 0.3)
        server.settle()
        server.streams[1] = nil
        server.update(gain: 0.3)
        #expect(server.pending == [.save([.init(index: 2, pid: 101, ladder: Self.ladder(Self.full))])])
        // Another process's stream at a known index is not the one ducked.
        server.pending = []
        server.streams[2] = Self.stream(pid: 999, volume: Self.ladder(Self.full)[5])
        server.update(gain: nil)
        #expect(server.pending == [.save([])])
    }

    @Test func aReadThatFailsIsNotRetriedBeforeTheNextSituation() {
        var ramp = ForeignDuckRamp()
        let situation = ForeignDuckRamp.Situation(streams: [1: Self.stream(pid: 100)], gain: 0.3)
        #expect(ramp.update(situation, now: 0) == [.read(1)])
        #expect(ramp.volumeRead(1, .failed, now: 0) == [])
        #expect(ramp.woke(now: 1) == [])
        #expect(ramp.update(situation, now: 2) == [.read(1)])
    }

    @Test func aSessionOfTheStreamsProcessPutsItBack() {
        var server = Server()
        server.streams[1] = Self.stream(pid: 100)
        server.update(gain: 0.3)
        server.settle()
        server.update(gain: 0.3, exempt: [100])
        server.settle()
        #expect(server.volumes[1] == Self.full)
    }

    @Test func adoptedStreamsWaitThenGoStraightBackIfStillAtAVolumeSet() {
        var server = Server()
        let ladder = Self.ladder(Self.full)
        server.ramp.adopt([.init(index: 1, pid: 100, ladder: ladder), .init(index: 2, pid: 101, ladder: ladder)])
        server.streams = [1: Self.stream(pid: 100, volume: ladder[3]), 2: Self.stream(pid: 101, volume: [20000, 20000])]
        server.update(gain: nil, holdAdopted: true)
        #expect(server.pending == [])
        server.update(gain: nil)
        #expect(server.pending == [.set(1, expected: Set(ladder), volume: ladder[0], rung: 0),
                                   .set(2, expected: Set(ladder), volume: ladder[0], rung: 0)])
        server.settle()
        #expect(server.volumes == [1: Self.full, 2: [20000, 20000]])
        #expect(server.saves.last == [])
    }

    @Test func aDuckerThatRegistersAgainKeepsAnAdoptedStreamDucked() {
        var server = Server()
        let ladder = Self.ladder(Self.full)
        server.ramp.adopt([.init(index: 1, pid: 100, ladder: ladder)])
        server.streams = [1: Self.stream(pid: 100, volume: ladder[5])]
        server.update(gain: 0.3)
        server.settle()
        #expect(server.volumes[1] == ladder[5])
        #expect(server.ramp.ducked[1]?.position == 5)
        #expect(server.sets.count == 1)
    }

    @Test func aStreamTheServerStartsAtTheDuckedVolumeTakesItsGroupsLadder() {
        var server = Server()
        let ladder = Self.ladder(Self.full)
        server.streams[1] = Self.stream(pid: 100, group: "application.name:radio")
        server.update(gain: 0.3)
        server.settle()
        // The app's next stream comes in at the volume the server remembers for the group.
        server.streams[1] = nil
        server.streams[2] = Self.stream(pid: 100, volume: ladder[5], group: "application.name:radio")
        let setsBefore = server.sets.count
        server.update(gain: 0.3)
        server.settle()
        #expect(server.sets.count == setsBefore)
        #expect(server.ramp.ducked[2]?.ladder == ladder)
        #expect(server.ramp.ducked[2]?.position == 5)
        // After the duck it gets the app's volume before.
        server.update(gain: nil)
        server.settle()
        #expect(server.volumes[2] == Self.full)
        #expect(!server.ramp.memory.remembers("application.name:radio"))
    }

    @Test func afterTheDuckAStreamOfARememberedGroupIsReadAndPutBack() {
        var server = Server()
        let ladder = Self.ladder(Self.full)
        server.streams[1] = Self.stream(pid: 100, group: "g")
        server.update(gain: 0.3)
        server.settle()
        server.streams[1] = nil  // ends while ducked: the server keeps the ducked volume
        server.update(gain: nil)
        server.settle()
        #expect(server.ramp.memory.remembers("g"))
        server.streams[2] = Self.stream(pid: 100, volume: ladder[5], group: "g")
        server.update(gain: nil)
        server.settle()
        #expect(server.volumes[2] == Self.full)
        // Put back, the group is forgotten: a later stream of it is left alone.
        #expect(!server.ramp.memory.remembers("g"))
        server.streams[3] = Self.stream(pid: 100, volume: [1000, 1000], group: "g")
        server.update(gain: nil)
        #expect(server.pending == [])
    }

    @Test func stoppingLeavesEverythingAndRestoringAtExitPutsEachBack() {
        var server = Server()
        let ladder = Self.ladder(Self.full)
        server.streams = [1: Self.stream(pid: 100), 2: Self.stream(pid: 101)]
        server.update(gain: 0.3)
        server.settle()
        var stopped = server.ramp
        stopped.stop()
        #expect(stopped.update(.init(streams: server.streams, gain: nil), now: server.now) == [])
        #expect(stopped.stopToRestore() == [])

        let sets = server.ramp.stopToRestore()
        #expect(sets == [.set(1, expected: Set(ladder), volume: ladder[0], rung: 0),
                         .set(2, expected: Set(ladder), volume: ladder[0], rung: 0)])
        #expect(server.ramp.update(.init(streams: server.streams, gain: nil), now: server.now) == [])
        #expect(server.ramp.restored() == [.save([])])
        #expect(server.ramp.ducked.isEmpty)
    }
}
