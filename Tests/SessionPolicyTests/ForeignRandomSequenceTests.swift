import SessionPolicy
import Testing
import TestSupport

/// The random sessions of ``EventGenerator`` with two other apps' players and their sound
/// mixed in: every session invariant still holds, and the foreign ones too.
struct ForeignEventGenerator {
    var sessions: EventGenerator
    let players: [(id: String, pid: Int64)] = [(":1.50", 500), (":1.60", 600)]

    mutating func sequence(_ count: Int) -> [SessionPolicy.Event] {
        sessions.sequence(0) + (0..<count).map { _ in event() }
    }

    mutating func event() -> SessionPolicy.Event {
        guard Int.random(in: 0..<4, using: &sessions.random) == 0 else { return sessions.event() }
        let player = players.randomElement(using: &sessions.random)!
        switch Int.random(in: 0..<10, using: &sessions.random) {
        case 0..<6:
            return .foreignPlayer(player: player.id, pid: player.pid,
                                  status: ForeignPlaybackStatus.allCases.randomElement(using: &sessions.random)!,
                                  canPause: Int.random(in: 0..<5, using: &sessions.random) != 0,
                                  seenAt: Bool.random(using: &sessions.random) ? UInt64.random(in: 0...60, using: &sessions.random) : nil)
        case 6..<9:
            return .foreignSound(pid: player.pid, sounding: Bool.random(using: &sessions.random), tick: sessions.nextTick())
        default:
            return Bool.random(using: &sessions.random)
                ? .foreignPlayerVanished(player: player.id) : .foreignProcessVanished(pid: player.pid)
        }
    }
}

/// The invariants about other apps after one `apply`.
func foreignViolations(before: SessionPolicy, decisions: [Decision], after: SessionPolicy) -> [String] {
    var problems: [String] = []
    for player in after.foreignPlayers.values {
        if let by = player.pausedBy, after[by] == nil { problems.append("\(player.id) paused by unregistered \(by)") }
    }
    for session in after.sessions.values {
        for case let .otherApp(player) in session.interruptions where after.foreignPlayers[player]?.status != .playing {
            problems.append("\(session.id) interrupted by \(player), which does not play")
        }
    }
    for decision in decisions {
        switch decision {
        case let .pauseForeign(player, stop):
            guard let state = after.foreignPlayers[player] else { problems.append("pause for unknown \(player)"); break }
            if !after.configuration.pausesOthers { problems.append("paused \(player) while observing") }
            if stop == state.canPause { problems.append("Stop/Pause mismatch for \(player)") }
            if state.pausedBy.flatMap({ after[$0] }).map({ !$0.isActive || $0.isMixable }) ?? true {
                problems.append("\(player) paused for no active non-mixable session")
            }
        case let .resumeForeign(player):
            guard let was = before.foreignPlayers[player], was.pausedBy != nil else {
                problems.append("resumed \(player), which no session paused")
                break
            }
            if after.sessions.values.contains(where: { $0.isActive && !$0.isMixable }) {
                problems.append("resumed \(player) over an active non-mixable session")
            }
        case let .readForeignStatus(player):
            // Only for a player whose asked-for pause is unseen, once its process sounds again.
            guard let was = before.foreignPlayers[player], let expected = was.expected, expected != .playing,
                  was.status == .playing else {
                problems.append("read the status of \(player), which owes no pause")
                break
            }
            if after.foreignSounds[was.pid]?.isSounding != true || before.foreignSounds[was.pid]?.isSounding == true {
                problems.append("read the status of \(player) without its process sounding again")
            }
        case let .targetChanged(target):
            if target != after.target { problems.append("target decision disagrees") }
        default:
            break
        }
    }
    if before.target != after.target, !decisions.contains(.targetChanged(after.target)) {
        problems.append("target changed silently")
    }
    if case .foreign(let player)? = after.target, after.foreignPlayers[player] == nil {
        problems.append("target \(player) is not a known player")
    }
    return problems
}

@Suite("Other apps: random event sequences")
struct ForeignRandomSequenceTests {
    /// 500 per mode: these loops run synchronously on Swift's cooperative pool (2 threads
    /// here); at 2,000 they held both for ~30 s in the parallel pass, and the async tests
    /// beside them (a D-Bus reply, a daemon's exit) ran past their timeouts.
    static let sequences = 500
    static let length = 120

    @Test(arguments: [true, false])
    func invariantsHoldWithOtherApps(pausesOthers: Bool) {
        var applied = 0
        var paused = 0
        var resumed = 0
        var foreignInterruptions = 0
        var reads = 0
        for seed in 0..<UInt64(Self.sequences) {
            var generator = ForeignEventGenerator(sessions: EventGenerator(random: SplitMix64(seed: seed)))
            let events = generator.sequence(Self.length)
            var policy = SessionPolicy(configuration: .init(pausesOthers: pausesOthers))
            var ledger = Ledger()
            for (index, event) in events.enumerated() {
                let before = policy
                let decisions = policy.apply(event)
                var problems = violations(before: before, event: event, decisions: decisions, after: policy, ledger: &ledger)
                problems += foreignViolations(before: before, decisions: decisions, after: policy)
                applied += 1
                for decision in decisions {
                    switch decision {
                    case .pauseForeign: paused += 1
                    case .resumeForeign: resumed += 1
                    case .readForeignStatus: reads += 1
                    case .interruptionBegan(_, .otherApp): foreignInterruptions += 1
                    default: break
                    }
                }
                if !problems.isEmpty {
                    Issue.record("seed \(seed), event \(index) \(event) → \(decisions): \(problems)")
                    return
                }
            }
        }
        #expect(applied == Self.sequences * (Self.length + 4))
        // The sequences reach the rules under test.
        #expect(foreignInterruptions > 0)
        #expect(pausesOthers ? reads > 0 : reads == 0, "a paused player's sound coming back is reached")
        #expect(pausesOthers ? paused > 0 && resumed > 0 : paused == 0 && resumed == 0)
    }

    @Test func theSameEventsGiveTheSameDecisions() {
        for seed in 0..<UInt64(200) {
            var generator = ForeignEventGenerator(sessions: EventGenerator(random: SplitMix64(seed: seed)))
            let events = generator.sequence(Self.length)
            var first = SessionPolicy()
            var second = SessionPolicy()
            let a = events.map { first.apply($0) }
            let b = events.map { second.apply($0) }
            #expect(a == b && first == second, "seed \(seed)")
        }
    }
}
