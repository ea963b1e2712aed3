import MPRIS
import Synchronization

/// Remote control without a call, as on iOS: an app that gives a command of
/// ``RemoteCommandCenter/shared`` a handler, or sets ``NowPlayingInfoCenter/default``'s info,
/// shows up on MPRIS (media keys, `playerctl`, the desktop's media widgets) with no
/// ``AudioSession/publishRemoteControl(_:commands:nowPlaying:trackList:)`` call. The
/// ``AudioSession/shared`` session watches both centers from its creation (the first use of
/// it, or the first player that plays) and publishes them once, named after the process. A
/// failed attempt (no session bus) is tried again at the centers' next change, 5 s on at the
/// earliest (``implicitRetryInterval``, as a player's implicit join). The app's
/// own call supersedes it: an implicit player already published is withdrawn first.
extension AudioSession {
    /// Where the implicit publication stands.
    struct ImplicitRemoteControl {
        enum Phase {
            /// Not published; the next use of the centers publishes.
            case idle
            /// A publication is under way.
            case publishing
            /// Published; the player is kept for as long as the session lives.
            case published(MPRISPlayer)
            /// The app published a player of its own: nothing more is done.
            case superseded
        }
        var phase = Phase.idle
        var observations: [ObservationToken] = []
        /// After a failed attempt: no other before then.
        var retryAt: ContinuousClock.Instant?
    }

    /// Watches `commands` and `nowPlaying` and publishes them once either is in use.
    func publishSharedCentersImplicitly(commands: RemoteCommandCenter = .shared, nowPlaying: NowPlayingInfoCenter = .default) {
        let onCommands = commands.observe { [weak self] in self?.publishImplicitlyIfUsed(commands, nowPlaying) }
        let onInfo = nowPlaying.observe { [weak self] _ in self?.publishImplicitlyIfUsed(commands, nowPlaying) }
        implicitRemoteControl.withLock { $0.observations = [onCommands, onInfo] }
        publishImplicitlyIfUsed(commands, nowPlaying)
    }

    /// The MPRIS configuration of a player published without a call: the bus-name suffix
    /// from the app's name, letters, digits and `_` only, not starting with a digit, cut to
    /// ``MPRISConfiguration/maximumAppNameLength`` (as the bus allows); its identity the
    /// app's name as it is.
    static func implicitConfiguration(appName: String) -> MPRISConfiguration {
        var name = String(appName.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") ? $0 : "_" })
        if name.isEmpty || name.first!.isNumber { name = "_" + name }
        return MPRISConfiguration(appName: String(name.prefix(MPRISConfiguration.maximumAppNameLength)),
                                  identity: appName.isEmpty ? name : appName)
    }

    private func publishImplicitlyIfUsed(_ commands: RemoteCommandCenter, _ nowPlaying: NowPlayingInfoCenter) {
        guard commands.hasAvailableCommand || nowPlaying.nowPlayingInfo != nil else { return }
        let start = implicitRemoteControl.withLock { control -> Bool in
            guard case .idle = control.phase else { return false }
            if let retry = control.retryAt, ContinuousClock.now < retry { return false }
            control.phase = .publishing
            return true
        }
        guard start else { return }
        let configuration = AudioSession.implicitConfiguration(appName: appName)
        // A task of its own, not a step of the session's path: publishing runs steps on it.
        Task {
            do {
                _ = try await publishPlayer(configuration, commands: commands, nowPlaying: nowPlaying, trackList: nil) { player in
                    // The app's own call came meanwhile: this player goes no further.
                    try implicitRemoteControl.withLock { control in
                        guard case .publishing = control.phase else { throw CancellationError() }
                        control.phase = .published(player)
                    }
                }
            } catch {
                implicitRemoteControl.withLock { control in
                    if case .superseded = control.phase { return }
                    control.phase = .idle
                    control.retryAt = ContinuousClock.now + AudioSession.implicitRetryInterval
                }
            }
        }
    }

    /// The app publishes a player of its own: the implicit one, if any, is withdrawn.
    func supersedeImplicitRemoteControl() {
        let withdrawn = implicitRemoteControl.withLock { control -> MPRISPlayer? in
            defer { control.phase = .superseded }
            if case .published(let player) = control.phase { return player }
            return nil
        }
        withdrawn?.unpublish()
    }
}
