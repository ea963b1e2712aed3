// Public for `RouteChangeReason` alone, which is Earshot's type: a public import does not
// re-export Earshot, whose unprefixed names stay out of an app's namespace.
public import Earshot

// The session's nested types with Apple's names and raw values.

extension AVAudioSession {
    /// What the session's audio is for, with Apple's raw values
    /// (`"AVAudioSessionCategoryPlayback"`, …).
    public struct Category: RawRepresentable, Hashable, Sendable {
        /// The category's name, as iOS spells it.
        public let rawValue: String
        /// A category from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A category from its name (the initializer iOS's imported string enums have).
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// Mixes with other audio; silenced by the screen lock.
        public static let ambient = Category(rawValue: "AVAudioSessionCategoryAmbient")
        /// The default: interrupts other non-mixable audio; silenced by the screen lock.
        public static let soloAmbient = Category(rawValue: "AVAudioSessionCategorySoloAmbient")
        /// Audio that matters on its own; plays on with the screen locked.
        public static let playback = Category(rawValue: "AVAudioSessionCategoryPlayback")
        /// Recording.
        public static let record = Category(rawValue: "AVAudioSessionCategoryRecord")
        /// Recording and playing at once.
        public static let playAndRecord = Category(rawValue: "AVAudioSessionCategoryPlayAndRecord")
        /// Several routes at once. Earshot applies it as `playAndRecord` (the sound server
        /// routes); it reads back as `multiRoute`.
        public static let multiRoute = Category(rawValue: "AVAudioSessionCategoryMultiRoute")
        /// Deprecated on iOS. Applied as `record`; reads back as `audioProcessing`.
        public static let audioProcessing = Category(rawValue: "AVAudioSessionCategoryAudioProcessing")

        /// Earshot's category for this one.
        var earshot: AudioSession.Category {
            switch self {
            case .ambient: .ambient
            case .playback: .playback
            case .record, .audioProcessing: .record
            case .playAndRecord, .multiRoute: .playAndRecord
            default: .soloAmbient
            }
        }

        /// The category for Earshot's.
        init(_ category: AudioSession.Category) {
            switch category {
            case .ambient: self = .ambient
            case .soloAmbient: self = .soloAmbient
            case .playback: self = .playback
            case .record: self = .record
            case .playAndRecord: self = .playAndRecord
            }
        }
    }

    /// The category's specialisation, with Apple's raw values (`"AVAudioSessionModeDefault"`, …).
    /// Only `spokenAudio` changes a rule on the desktop; the others tag the streams' role.
    public struct Mode: RawRepresentable, Hashable, Sendable {
        /// The mode's name, as iOS spells it.
        public let rawValue: String
        /// A mode from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A mode from its name (the initializer iOS's imported string enums have).
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// Anything else.
        public static let `default` = Mode(rawValue: "AVAudioSessionModeDefault")
        /// Two-way voice.
        public static let voiceChat = Mode(rawValue: "AVAudioSessionModeVoiceChat")
        /// Voice chat in a game.
        public static let gameChat = Mode(rawValue: "AVAudioSessionModeGameChat")
        /// Recording video.
        public static let videoRecording = Mode(rawValue: "AVAudioSessionModeVideoRecording")
        /// Measuring the input or output.
        public static let measurement = Mode(rawValue: "AVAudioSessionModeMeasurement")
        /// Playing a movie.
        public static let moviePlayback = Mode(rawValue: "AVAudioSessionModeMoviePlayback")
        /// Two-way video.
        public static let videoChat = Mode(rawValue: "AVAudioSessionModeVideoChat")
        /// Continuous spoken content (podcasts, audio books).
        public static let spokenAudio = Mode(rawValue: "AVAudioSessionModeSpokenAudio")
        /// Short prompts (navigation). Earshot has no such mode: applied as `default`; reads
        /// back as `voicePrompt`.
        public static let voicePrompt = Mode(rawValue: "AVAudioSessionModeVoicePrompt")

