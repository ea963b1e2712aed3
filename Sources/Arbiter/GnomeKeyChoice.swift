/// gsd-media-keys 43's choice of the player its keys go to (`mpris-controller.c`), followed
/// from what the arbiter sees of the same bus: pure, no bus here.
///
/// - A player that appears takes the keys unless the current one is `Playing` (then it is
///   set aside); the current one, displaced, is set aside.
/// - A player that signals a change while it is `Playing` takes them when the current one is
///   not `Playing`.
/// - When the current one's name goes, the one set aside most recently takes over.
///
/// gsd meets players asynchronously (a proxy each), so this is the arbiter's best estimate,
/// exact when events are a few milliseconds apart.
struct GnomeKeyChoice: Sendable, Equatable {
    /// The well-known name gsd sends its keys to, if any.
    private(set) var current: String?
    /// The players set aside, the most recent first.
    private(set) var setAside: [String] = []

    /// `name` appeared; `currentPlaying` says whether the current one is `Playing` now.
    mutating func appeared(_ name: String, currentPlaying: Bool) {
        guard name != current, !setAside.contains(name) else { return }
        if current != nil, currentPlaying {
            setAside.insert(name, at: 0)
        } else {
            take(name)
        }
    }

    /// `name` signalled a property change while `playing` (or not).
    mutating func signalled(_ name: String, playing: Bool, currentPlaying: Bool) {
        guard name != current, playing, !currentPlaying else { return }
        take(name)
    }

    mutating func vanished(_ name: String) {
        if name == current {
            current = setAside.isEmpty ? nil : setAside.removeFirst()
        } else {
            setAside.removeAll { $0 == name }
        }
    }

    private mutating func take(_ name: String) {
        setAside.removeAll { $0 == name }
        if let current { setAside.insert(current, at: 0) }
        current = name
    }
}
