// The remote-command events and the types they carry, with MediaPlayer's names and raw values.

/// What a remote-command handler reports, with Apple's raw values. MPRIS callers get a
/// normal reply on `success` and a named D-Bus error otherwise.
public enum MPRemoteCommandHandlerStatus: Int, Sendable {
    /// The command was carried out.
    case success = 0
    /// The requested content does not exist.
    case noSuchContent = 100
    /// Nothing is loaded that the command could act on.
    case noActionableNowPlayingItem = 110
    /// The output device the command needs is missing.
    case deviceNotFound = 120
    /// The command failed for another reason.
    case commandFailed = 200
}

/// How a queue repeats, with Apple's raw values (MPRIS `LoopStatus`).
public enum MPRepeatType: Int, Sendable {
    /// No repeat (MPRIS `None`).
    case off = 0
    /// The current item repeats (MPRIS `Track`).
    case one = 1
    /// The whole queue repeats (MPRIS `Playlist`).
    case all = 2
}

/// Whether a queue plays shuffled, with Apple's raw values (MPRIS `Shuffle`).
public enum MPShuffleType: Int, Sendable {
    /// In order (MPRIS `Shuffle` false).
    case off = 0
    /// Items shuffled (MPRIS `Shuffle` true).
    case items = 1
    /// Collections shuffled (MPRIS says only true; it arrives as `items`).
    case collections = 2
}

/// Whether a seek command begins or ends a continuous seek.
public enum MPSeekCommandEventType: UInt, Sendable {
    /// The seek begins.
    case beginSeeking = 0
    /// The seek ends.
    case endSeeking = 1
}

/// How long a language-option change lasts.
public enum MPChangeLanguageOptionSetting: Int, Sendable {
    /// No setting.
    case none = 0
    /// For the current item only.
    case nowPlayingItemOnly = 1
    /// For every item.
    case permanent = 2
}

/// A remote-command event: the command it is for and when it happened. Immutable.
public class MPRemoteCommandEvent: NSObject, @unchecked Sendable {
    /// The command the event is for.
    public let command: MPRemoteCommand
    /// When the event happened, in seconds of system uptime.
    public let timestamp: TimeInterval

    init(command: MPRemoteCommand) {
        self.command = command
        timestamp = ProcessInfo.processInfo.systemUptime
    }
}

/// A skip forward or backward by an interval (MPRIS `Seek` by that offset).
public class MPSkipIntervalCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {
    /// The interval to skip, in seconds (positive for either direction).
    public let interval: TimeInterval

    init(command: MPRemoteCommand, interval: TimeInterval) {
        self.interval = interval
        super.init(command: command)
    }
}

/// The start or end of a continuous seek. MPRIS has no continuous seek: never sent.
public class MPSeekCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {
    /// Whether the seek begins or ends.
    public let type: MPSeekCommandEventType

    init(command: MPRemoteCommand, type: MPSeekCommandEventType) {
        self.type = type
        super.init(command: command)
    }
}

/// A jump to a position in the current item (MPRIS `SetPosition`).
public class MPChangePlaybackPositionCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {
    /// The position to go to, in seconds from the start of the item.
    public let positionTime: TimeInterval

    init(command: MPRemoteCommand, positionTime: TimeInterval) {
        self.positionTime = positionTime
        super.init(command: command)
    }
}

/// A change of the playback rate (MPRIS `Rate`).
public class MPChangePlaybackRateCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {
    /// The new rate.
    public let playbackRate: Float

    init(command: MPRemoteCommand, playbackRate: Float) {
        self.playbackRate = playbackRate
        super.init(command: command)
    }
}

/// A change of the repeat mode (MPRIS `LoopStatus`).
public class MPChangeRepeatModeCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {
    /// The new repeat mode.
    public let repeatType: MPRepeatType
    /// Whether the mode should outlast the current item (always true from MPRIS).
    public let preservesRepeatMode: Bool

    init(command: MPRemoteCommand, repeatType: MPRepeatType) {
        self.repeatType = repeatType
        preservesRepeatMode = true
        super.init(command: command)
    }
}

/// A change of the shuffle mode (MPRIS `Shuffle`).
public class MPChangeShuffleModeCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {
    /// The new shuffle mode.
    public let shuffleType: MPShuffleType
    /// Whether the mode should outlast the current item (always true from MPRIS).
    public let preservesShuffleMode: Bool

    init(command: MPRemoteCommand, shuffleType: MPShuffleType) {
        self.shuffleType = shuffleType
        preservesShuffleMode = true
        super.init(command: command)
    }
}

/// A rating of the current item. MPRIS carries no rating: never sent.
public class MPRatingCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {
    /// The rating, between the command's minimum and maximum.
    public let rating: Float

    init(command: MPRemoteCommand, rating: Float) {
        self.rating = rating
        super.init(command: command)
    }
}

/// Feedback on the current item (like, dislike, bookmark). MPRIS carries none: never sent.
public class MPFeedbackCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {
    /// Whether the feedback is negative (an undo).
    public let isNegative: Bool

    init(command: MPRemoteCommand, isNegative: Bool) {
        self.isNegative = isNegative
        super.init(command: command)
    }
}

/// A change of a language option (subtitles, audio track). MPRIS carries none: never sent.
public class MPChangeLanguageOptionCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {
    /// How long the change lasts.
    public let setting: MPChangeLanguageOptionSetting

    init(command: MPRemoteCommand, setting: MPChangeLanguageOptionSetting) {
        self.setting = setting
        super.init(command: command)
    }
}
