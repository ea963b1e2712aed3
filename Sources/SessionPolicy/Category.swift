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
    /// `playAndRecord`, as on iOS. `ambient` accepts `mixWithOthers`, which it implies
    /// anyway, and `duckOthers` (the Neuburg chapter's recipe for ducking the music
    /// under a brief sound).
    public var acceptsMixingOptions: Bool {
        self == .playback || self == .playAndRecord
    }

    /// Whether a session of this category may duck others: the categories that accept
    /// mixing options, and `ambient`.
    public var acceptsDuckOthers: Bool {
        acceptsMixingOptions || self == .ambient
    }
}

/// Options that modify a category: the `AVAudioSession.CategoryOptions` analog.
///
/// The raw values are those of iOS, so a wire format can carry them unchanged.
/// The route options (``allowBluetooth``, ``allowBluetoothA2DP``, ``allowAirPlay``,
/// ``defaultToSpeaker``) are accepted with every category, kept in
/// ``Session/options`` and read back, but change nothing on a desktop, where the
/// routes are the sound server's to choose.
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

    /// Allow Bluetooth hands-free devices as input and output (iOS: with `record` and
    /// `playAndRecord`). Kept and read back; the desktop's sound server routes.
    public static let allowBluetooth = CategoryOptions(rawValue: 0x4)
    /// Route to the built-in speaker rather than the receiver (iOS: `playAndRecord`).
    /// Kept and read back; a desktop has no receiver.
    public static let defaultToSpeaker = CategoryOptions(rawValue: 0x8)
    /// Allow Bluetooth A2DP output. Kept and read back; the sound server routes.
    public static let allowBluetoothA2DP = CategoryOptions(rawValue: 0x20)
    /// Allow AirPlay output. Kept and read back; the sound server routes.
    public static let allowAirPlay = CategoryOptions(rawValue: 0x40)

    /// The bit that distinguishes ``interruptSpokenAudioAndMixWithOthers`` from
    /// ``mixWithOthers``.
    static let interruptSpokenAudioBit = CategoryOptions(rawValue: 0x10)

    /// Every bit that makes a session mixable.
    static let mixingBits: CategoryOptions = [.mixWithOthers, .duckOthers, .interruptSpokenAudioBit]

    /// Whether iOS accepts these options with `category`: mixing bits only with
    /// `playback` and `playAndRecord`; `mixWithOthers` and `duckOthers` with `ambient`.
    public func areAllowed(with category: Category) -> Bool {
        firstDisallowed(with: category) == nil
    }

    /// The first option (in the order mixWithOthers, duckOthers,
    /// interruptSpokenAudioAndMixWithOthers) that `category` does not accept, for an
    /// error that names it; `nil` if all are accepted.
    public func firstDisallowed(with category: Category) -> CategoryOptions? {
        if category.acceptsMixingOptions { return nil }
        if contains(.interruptSpokenAudioBit) { return .interruptSpokenAudioAndMixWithOthers }
        if contains(.duckOthers), !category.acceptsDuckOthers { return .duckOthers }
        if contains(.mixWithOthers), category != .ambient { return .mixWithOthers }
        return nil
    }

    /// The options as iOS reads them back after setting them with `category`:
    /// `duckOthers` and `interruptSpokenAudioAndMixWithOthers` carry `mixWithOthers`,
    /// and `ambient` always has it. The route options are kept as they are.
    public func normalized(for category: Category) -> CategoryOptions {
        var options = self
        if category == .ambient || !options.isDisjoint(with: Self.mixingBits) {
            options.insert(.mixWithOthers)
        }
        return options
    }
}

/// What kind of audio a session plays: the `AVAudioSession.Mode` analog.
///
/// Only ``spokenAudio`` changes a rule (see below); the others are accepted, kept and
/// read back, as an app ported from iOS sets them, but tune nothing on a desktop (iOS
/// uses them to pick signal processing and routes).
public enum Mode: String, Sendable, Hashable, CaseIterable {
    /// Anything else.
    case `default`
    /// Two-way voice (VoIP): iOS turns on echo cancellation and voice processing.
    case voiceChat
    /// Two-way video chat.
    case videoChat
    /// Voice chat in a game (Game Kit).
    case gameChat
    /// Recording video.
    case videoRecording
    /// Measuring the input or output: iOS turns off the signal processing.
    case measurement
    /// Playing a movie: iOS adjusts the signal processing for it.
    case moviePlayback
    /// Continuous spoken content (podcasts, audio books): a session with
    /// ``CategoryOptions/interruptSpokenAudioAndMixWithOthers`` interrupts it (it
    /// pauses instead of talking over the prompt).
    case spokenAudio
}

extension CategoryOptions: CustomStringConvertible {
    /// Every option by its iOS name, in the order lists carry them (the arbiter's wire
    /// format uses these names).
    public static let named: [(name: String, option: CategoryOptions)] = [
        ("mixWithOthers", .mixWithOthers), ("duckOthers", .duckOthers),
        ("interruptSpokenAudioAndMixWithOthers", .interruptSpokenAudioAndMixWithOthers),
        ("allowBluetooth", .allowBluetooth), ("allowBluetoothA2DP", .allowBluetoothA2DP),
        ("allowAirPlay", .allowAirPlay), ("defaultToSpeaker", .defaultToSpeaker),
    ]

    /// The iOS names of the options set, in ``named``'s order; `mixWithOthers` is left out
    /// where `interruptSpokenAudioAndMixWithOthers`, which includes its bit, is named.
    public var names: [String] {
        CategoryOptions.named.filter { contains($0.option) && !($0.option == .mixWithOthers && contains(.interruptSpokenAudioAndMixWithOthers)) }
            .map(\.name)
    }

    /// The names in brackets, as `[mixWithOthers, duckOthers]` (`[]` for none).
    public var description: String { "[" + names.joined(separator: ", ") + "]" }
}