        /// Earshot's mode for this one.
        var earshot: AudioSession.Mode {
            switch self {
            case .voiceChat: .voiceChat
            case .gameChat: .gameChat
            case .videoRecording: .videoRecording
            case .measurement: .measurement
            case .moviePlayback: .moviePlayback
            case .videoChat: .videoChat
            case .spokenAudio: .spokenAudio
            default: .default
            }
        }

        /// The mode for Earshot's.
        init(_ mode: AudioSession.Mode) {
            switch mode {
            case .default: self = .default
            case .voiceChat: self = .voiceChat
            case .videoChat: self = .videoChat
            case .gameChat: self = .gameChat
            case .videoRecording: self = .videoRecording
            case .measurement: self = .measurement
            case .moviePlayback: self = .moviePlayback
            case .spokenAudio: self = .spokenAudio
            }
        }
    }

    /// How the session's audio behaves towards others, with Apple's bits. The route
    /// options are kept and read back but change nothing on a desktop, where the sound
    /// server routes.
    public struct CategoryOptions: OptionSet, Hashable, Sendable {
        /// The options' bits.
        public let rawValue: UInt
        /// Options from their bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// Mix with other audio instead of interrupting it.
        public static let mixWithOthers = CategoryOptions(rawValue: 0x1)
        /// Lower other audio while the session is active (implies `mixWithOthers`).
        public static let duckOthers = CategoryOptions(rawValue: 0x2)
        /// Allow Bluetooth hands-free devices (kept; the sound server routes).
        public static let allowBluetooth = CategoryOptions(rawValue: 0x4)
        /// Route to the speaker rather than the receiver (kept; a desktop has no receiver).
        public static let defaultToSpeaker = CategoryOptions(rawValue: 0x8)
        /// Mix with others, but interrupt spoken audio (includes the `mixWithOthers` bit).
        public static let interruptSpokenAudioAndMixWithOthers = CategoryOptions(rawValue: 0x11)
        /// Allow Bluetooth A2DP output (kept; the sound server routes).
        public static let allowBluetoothA2DP = CategoryOptions(rawValue: 0x20)
        /// Allow AirPlay output (kept; there is no AirPlay).
        public static let allowAirPlay = CategoryOptions(rawValue: 0x40)
        /// Keep playing when the built-in microphone is muted (kept; there is no such mute).
        public static let overrideMutedMicrophoneInterruption = CategoryOptions(rawValue: 0x80)

        /// The bits Earshot knows (all but `overrideMutedMicrophoneInterruption`).
        var earshot: AudioSession.CategoryOptions { AudioSession.CategoryOptions(rawValue: rawValue & 0x7F) }
    }

    /// How ``AVAudioSession/setActive(_:options:)`` acts.
    public struct SetActiveOptions: OptionSet, Hashable, Sendable {
        /// The options' bits.
        public let rawValue: UInt
        /// Options from their bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// On deactivation, tell the sessions this one interrupted that they may resume.
        public static let notifyOthersOnDeactivation = SetActiveOptions(rawValue: 1)
    }

    /// An interruption's phase, as `AVAudioSessionInterruptionTypeKey` carries it.
    public enum InterruptionType: UInt, Sendable {
        /// The interruption ended (0).
        case ended = 0
        /// The interruption began (1): the session's players are paused.
        case began = 1
    }

    /// What an ended interruption says, as `AVAudioSessionInterruptionOptionKey` carries it.
    public struct InterruptionOptions: OptionSet, Hashable, Sendable {
        /// The options' bits.
        public let rawValue: UInt
        /// Options from their bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// The interrupter deactivated with `notifyOthersOnDeactivation`: play again.
        public static let shouldResume = InterruptionOptions(rawValue: 1)
    }

    /// Why an interruption began, as `AVAudioSessionInterruptionReasonKey` carries it.
    /// Earshot's reasons (another session or app, the screen lock, silent mode) are all
    /// `default`, but for a lost route.
    public enum InterruptionReason: UInt, Sendable {
        /// Another session, another app, or the screen lock interrupted.
        case `default` = 0
        /// The app was suspended (never on a desktop).
        case appWasSuspended = 1
        /// The built-in microphone was muted (never on a desktop).
        case builtInMicMuted = 2
        /// The output the session played to went away.
        case routeDisconnected = 4
    }

