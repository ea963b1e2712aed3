/// What a session's audio is for: the `AVAudioSession.Category` analog.
///
/// The category decides whether the session mixes with other audio, whether the
/// screen lock and the silent switch silence it, and whether it can become the
/// remote-control target.
///
/// | Category        | Mixes with others            | Silenced by lock / silent mode |
/// |-----------------|------------------------------|--------------------------------|
/// | `ambient`       | always                       | yes                            |
/// | `soloAmbient`   | never (the default)          | yes                            |
/// | `playback`      | only with a mixing option    | no                             |
/// | `record`        | never                        | no                             |
/// | `playAndRecord` | only with a mixing option    | no                             |
public enum Category: String, Sendable, Hashable, CaseIterable {
    /// Sound that accompanies the app (game effects): mixes with everything, silenced
    /// by the screen lock and by silent mode.
    case ambient
    /// The default: like `ambient`, but non-mixable, so activating it interrupts the
    /// other non-mixable sessions.
    case soloAmbient
    /// Audio that matters on its own (music, podcasts, video): keeps playing with the
    /// screen locked and in silent mode; non-mixable unless a mixing option is set.
    case playback
    /// Recording: non-mixable, keeps running with the screen locked.
    case record
    /// Recording and playing at once (calls, voice chat): keeps running with the screen
    /// locked; non-mixable unless a mixing option is set.
    case playAndRecord

    /// Whether the screen lock and silent mode silence sessions of this category
    /// (`ambient` and `soloAmbient`, as on iOS).
    public var isSilencedByScreenLockAndSilentMode: Bool {
        self == .ambient || self == .soloAmbient
    }

    /// Whether the mixing options (`mixWithOthers`, `duckOthers`,
    /// `interruptSpokenAudioAndMixWithOthers`) may be set: only for `playback` and
    /// `playAndRecord`, as on iOS. `ambient` accepts `mixWithOthers` alone, which it
    /// implies anyway.
    public var acceptsMixingOptions: Bool {
        self == .playback || self == .playAndRecord
    }
}

/// Options that modify a category: the `AVAudioSession.CategoryOptions` analog.
///
/// The raw values are those of iOS, so a wire format can carry them unchanged.
/// Bits the policy does not model (route options such as `allowBluetooth`) are kept
/// in ``Session/options`` but have no effect.
public struct CategoryOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt

    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Mix with the audio of other sessions instead of interrupting them; the session
    /// is then mixable (other non-mixable sessions do not interrupt it either).
    public static let mixWithOthers = CategoryOptions(rawValue: 0x1)
    /// Lower the volume of the other active sessions while this one is active. Implies
    /// ``mixWithOthers``.
    public static let duckOthers = CategoryOptions(rawValue: 0x2)
    /// Mix with others, but interrupt the sessions whose mode is
    /// ``Mode/spokenAudio`` (a navigation prompt pauses a podcast). Includes the
    /// ``mixWithOthers`` bit, as on iOS.
    public static let interruptSpokenAudioAndMixWithOthers = CategoryOptions(rawValue: 0x11)

    /// The bit that distinguishes ``interruptSpokenAudioAndMixWithOthers`` from
    /// ``mixWithOthers``.
    static let interruptSpokenAudioBit = CategoryOptions(rawValue: 0x10)

    /// Every bit that makes a session mixable.
    static let mixingBits: CategoryOptions = [.mixWithOthers, .duckOthers, .interruptSpokenAudioBit]

    /// Whether iOS accepts these options with `category`: mixing bits only with
    /// `playback` and `playAndRecord`, or `mixWithOthers` alone with `ambient`.
    public func areAllowed(with category: Category) -> Bool {
        let mixing = intersection(Self.mixingBits)
        if mixing.isEmpty || category.acceptsMixingOptions { return true }
        return category == .ambient && mixing == .mixWithOthers
    }

    /// The options as iOS reads them back after setting them with `category`:
    /// `duckOthers` and `interruptSpokenAudioAndMixWithOthers` carry `mixWithOthers`,
    /// and `ambient` always has it.
    func normalized(for category: Category) -> CategoryOptions {
        var options = self
        if category == .ambient || !options.isDisjoint(with: Self.mixingBits) {
            options.insert(.mixWithOthers)
        }
        return options
    }
}

/// What kind of audio a session plays: the part of `AVAudioSession.Mode` the policy
/// needs.
public enum Mode: String, Sendable, Hashable, CaseIterable {
    /// Anything else.
    case `default`
    /// Continuous spoken content (podcasts, audio books): a session with
    /// ``CategoryOptions/interruptSpokenAudioAndMixWithOthers`` interrupts it (it
    /// pauses instead of talking over the prompt).
    case spokenAudio
}
