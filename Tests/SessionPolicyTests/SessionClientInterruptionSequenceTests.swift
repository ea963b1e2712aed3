import SessionPolicy
import Testing
import TestSupport

/// An object whose identifier stands for a player (the client only compares identifiers).
final class Token: Sendable {
    /// The players of the worlds below; the last does not resume by itself.
    static let players = (0..<4).map { _ in Token() }
    static let ids = players.map(ObjectIdentifier.init)
}

/// A process's players and its session client, the path to the arbiter, and an arbiter that
/// interrupts the session and ends its interruptions, driven by random interleavings: the
/// app plays and pauses players; the arbiter begins interruptions (another session's, or the
/// screen lock) and ends them; a player's start lets its voice start later (on its thread),
/// as the activations on the path reach the arbiter and are answered later; a resumption
/// starts its players, then checks them. The race stories of the session's players (see
/// `SessionClient+Players.swift`) are such interleavings.
private struct PlayerWorld {
    typealias PlayerID = SessionClient.PlayerID

    /// Something that runs at once, on one of the process's threads or on the path.
    enum Action: Hashable {
        /// A player's voice starts (its start was let through with `before` interruptions
        /// begun), and the session hears that it started.
        case started(PlayerID, before: UInt64)
        /// A resumption checks the players it started.
        case resumed(Set<PlayerID>, before: UInt64)
        /// An activation reaches the arbiter; it is answered later.
        case arrives(SessionClient.Activation)
        case answered(SessionClient.Activation)
    }

    static let manual = Token.ids[3]
    var client = SessionClient()
    var random: SplitMix64
    /// Whether the app may play while the session is interrupted, and the arbiter end an
    /// interruption without `shouldResume` by itself. Without it, the arbiter ends an
    /// interruption without `shouldResume` only when the session's activation takes over
    /// (the burst story): the players it paused then always resume.
    let anything: Bool
    /// The process's threads with actions still to run, each in order; the path's steps
    /// (activations) waiting, and the actions of the one running.
    var threads: [[Action]] = []
    var path: [SessionClient.Activation] = []
    var running: [Action] = []
    var playing: Set<PlayerID> = []
    /// The players the app wants to play: it played them and has not paused them, and no
    /// end of an interruption released them.
    var wanted: Set<PlayerID> = []
    var appPaused: Set<PlayerID> = []
    /// Players the session paused or held for an interruption, and not played since; those
    /// of them when an interruption ended with `shouldResume` are owed that resumption.
    var held: Set<PlayerID> = []
    var owed: Set<PlayerID> = []
    /// The arbiter holds the session interrupted (`screenLocked`: silenced, which an
    /// activation does not end).
    var arbiterInterrupted = false
    var screenLocked = false
    var problems: [String] = []
    var log: [String] = []

    init(seed: UInt64, anything: Bool) {
        random = SplitMix64(seed: seed)
        self.anything = anything
    }

    var pending: [Action] { threads.flatMap { $0 } + running }

    func name(_ ids: Set<PlayerID>) -> String { "\(ids.compactMap { Token.ids.firstIndex(of: $0) }.sorted())" }

    mutating func handle(_ input: SessionClient.Input) {
        log.append("\(input)")
        for effect in client.handle(input) { perform(effect) }
    }

    mutating func perform(_ effect: SessionClient.Effect) {
        switch effect {
        case .enqueueActivation(let activation): path.append(activation)
        case .pause(let ids):
            log.append("  paused \(name(ids))")
            playing.subtract(ids)
            held.formUnion(ids)
        case .start(let id):
            resuming([id])
            if let action = start(id, askedAfter: nil) { running.append(action) }
        case .resume(let ids, let before):
            resuming(ids)
            running += ids.compactMap { start($0, askedAfter: nil) } + [.resumed(ids, before: before)]
        case .ended(let shouldResume, let released):
            log.append("  ended, shouldResume \(shouldResume), released \(name(released))")
            if !anything, !shouldResume, !released.isDisjoint(with: wanted) {
                problems.append("players \(name(released.intersection(wanted))) released without resuming")
            }
            if !shouldResume, !released.isDisjoint(with: owed) {
                problems.append("the resumption owed to \(name(released.intersection(owed))) cancelled")
            }
            wanted.subtract(released)
            held.subtract(released)
            owed.subtract(released)
            if shouldResume { owed.formUnion(held) }
        default:
            break  // sound and registration: see SessionClientRandomSequenceTests
        }
    }

