import SessionPolicy
import Testing
import TestSupport

/// A session client in a process, with its path and a model arbiter, driven by random
/// sequences: the engine's sound (sometimes with only system sounds playing), recordings,
/// players that start (some with an activation), interruptions that begin and end and the
/// resumptions after them, registrations, and the path's steps, which run one at a time in
/// the order they were enqueued, at random moments between the process's inputs.
private struct ClientWorld {
    /// A step on the path.
    enum Step: Hashable {
        case report(producing: Bool)
        case missedSoundCheck
        /// An activation or a registration answered.
        case activation
        case registration
        /// The arbiter stopped counting the session (after an interruption's signal).
        case stoppedCounting
        /// An activation for players to play answered, then (a resumption's) its players'
        /// start (`players`: any left).
        case playing(SessionClient.Activation, players: Bool)
    }

    /// The process's one player (see SessionClientInterruptionSequenceTests for several).
    static let player = Token.ids[0]
    var client = SessionClient()
    var path: [Step] = []
    var random: SplitMix64
    var engineOn = false
    /// The arbiter: whether it counts the session as sounding, and whether it holds the
    /// session interrupted (it refuses sound then).
    var arbiterCounts = false
    var arbiterInterrupted = false
    /// Reports of sound sent while the session was interrupted, by the rule that reports
    /// missed sound (it must never send one).
    var missedReportsWhileInterrupted = 0
    var log: [String] = []

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    mutating func handle(_ input: SessionClient.Input) {
        log.append("\(input)")
        for effect in client.handle(input) { perform(effect) }
    }

    mutating func perform(_ effect: SessionClient.Effect) {
        switch effect {
        case .enqueueSoundReport(let producing): path.append(.report(producing: producing))
        case .enqueueMissedSoundCheck: path.append(.missedSoundCheck)
        case .enqueueArbiterStoppedCounting: path.append(.stoppedCounting)
        case .reportSound(let producing):
            if client.interrupted { missedReportsWhileInterrupted += 1 }
            send(producing)
        case .enqueueActivation(let activation):
            path.append(.playing(activation, players: Bool.random(using: &random)))
        case .resume(let ids, let before):
            handle(.playersResumed(ids, interruptionsBefore: before, playing: ids))
        case .pause, .start, .ended:
            break  // the players' bookkeeping: see SessionClientInterruptionSequenceTests
        case .enqueueRegistration, .enqueueRegistrationRetry, .register:
            log.append("unexpected \(effect)")  // no registration input here
        }
    }

    /// A report reaches the arbiter and is answered.
    mutating func send(_ producing: Bool) {
        let counted = !(producing && arbiterInterrupted)
        arbiterCounts = producing && counted
        handle(.soundReportAnswered(producing: producing, counted: counted))
    }

    /// Runs the path's next step.
    mutating func step() {
        guard !path.isEmpty else { return }
        let next = path.removeFirst()
        log.append("step \(next)")
        switch next {
        case .report(let producing):
            handle(.soundReportDequeued)
            send(producing)
        case .missedSoundCheck, .activation:
            handle(.arbiterMayHaveMissedSound)
        case .registration:
            let producing = client.registrationSound
            if producing, arbiterInterrupted { missedReportsWhileInterrupted += 1 }
            arbiterCounts = producing
            handle(.registered(producing: producing))
            handle(.arbiterMayHaveMissedSound)
        case .stoppedCounting:
            handle(.arbiterStoppedCounting)
        case .playing(let activation, let players):
            handle(.activationAnswered(active: true))
            if activation != .resumption { handle(.arbiterMayHaveMissedSound) }
            handle(.activated(activation, livePlayers: players ? [Self.player] : []))
        }
    }

    mutating func randomInput() {
        switch Int.random(in: 0..<20, using: &random) {
        case 0..<4:
            engineOn.toggle()
            handle(.engineSound(producing: engineOn, systemSoundsOnly: engineOn && Bool.random(using: &random)))
        case 4:
            handle(.recording(!client.recording))
        case 5, 6:
            guard !client.interrupted else { return }
            handle(.playerStarting(Self.player, askedAfter: nil))
        case 7:
            if engineOn { handle(.joinedSounding) }
            path.append(.activation)
        case 8:
            handle(.playerHeard)
        case 9:
            guard !client.interrupted else { return }
            arbiterInterrupted = true
            arbiterCounts = false
            handle(.interruptionBegan(Bool.random(using: &random) ? .screenLocked : .sessionActivated(":1.9"),
                                      playing: engineOn ? [Self.player] : []))
        case 10:
            guard client.interrupted else { return }
            arbiterInterrupted = false
            handle(.interruptionEnded(shouldResume: Bool.random(using: &random), manual: []))
        case 11:
            path.append(.registration)
        default:
            step()
        }
    }

    /// Runs the path to its end, then (when the session is not interrupted) an activation,
    /// as the next play would: the arbiter must then count what the process makes.
    mutating func settle() {
        while !path.isEmpty { step() }
        guard !client.interrupted else { return }
        path.append(.activation)
        while !path.isEmpty { step() }
    }

    var problems: [String] {
        var found: [String] = []
        let reportsQueued = path.count { if case .report = $0 { true } else { false } }
        if client.soundReportsOnPath != reportsQueued {
            found.append("\(client.soundReportsOnPath) reports counted on the path, \(reportsQueued) there")
        }
        if missedReportsWhileInterrupted > 0 { found.append("sound reported while interrupted") }
        if client.interrupted, client.registrationSound { found.append("an interrupted registration claims sound") }
        if client.soundIsSystemSoundsOnly, !engineOn { found.append("system sounds only, with the engine silent") }
        return found
    }
}

