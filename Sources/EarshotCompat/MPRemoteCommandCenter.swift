package import Earshot

/// The remote commands the app responds to, with `MPRemoteCommandCenter`'s names over
/// Earshot's `RemoteCommandCenter.shared`, which MPRIS drives (media keys, headset
/// buttons, desktop widgets, `playerctl`).
///
/// MPRIS carries play, pause, toggle, stop, next, previous, a relative seek, a position, a
/// rate, repeat and shuffle. Its relative seek reaches ``skipForwardCommand`` (a positive
/// offset) or ``skipBackwardCommand`` (a negative one) with the offset's size as the
/// interval. ``seekForwardCommand``, ``seekBackwardCommand`` (continuous seeks),
/// ``likeCommand``, ``dislikeCommand``, ``bookmarkCommand``, ``ratingCommand``,
/// ``enableLanguageOptionCommand`` and ``disableLanguageOptionCommand`` have no MPRIS
/// counterpart: they are present, take handlers and are never sent.
///
/// The first handler added publishes the app on MPRIS, as iOS needs no call for the lock
/// screen to show it.
public final class MPRemoteCommandCenter: NSObject, @unchecked Sendable {
    private static let instance = MPRemoteCommandCenter(commands: .shared, publishes: true)

    /// The process's command center.
    public static func shared() -> MPRemoteCommandCenter { instance }

    /// Play (MPRIS `Play`).
    public let playCommand = MPRemoteCommand()
    /// Pause (MPRIS `Pause`).
    public let pauseCommand = MPRemoteCommand()
    /// Play or pause (MPRIS `PlayPause`, the media keys' play key).
    public let togglePlayPauseCommand = MPRemoteCommand()
    /// Stop (MPRIS `Stop`).
    public let stopCommand = MPRemoteCommand()
    /// The next item (MPRIS `Next`).
    public let nextTrackCommand = MPRemoteCommand()
    /// The previous item (MPRIS `Previous`).
    public let previousTrackCommand = MPRemoteCommand()
    /// A jump to a position (MPRIS `SetPosition`).
    public let changePlaybackPositionCommand = MPChangePlaybackPositionCommand()
    /// A skip forward (MPRIS `Seek` with a positive offset).
    public let skipForwardCommand = MPSkipIntervalCommand()
    /// A skip backward (MPRIS `Seek` with a negative offset).
    public let skipBackwardCommand = MPSkipIntervalCommand()
    /// A continuous seek forward. MPRIS has none: never sent.
    public let seekForwardCommand = MPRemoteCommand(carriedByMPRIS: false)
    /// A continuous seek backward. MPRIS has none: never sent.
    public let seekBackwardCommand = MPRemoteCommand(carriedByMPRIS: false)
    /// A change of the rate (MPRIS `Rate`).
    public let changePlaybackRateCommand = MPChangePlaybackRateCommand()
    /// A change of the repeat mode (MPRIS `LoopStatus`).
    public let changeRepeatModeCommand = MPChangeRepeatModeCommand()
    /// A change of the shuffle mode (MPRIS `Shuffle`).
    public let changeShuffleModeCommand = MPChangeShuffleModeCommand()
    /// Like. MPRIS has none: never sent.
    public let likeCommand = MPFeedbackCommand(carriedByMPRIS: false)
    /// Dislike. MPRIS has none: never sent.
    public let dislikeCommand = MPFeedbackCommand(carriedByMPRIS: false)
    /// Bookmark. MPRIS has none: never sent.
    public let bookmarkCommand = MPFeedbackCommand(carriedByMPRIS: false)
    /// Rate the item. MPRIS has none: never sent.
    public let ratingCommand = MPRatingCommand(carriedByMPRIS: false)
    /// Turn a language option on. MPRIS has none: never sent.
    public let enableLanguageOptionCommand = MPChangeLanguageOptionCommand(carriedByMPRIS: false)
    /// Turn a language option off. MPRIS has none: never sent.
    public let disableLanguageOptionCommand = MPChangeLanguageOptionCommand(carriedByMPRIS: false)

    /// Earshot's center the commands are linked to.
    let commands: RemoteCommandCenter
    /// Earshot's targets, by the name of the Earshot command they were added to; changed
    /// under this lock only, so that links follow the handlers in order.
    private let links = Locked<[String: RemoteCommandTarget]>([:])

    /// Whether a handler publishes the app on MPRIS (the shared center's do).
    private let publishes: Bool

    /// A center over Earshot's `commands` (the package's tests make their own, which do not
    /// publish; apps use ``shared()``).
    package init(commands: RemoteCommandCenter, publishes: Bool = false) {
        self.commands = commands
        self.publishes = publishes
        super.init()
        let all: [MPRemoteCommand] = [
            playCommand, pauseCommand, togglePlayPauseCommand, stopCommand, nextTrackCommand, previousTrackCommand,
            changePlaybackPositionCommand, skipForwardCommand, skipBackwardCommand, seekForwardCommand,
            seekBackwardCommand, changePlaybackRateCommand, changeRepeatModeCommand, changeShuffleModeCommand,
            likeCommand, dislikeCommand, bookmarkCommand, ratingCommand, enableLanguageOptionCommand,
            disableLanguageOptionCommand,
        ]
        for command in all {
            command.changed.withLock { $0 = { [weak self] in self?.commandsChanged() } }
        }
        changePlaybackRateCommand.ratesChanged.withLock {
            $0 = { [commands] rates in commands.changePlaybackRateCommand.supportedPlaybackRates = rates }
        }
        commandsChanged()
    }

