import SessionPolicy

typealias Event = SessionPolicy.Event
typealias Decision = SessionPolicy.Decision

// Sessions of the scenarios, named for the app each stands for.
let music: SessionID = ":1.10"
let podcast: SessionID = ":1.11"
let game: SessionID = ":1.12"
let navigation: SessionID = ":1.13"
let call: SessionID = ":1.14"
let video: SessionID = ":1.15"
let stranger: SessionID = ":1.99"

extension SessionPolicy {
    /// Applies `events` in order and returns all their decisions.
    @discardableResult
    mutating func run(_ events: Event...) -> [Decision] {
        events.flatMap { apply($0) }
    }

    /// Registers a session with a category, then optionally activates it and starts its sound.
    @discardableResult
    mutating func add(_ id: SessionID, _ category: Category = .soloAmbient, options: CategoryOptions = [],
                      mode: Mode = .default, active: Bool = false, playing: Bool = false,
                      remote: Bool = false, tick: UInt64 = 1) -> [Decision] {
        var events: [Event] = [.register(id, appName: id.rawValue, tick: tick),
                               .setCategory(id, category, options: options, mode: mode)]
        if remote { events.append(.remoteCommandsChanged(id, anyEnabled: true)) }
        if active || playing { events.append(.activate(id)) }
        if playing { events.append(.soundStarted(id, tick: tick)) }
        return events.flatMap { apply($0) }
    }
}

extension Array where Element == Decision {
    /// Only the interruption decisions, in order.
    var interruptions: [Decision] {
        filter {
            switch $0 {
            case .interruptionBegan, .interruptionEnded: true
            default: false
            }
        }
    }

    /// Only `duck` and `unduck`, in order.
    var ducking: [Decision] {
        filter {
            switch $0 {
            case .duck, .unduck: true
            default: false
            }
        }
    }

    /// Only the remote-target changes.
    var targetChanges: [Decision] {
        filter { if case .remoteTargetChanged = $0 { true } else { false } }
    }
}