@Suite("Session client: random sequences")
struct SessionClientRandomSequenceTests {
    static let sequences = 2000
    static let length = 120

    /// The path's bookkeeping holds at every input, and no rule reports sound for an
    /// interrupted session.
    @Test func invariantsHoldAtEveryInput() {
        for seed in 0..<UInt64(Self.sequences) {
            var world = ClientWorld(seed: seed)
            for index in 0..<Self.length {
                world.randomInput()
                let problems = world.problems
                if !problems.isEmpty {
                    Issue.record("seed \(seed), input \(index): \(problems)\n\(world.log.suffix(12).joined(separator: "\n"))")
                    return
                }
            }
        }
    }

    /// Once the path has run and the session activated, the arbiter counts the session's
    /// sound exactly when the process makes it: a stale "silent" never lands after a newer
    /// "producing" (reports keep the order of the changes), sound the arbiter refused or
    /// stopped counting at an interruption is reported again, and system sounds alone never
    /// count.
    @Test func theArbiterAgreesOnceThePathHasRun() {
        for seed in 0..<UInt64(Self.sequences) {
            var world = ClientWorld(seed: seed)
            let stop = Int.random(in: 1..<Self.length, using: &world.random)
            for _ in 0..<stop { world.randomInput() }
            world.settle()
            if world.client.interrupted {
                #expect(!world.arbiterCounts, "seed \(seed): an interrupted session counted")
                continue
            }
            #expect(world.arbiterCounts == world.client.inUse,
                    "seed \(seed): arbiter \(world.arbiterCounts), process \(world.client.inUse)\n\(world.log.suffix(16).joined(separator: "\n"))")
        }
    }

    /// A sounding session the arbiter counts does not report again at an activation (that
    /// would make it the last sound), nor while a report of it is on the path.
    @Test func noSecondReportOfCountedSound() {
        var client = SessionClient()
        #expect(client.handle(.engineSound(producing: true, systemSoundsOnly: false)) == [.enqueueSoundReport(producing: true)])
        #expect(client.handle(.arbiterMayHaveMissedSound) == [])  // the report is on the path
        _ = client.handle(.soundReportDequeued)
        _ = client.handle(.soundReportAnswered(producing: true, counted: true))
        #expect(client.handle(.arbiterMayHaveMissedSound) == [])
    }

    /// A resumption reports the sound the engine kept through the interruption only once a
    /// resumed player is heard, not with its activation: the engine's sound-stopped event
    /// for the interruption's silence could still come after such a report.
    @Test func resumedSoundIsReportedOnceHeard() {
        var client = SessionClient()
        _ = client.handle(.engineSound(producing: true, systemSoundsOnly: false))
        _ = client.handle(.soundReportDequeued)
        _ = client.handle(.soundReportAnswered(producing: true, counted: true))
        let player = Token.ids[0]
        #expect(client.handle(.interruptionBegan(.sessionActivated(":1.9"), playing: [player]))
            == [.enqueueArbiterStoppedCounting, .pause([player])])
        #expect(client.interruptedBy == ":1.9" && client.silencedBy == nil && client.interruptionsBegun == 1)
        _ = client.handle(.arbiterStoppedCounting)
        #expect(client.handle(.interruptionEnded(shouldResume: true, manual: []))
            == [.ended(shouldResume: true, released: []), .enqueueActivation(.resumption)])
        _ = client.handle(.activationAnswered(active: true))
        #expect(client.handle(.activated(.resumption, livePlayers: [player])) == [.resume([player], interruptionsBefore: 1)])
        #expect(client.handle(.playerHeard) == [.enqueueMissedSoundCheck])
        #expect(client.handle(.playerHeard) == [])
        #expect(client.handle(.arbiterMayHaveMissedSound) == [.reportSound(producing: true)])
    }

    /// Sound that starts while only system sounds play is not the session's: neither it nor
    /// its end is reported; a player that starts then makes it the session's.
    @Test func systemSoundsAloneAreNotReported() {
        var client = SessionClient()
        #expect(client.handle(.engineSound(producing: true, systemSoundsOnly: true)) == [])
        #expect(client.handle(.engineSound(producing: false, systemSoundsOnly: false)) == [])
        #expect(!client.inUse)
        _ = client.handle(.engineSound(producing: true, systemSoundsOnly: true))
        // Inactive, the player's start enqueues an activation, which reports the sound itself.
        #expect(client.handle(.playerStarting(Token.ids[0], askedAfter: nil)) == [.enqueueActivation(.play)])
        #expect(client.inUse)
        _ = client.handle(.engineSound(producing: false, systemSoundsOnly: false))
        _ = client.handle(.activationAnswered(active: true))
        _ = client.handle(.engineSound(producing: true, systemSoundsOnly: true))
        #expect(client.handle(.playerStarting(Token.ids[0], askedAfter: nil)) == [.enqueueSoundReport(producing: true)])
        #expect(client.handle(.engineSound(producing: false, systemSoundsOnly: false)) == [.enqueueSoundReport(producing: false)])
    }

    @Test func theSameInputsGiveTheSameEffects() {
        for seed in 0..<UInt64(200) {
            var first = ClientWorld(seed: seed)
            var second = ClientWorld(seed: seed)
            for _ in 0..<Self.length {
                first.randomInput()
                second.randomInput()
            }
            #expect(first.log == second.log && first.client == second.client, "seed \(seed)")
        }
    }
}
