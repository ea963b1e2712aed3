import SessionPolicy
import Testing
import TestSupport

/// Random events over four sessions that vanish and register again, and, rarely, one
/// that never registers. The generator follows registrations itself (its own events
/// decide them), so most events name a registered session.
struct EventGenerator {
    var random: SplitMix64
    var tick: UInt64 = 0
    var registered: Set<SessionID> = []
    let ids: [SessionID] = [":1.1", ":1.2", ":1.3", ":1.4"]
    static let stranger: SessionID = ":9.9"
    static let options: [CategoryOptions] = [
        [], [], .mixWithOthers, .duckOthers, .interruptSpokenAudioAndMixWithOthers,
        [.duckOthers, .interruptSpokenAudioAndMixWithOthers],
    ]

    /// Mostly a registered session; sometimes any of the four, or the stranger.
    mutating func id() -> SessionID {
        switch Int.random(in: 0..<40, using: &random) {
        case 0: Self.stranger
        case 1..<4: ids.randomElement(using: &random)!
        default: registered.sorted().randomElement(using: &random) ?? ids.randomElement(using: &random)!
        }
    }

    /// Mostly a session that is not registered.
    mutating func newcomer() -> SessionID {
        let absent = ids.filter { !registered.contains($0) }
        let id = Int.random(in: 0..<10, using: &random) == 0 || absent.isEmpty
            ? ids.randomElement(using: &random)! : absent.randomElement(using: &random)!
        registered.insert(id)
        return id
    }

    mutating func nextTick() -> UInt64 {
        tick += UInt64.random(in: 1...3, using: &random)
        return tick
    }

    /// Options that fit `category`, and now and then some that do not (to be rejected).
    mutating func options(for category: Category) -> CategoryOptions {
        if category.acceptsMixingOptions || Int.random(in: 0..<10, using: &random) == 0 {
            return Self.options.randomElement(using: &random)!
        }
        return []
    }

    /// A sequence: the four sessions register, then `count` random events.
    mutating func sequence(_ count: Int) -> [SessionPolicy.Event] {
        registered = Set(ids)
        return ids.map { .register($0, appName: "app", tick: nextTick()) } + (0..<count).map { _ in event() }
    }

    mutating func event() -> SessionPolicy.Event {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<4: .register(newcomer(), appName: "app", tick: nextTick())
        case 4..<8: vanish(id())
        case 8..<24:
            setCategory(id())
        case 24..<42: .activate(id())
        case 42..<52: .deactivate(id(), notifyOthers: Bool.random(using: &random))
        case 52..<68: .soundStarted(id(), tick: nextTick())
        case 68..<76: .soundStopped(id(), tick: nextTick())
        case 76..<82: .remoteCommandsChanged(id(), anyEnabled: Bool.random(using: &random))
        case 82..<87: .screenLockChanged(locked: Bool.random(using: &random))
        case 87..<95: .silentModeChanged(on: Bool.random(using: &random))
        default: .silenceTimeout(id())
        }
    }

    mutating func vanish(_ id: SessionID) -> SessionPolicy.Event {
        registered.remove(id)
        return .vanished(id)
    }

    mutating func setCategory(_ id: SessionID) -> SessionPolicy.Event {
        let category = Category.allCases.randomElement(using: &random)!
        return .setCategory(id, category, options: options(for: category), mode: Mode.allCases.randomElement(using: &random)!)
    }
}

/// What the decisions so far have told each session, checked against the policy.
struct Ledger {
    var interrupted: [SessionID: Bool] = [:]
    var ducked: [SessionID: Bool] = [:]
    var otherAudio: [SessionID: Bool] = [:]
    var secondary: [SessionID: Bool] = [:]
    var target: SessionID?
    var resumed: [SessionID] = []