    /// Links each Earshot command to the compat commands it feeds, and publishes the app on
    /// MPRIS once a carried command has a handler.
    private func commandsChanged() {
        links.withLock { links in
            link(&links, "play", commands.playCommand, [playCommand]) { _ in (self.playCommand, MPRemoteCommandEvent(command: self.playCommand)) }
            link(&links, "pause", commands.pauseCommand, [pauseCommand]) { _ in (self.pauseCommand, MPRemoteCommandEvent(command: self.pauseCommand)) }
            link(&links, "toggle", commands.togglePlayPauseCommand, [togglePlayPauseCommand]) { _ in
                (self.togglePlayPauseCommand, MPRemoteCommandEvent(command: self.togglePlayPauseCommand))
            }
            link(&links, "stop", commands.stopCommand, [stopCommand]) { _ in (self.stopCommand, MPRemoteCommandEvent(command: self.stopCommand)) }
            link(&links, "next", commands.nextTrackCommand, [nextTrackCommand]) { _ in
                (self.nextTrackCommand, MPRemoteCommandEvent(command: self.nextTrackCommand))
            }
            link(&links, "previous", commands.previousTrackCommand, [previousTrackCommand]) { _ in
                (self.previousTrackCommand, MPRemoteCommandEvent(command: self.previousTrackCommand))
            }
            link(&links, "seek", commands.seekCommand, [skipForwardCommand, skipBackwardCommand]) { event in
                let command = event.offset >= 0 ? self.skipForwardCommand : self.skipBackwardCommand
                return (command, MPSkipIntervalCommandEvent(command: command, interval: abs(event.offset)))
            }
            link(&links, "position", commands.changePlaybackPositionCommand, [changePlaybackPositionCommand]) { event in
                (self.changePlaybackPositionCommand,
                 MPChangePlaybackPositionCommandEvent(command: self.changePlaybackPositionCommand, positionTime: event.positionTime))
            }
            link(&links, "rate", commands.changePlaybackRateCommand, [changePlaybackRateCommand]) { event in
                (self.changePlaybackRateCommand,
                 MPChangePlaybackRateCommandEvent(command: self.changePlaybackRateCommand, playbackRate: Float(event.playbackRate)))
            }
            link(&links, "repeat", commands.changeRepeatModeCommand, [changeRepeatModeCommand]) { event in
                let type: MPRepeatType = switch event.repeatMode { case .off: .off; case .one: .one; case .all: .all }
                return (self.changeRepeatModeCommand, MPChangeRepeatModeCommandEvent(command: self.changeRepeatModeCommand, repeatType: type))
            }
            link(&links, "shuffle", commands.changeShuffleModeCommand, [changeShuffleModeCommand]) { event in
                let type: MPShuffleType = event.shuffleMode == .off ? .off : .items
                return (self.changeShuffleModeCommand, MPChangeShuffleModeCommandEvent(command: self.changeShuffleModeCommand, shuffleType: type))
            }
        }
        let carried: [MPRemoteCommand] = [
            playCommand, pauseCommand, togglePlayPauseCommand, stopCommand, nextTrackCommand, previousTrackCommand,
            changePlaybackPositionCommand, skipForwardCommand, skipBackwardCommand, changePlaybackRateCommand,
            changeRepeatModeCommand, changeShuffleModeCommand,
        ]
        if publishes, carried.contains(where: \.hasTargets) {
            RemoteControlPublication.publishIfNeeded()
        }
    }

    /// Gives Earshot's `command` one handler while any of `sources` has one, enabled while
    /// one of those is enabled; the handler passes each event (as `route` turns it into a
    /// compat command and event) to that command's newest handler.
    private func link<Event: Sendable>(
        _ links: inout [String: RemoteCommandTarget], _ name: String, _ command: RemoteCommand<Event>,
        _ sources: [MPRemoteCommand],
        route: @escaping @Sendable (Event) -> (MPRemoteCommand, MPRemoteCommandEvent)
    ) {
        let wanted = sources.contains(where: \.hasTargets)
        let enabled = !wanted || sources.contains(where: \.isAvailable)
        if command.isEnabled != enabled { command.isEnabled = enabled }
        if wanted, links[name] == nil {
            links[name] = command.addTarget { event in
                let (target, compatEvent) = route(event)
                guard let status = target.perform(compatEvent) else { return .commandFailed }
                return RemoteCommandHandlerStatus(status)
            }
        } else if !wanted, let target = links.removeValue(forKey: name) {
            command.removeTarget(target)
        }
    }
}

extension RemoteCommandHandlerStatus {
    /// Earshot's status for Apple's.
    init(_ status: MPRemoteCommandHandlerStatus) {
        self = switch status {
        case .success: .success
        case .noSuchContent: .noSuchContent
        case .noActionableNowPlayingItem: .noActionableNowPlayingItem
        case .deviceNotFound: .deviceNotFound
        case .commandFailed: .commandFailed
        }
    }
}