    mutating func resuming(_ ids: Set<PlayerID>) {
        log.append("  resuming \(name(ids))")
        if client.interrupted { problems.append("players \(name(ids)) resumed while interrupted") }
        if !ids.isDisjoint(with: appPaused) { problems.append("players \(name(ids.intersection(appPaused))) the app paused resumed") }
    }

    /// A player's start: the session's check now; its voice later, if the check lets it.
    mutating func start(_ id: PlayerID, askedAfter: UInt64?) -> Action? {
        let before = client.interruptionsBegun
        handle(.playerStarting(id, askedAfter: askedAfter))
        return client.interrupted ? nil : .started(id, before: before)
    }

    mutating func run(_ action: Action) {
        log.append("run \(action)")
        switch action {
        case .started(let id, let before):
            playing.insert(id)
            held.remove(id)
            owed.remove(id)
            handle(.playerStarted(id, interruptionsBefore: before))
        case .resumed(let ids, let before):
            handle(.playersResumed(ids, interruptionsBefore: before, playing: ids.intersection(playing)))
        case .arrives:
            // The session takes over an interruption by another session (a user's play, or
            // the activation sent to resume): it ends, without `shouldResume`, before the reply.
            if arbiterInterrupted, !screenLocked { end(shouldResume: false) }
        case .answered(let activation):
            handle(.activationAnswered(active: true))
            if activation != .resumption { handle(.arbiterMayHaveMissedSound) }
            handle(.activated(activation, livePlayers: Set(Token.ids)))
        }
    }

    mutating func begin(screenLocked locked: Bool? = nil) {
        guard !arbiterInterrupted else { return }
        (arbiterInterrupted, screenLocked) = (true, locked ?? Bool.random(using: &random))
        handle(.interruptionBegan(screenLocked ? .screenLocked : .sessionActivated(":1.9"), playing: playing))
    }

    mutating func end(shouldResume: Bool) {
        guard arbiterInterrupted else { return }
        arbiterInterrupted = false
        handle(.interruptionEnded(shouldResume: shouldResume, manual: [Self.manual]))
    }

    mutating func play(_ id: PlayerID) {
        guard !playing.contains(id), !pending.contains(where: { if case .started(id, _) = $0 { true } else { false } }),
              anything || !client.interrupted else { return }
        // Sometimes a start the app asked for earlier (a queue's item that opened since).
        let askedAfter: UInt64? = Bool.random(using: &random) ? nil : client.interruptionsBegun &- .random(in: 0...1, using: &random)
        let stale = client.interrupted && askedAfter.map { $0 != client.interruptionsBegun } == true
        let activations = path.count
        wanted.insert(id)
        appPaused.remove(id)
        held.remove(id)
        owed.remove(id)
        if let action = start(id, askedAfter: askedAfter) { threads.append([action]) }
        if stale { held.insert(id) }
        if stale, path.count != activations { problems.append("a start asked before the interruption took over") }
    }

    mutating func stepPath() {
        if running.isEmpty {
            guard !path.isEmpty else { return }
            let activation = path.removeFirst()
            running = [.arrives(activation), .answered(activation)]
        }
        run(running.removeFirst())
    }

    mutating func stepThread() {
        guard !threads.isEmpty else { return }
        let index = Int.random(in: threads.indices, using: &random)
        run(threads[index].removeFirst())
        if threads[index].isEmpty { threads.remove(at: index) }
    }

    mutating func randomInput() {
        let player = Token.ids.randomElement(using: &random)!
        switch Int.random(in: 0..<12, using: &random) {
        case 0: begin()
        case 1: end(shouldResume: anything ? Bool.random(using: &random) : true)
        case 2, 3: play(player)
        case 4:
            // The app pauses a player that plays.
            guard playing.contains(player), !pending.contains(where: { if case .started(player, _) = $0 { true } else { false } }) else { return }
            playing.remove(player)
            wanted.remove(player)
            appPaused.insert(player)
        case 5...7: stepThread()
        default: stepPath()
        }
        // Between a player's start and its voice's, it may sound in an interruption that
        // began in between; once its start is through, it must not.
        let starting = Set(pending.compactMap { if case .started(let id, _) = $0 { id } else { nil } })
        if client.interrupted, !playing.subtracting(starting).isEmpty {
            problems.append("players \(name(playing.subtracting(starting))) play while interrupted")
        }
    }