    /// Records one decision; returns a complaint if it breaks a rule.
    mutating func record(_ decision: Decision, gain: Float) -> String? {
        switch decision {
        case let .interruptionBegan(id, _):
            if interrupted[id, default: false] { return "second began for \(id)" }
            interrupted[id] = true
        case let .interruptionEnded(id, shouldResume):
            if !interrupted[id, default: false] { return "ended without began for \(id)" }
            interrupted[id] = false
            if shouldResume { resumed.append(id) }
        case let .duck(id, g):
            if ducked[id, default: false] || g != gain { return "duck twice or wrong gain for \(id)" }
            ducked[id] = true
        case let .unduck(id):
            if !ducked[id, default: false] { return "unduck without duck for \(id)" }
            ducked[id] = false
        case let .otherAudioPlaying(id, value):
            if otherAudio[id, default: false] == value { return "otherAudioPlaying unchanged for \(id)" }
            otherAudio[id] = value
        case let .secondaryAudioShouldBeSilenced(id, value):
            if secondary[id, default: false] == value { return "secondary hint unchanged for \(id)" }
            secondary[id] = value
        case let .remoteTargetChanged(id):
            if id == target { return "target unchanged" }
            target = id
        case let .deactivated(id):
            if interrupted[id, default: false] { return "deactivated while interrupted: \(id)" }
        case .rejected:
            return "rejected among other decisions"
        case .pauseForeign, .resumeForeign, .readForeignStatus, .targetChanged:
            break  // other apps' players: checked by ForeignRandomSequenceTests
        }
        return nil
    }

    /// Forgets sessions that are gone.
    mutating func keep(only ids: Set<SessionID>) {
        interrupted = interrupted.filter { ids.contains($0.key) }
        ducked = ducked.filter { ids.contains($0.key) }
        otherAudio = otherAudio.filter { ids.contains($0.key) }
        secondary = secondary.filter { ids.contains($0.key) }
    }
}

/// The rank of a decision in the documented order, and whether it is ordered by session.
private func rank(_ decision: Decision) -> (Int, SessionID?) {
    switch decision {
    case .deactivated, .interruptionBegan, .interruptionEnded: (0, nil)
    case let .duck(id, _), let .unduck(id): (1, id)
    case let .otherAudioPlaying(id, _): (2, id)
    case let .secondaryAudioShouldBeSilenced(id, _): (3, id)
    case .pauseForeign, .resumeForeign, .readForeignStatus: (0, nil)
    case .remoteTargetChanged: (4, nil)
    case .targetChanged: (5, nil)
    case .rejected: (6, nil)
    }
}

/// Every invariant that must hold after one `apply`; returns the broken ones.
func violations(before: SessionPolicy, event: Event, decisions: [Decision], after: SessionPolicy,
                ledger: inout Ledger) -> [String] {
    var problems: [String] = []
    if case .rejected = decisions.first {
        if decisions.count != 1 { problems.append("a rejection came with other decisions") }
        if after != before { problems.append("a rejected event changed the state") }
        return problems
    }
    ledger.resumed = []
    let registered = Set(after.sessions.keys)
    for decision in decisions {
        if let id = decision.sessionID, !registered.contains(id) { problems.append("decision for unregistered \(id)") }
        if let complaint = ledger.record(decision, gain: after.configuration.duckGain) { problems.append(complaint) }
    }
    problems += orderProblems(decisions)
    ledger.keep(only: registered)
    problems += sessionProblems(after, ledger: ledger)
    problems += targetProblems(after, ledger: ledger)
    return problems
}

private func orderProblems(_ decisions: [Decision]) -> [String] {
    let ranks = decisions.map(rank)
    for (a, b) in zip(ranks, ranks.dropFirst()) {
        if a.0 > b.0 { return ["decisions out of order"] }
        if a.0 == b.0, let x = a.1, let y = b.1, x >= y { return ["decisions of one kind not sorted by session"] }
    }
    return []
}