    /// Why the route changed, as `AVAudioSessionRouteChangeReasonKey` carries it: Earshot's
    /// reasons, which have all eight of Apple's cases and raw values. Earshot reports
    /// `unknown`, `newDeviceAvailable`, `oldDeviceUnavailable`, `categoryChange`, `override`
    /// and `routeConfigurationChange`; `wakeFromSleep` and `noSuitableRouteForCategory` are
    /// never posted yet.
    public typealias RouteChangeReason = Earshot.AudioSession.RouteChangeReason

    /// Whether secondary audio should be silenced, as
    /// `AVAudioSessionSilenceSecondaryAudioHintTypeKey` carries it.
    public enum SilenceSecondaryAudioHintType: UInt, Sendable {
        /// Other audio stopped: secondary audio may play again (0).
        case end = 0
        /// Other audio started: silence secondary audio (1).
        case begin = 1
    }

    /// An output override for `playAndRecord`, with Apple's raw values.
    public enum PortOverride: UInt, Sendable {
        /// No override.
        case none = 0
        /// The built-in speaker (`'spkr'`).
        case speaker = 0x7370_6B72
    }

    /// Whether the app may record, with Apple's raw values.
    public enum RecordPermission: UInt, Sendable {
        /// Not asked yet (`'undt'`).
        case undetermined = 0x756E_6474
        /// Refused (`'deny'`).
        case denied = 0x6465_6E79
        /// Allowed (`'grnt'`): always, on a desktop.
        case granted = 0x6772_6E74
    }

    /// How the session shares its route (kept; the desktop's sound server routes).
    public enum RouteSharingPolicy: UInt, Sendable {
        /// The default policy.
        case `default` = 0
        /// Long-form audio.
        case longFormAudio = 1
        /// Independent of other sessions.
        case independent = 2
        /// Long-form video.
        case longFormVideo = 3
    }

    /// A kind of port, with Apple's raw values (`"Headphones"`, `"Speaker"`, …).
    public struct Port: RawRepresentable, Hashable, Sendable {
        /// The port type's name, as iOS spells it.
        public let rawValue: String
        /// A port type from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A port type from its name (the initializer iOS's imported string enums have).
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// Line-level input.
        public static let lineIn = Port(rawValue: "LineIn")
        /// A built-in microphone.
        public static let builtInMic = Port(rawValue: "MicrophoneBuiltIn")
        /// A wired headset's microphone.
        public static let headsetMic = Port(rawValue: "MicrophoneWired")
        /// Line-level output.
        public static let lineOut = Port(rawValue: "LineOut")
        /// Wired headphones.
        public static let headphones = Port(rawValue: "Headphones")
        /// Bluetooth A2DP output.
        public static let bluetoothA2DP = Port(rawValue: "BluetoothA2DPOutput")
        /// The phone's receiver (never on a desktop).
        public static let builtInReceiver = Port(rawValue: "Receiver")
        /// Built-in or attached speakers.
        public static let builtInSpeaker = Port(rawValue: "Speaker")
        /// HDMI.
        public static let HDMI = Port(rawValue: "HDMI")
        /// AirPlay (never on a desktop).
        public static let airPlay = Port(rawValue: "AirPlay")
        /// Bluetooth Low Energy output.
        public static let bluetoothLE = Port(rawValue: "BluetoothLE")
        /// Bluetooth hands-free.
        public static let bluetoothHFP = Port(rawValue: "BluetoothHFP")
        /// USB audio.
        public static let usbAudio = Port(rawValue: "USBAudio")
        /// CarPlay (never on a desktop).
        public static let carAudio = Port(rawValue: "CarAudio")
        /// A virtual port with no hardware behind it (a null sink, a monitor source).
        public static let virtual = Port(rawValue: "Virtual")
        /// DisplayPort.
        public static let displayPort = Port(rawValue: "DisplayPort")
        /// An output Earshot could not classify. Not one of Apple's values.
        public static let unknown = Port(rawValue: "Unknown")
    }
}