    /// Runs every thread and the path to their end, and ends the interruption (with
    /// `shouldResume`) if one holds the session.
    mutating func settle() {
        for _ in 0..<1000 {
            if !threads.isEmpty {
                stepThread()
            } else if !running.isEmpty || !path.isEmpty {
                stepPath()
            } else if arbiterInterrupted {
                end(shouldResume: true)
            } else {
                return
            }
        }
        problems.append("did not settle")
    }
}

@Suite("Session client: interruptions and players, random sequences")
struct SessionClientInterruptionSequenceTests {
    static let sequences = 2000
    static let length = 120

    /// Nothing is resumed while the session is interrupted, no player sounds in an
    /// interruption once its start is through, a player the app paused is never resumed,
    /// a start the app asked for before the interruption began does not take over, and an
    /// end without `shouldResume` does not cancel a resumption owed by an earlier end.
    /// Without the app's plays in an interruption and ends without `shouldResume` from the
    /// arbiter, no player the app wants is released without resuming: an end that takes
    /// over for the session's own activation (a burst of interrupters) keeps the resumption.
    @Test(arguments: [false, true]) func invariantsHoldAtEveryInput(anything: Bool) {
        for seed in 0..<UInt64(Self.sequences) {
            var world = PlayerWorld(seed: seed, anything: anything)
            for index in 0..<Self.length {
                world.randomInput()
                if !world.problems.isEmpty {
                    Issue.record("seed \(seed), input \(index): \(world.problems)\n\(world.log.suffix(16).joined(separator: "\n"))")
                    return
                }
            }
        }
    }

    /// Once the last interruption has ended with `shouldResume` and every step has run,
    /// every player the app wants plays: each one an interruption paused (and that resumes
    /// by itself), one whose start it held, and one that started as it began.
    @Test(arguments: [false, true]) func theWantedPlayersPlayOnceSettled(anything: Bool) {
        for seed in 0..<UInt64(Self.sequences) {
            var world = PlayerWorld(seed: seed, anything: anything)
            let stop = Int.random(in: 1..<Self.length, using: &world.random)
            for _ in 0..<stop { world.randomInput() }
            world.settle()
            let silent = world.wanted.subtracting(world.playing)
            #expect(world.problems.isEmpty && silent.isEmpty,
                    "seed \(seed): \(world.problems), not playing \(world.name(silent))\n\(world.log.suffix(24).joined(separator: "\n"))")
        }
    }

    /// The burst story: interrupters that begin and end while a resumption's activation is
    /// on its way. The activation takes the second interruption over, and the arbiter ends
    /// it without `shouldResume`: the resumption is owed, and the player plays.
    @Test func aBurstOfInterruptersKeepsTheResumption() {
        var world = PlayerWorld(seed: 0, anything: false)
        let player = Token.ids[0]
        world.play(player)
        world.settle()
        #expect(world.playing == [player] && world.client.active)
        world.begin(screenLocked: false)
        #expect(world.playing.isEmpty)
        world.end(shouldResume: true)
        #expect(world.path == [.resumption])
        world.begin(screenLocked: false)
        world.stepPath()  // the resumption's activation arrives: the session takes over
        #expect(!world.client.interrupted && world.problems.isEmpty)
        world.settle()
        #expect(world.playing == [player] && world.problems.isEmpty, "\(world.log.joined(separator: "\n"))")
    }

    /// A player whose start the app asked for before the interruption that holds the session
    /// began waits for its end, without taking over; a fresh play takes over.
    @Test func aStartAskedBeforeTheInterruptionWaits() {
        var client = SessionClient()
        let (early, fresh) = (Token.ids[0], Token.ids[1])
        _ = client.handle(.interruptionBegan(.sessionActivated(":1.9"), playing: []))
        #expect(client.handle(.playerStarting(early, askedAfter: 0)) == [])
        #expect(client.handle(.playerStarting(fresh, askedAfter: 1)) == [.enqueueActivation(.start(fresh))])
        #expect(client.handle(.interruptionEnded(shouldResume: true, manual: []))
            == [.ended(shouldResume: true, released: []), .enqueueActivation(.resumption)])
        #expect(client.handle(.activated(.start(fresh), livePlayers: [early, fresh])) == [.start(fresh)])
        #expect(client.handle(.activated(.resumption, livePlayers: [early, fresh])) == [.resume([early], interruptionsBefore: 1)])
    }
}