private func sessionProblems(_ policy: SessionPolicy, ledger: Ledger) -> [String] {
    var problems: [String] = []
    let sessions = policy.sessions.values
    for s in sessions {
        if s.isActive && s.isInterrupted { problems.append("\(s.id) active and interrupted") }
        if s.isProducingSound && !s.isActive { problems.append("\(s.id) sounds while inactive") }
        if !s.isInterrupted && s.wasPlayingWhenInterrupted { problems.append("\(s.id) stale wasPlaying") }
        if ledger.interrupted[s.id, default: false] != s.isInterrupted { problems.append("\(s.id) began/ended unpaired") }
        if ledger.ducked[s.id, default: false] != s.isDucked { problems.append("\(s.id) duck decisions disagree") }
        if s.isDucked && !s.isActive { problems.append("\(s.id) ducked while inactive") }
        if s.isDucking && !s.isActive { problems.append("\(s.id) ducking while inactive") }
        for ducker in s.duckedBy where ducker == s.id || policy[ducker].map({ !$0.isActive || !$0.isDucking }) ?? true {
            problems.append("\(s.id) ducked by inactive or non-ducking \(ducker)")
        }
        for cause in s.interruptions {
            switch cause {
            case let .sessionActivated(other) where policy[other] == nil:
                problems.append("\(s.id) interrupted by unregistered \(other)")
            case .screenLocked where !policy.screenLocked || !s.category.isSilencedByScreenLockAndSilentMode,
                 .silentMode where !policy.silentMode || !s.category.isSilencedByScreenLockAndSilentMode:
                problems.append("\(s.id) has a stale silencing cause")
            case .routeDisconnected:
                problems.append("\(s.id) stays interrupted by the route")
            default: break
            }
        }
        if ledger.otherAudio[s.id, default: false] != policy.otherAudioPlaying(for: s.id) {
            problems.append("\(s.id) otherAudioPlaying decisions disagree")
        }
        if ledger.secondary[s.id, default: false] != policy.secondaryAudioShouldBeSilencedHint(for: s.id) {
            problems.append("\(s.id) secondary hint decisions disagree")
        }
    }
    if sessions.filter({ $0.isActive && !$0.isMixable }).count > 1 { problems.append("two active non-mixable sessions") }
    for id in ledger.resumed {
        if sessions.contains(where: { $0.isActive && $0.interrupts(policy[id]!) }) {
            problems.append("\(id) told to resume over an active session")
        }
    }
    return problems
}

private func targetProblems(_ policy: SessionPolicy, ledger: Ledger) -> [String] {
    var problems: [String] = []
    if ledger.target != policy.remoteTarget { problems.append("target decisions disagree") }
    let eligible = policy.sessions.values.filter { $0.isEligibleRemoteTarget && $0.lastSoundTick != nil }
    if let target = policy.remoteTarget {
        if !(policy[target]?.isEligibleRemoteTarget ?? false) { problems.append("ineligible target \(target)") }
        if policy[target]?.lastSoundTick != eligible.compactMap(\.lastSoundTick).max() {
            problems.append("target \(target) is not the last sounder")
        }
    } else if !eligible.isEmpty {
        problems.append("no target although an eligible session sounded")
    }
    return problems
}

@Suite("Random event sequences")
struct RandomSequenceTests {
    static let sequences = 3000
    static let length = 100

    @Test func invariantsHoldOverRandomEventSequences() {
        var applied = 0
        for seed in 0..<UInt64(Self.sequences) {
            var generator = EventGenerator(random: SplitMix64(seed: seed))
            let events = generator.sequence(Self.length)
            var policy = SessionPolicy()
            var ledger = Ledger()
            for (index, event) in events.enumerated() {
                let before = policy
                let decisions = policy.apply(event)
                let problems = violations(before: before, event: event, decisions: decisions, after: policy, ledger: &ledger)
                applied += 1
                if !problems.isEmpty {
                    Issue.record("seed \(seed), event \(index) \(event) → \(decisions): \(problems)")
                    return
                }
            }
        }
        #expect(applied == Self.sequences * (Self.length + 4))
    }

    @Test func theSameEventsGiveTheSameDecisions() {
        for seed in 0..<UInt64(200) {
            var generator = EventGenerator(random: SplitMix64(seed: seed))
            let events = generator.sequence(Self.length)
            var first = SessionPolicy()
            var second = SessionPolicy()
            let a = events.map { first.apply($0) }
            let b = events.map { second.apply($0) }
            #expect(a == b && first == second, "seed \(seed)")
        }
    }
}
