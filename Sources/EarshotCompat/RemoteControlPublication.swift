internal import Earshot

/// The app's MPRIS player, published without a call: iOS shows an app on the lock screen
/// once it has remote-command handlers or now-playing info. Earshot's shared session does
/// the same for the shared centers these wrap, from its creation on, once (it keeps its own
/// phase); the first handler added to a carried command of ``MPRemoteCommandCenter/shared()``,
/// or the first non-nil ``MPNowPlayingInfoCenter/nowPlayingInfo`` of
/// ``MPNowPlayingInfoCenter/default()``, makes sure that session exists, so that an app that
/// has not played yet shows up too (named after the process,
/// `org.mpris.MediaPlayer2.<process name>`).
package enum RemoteControlPublication {
    /// What publishing does: the shared session, once made, publishes by itself.
    private static let action = Locked<@Sendable () -> Void>({ _ = AudioSession.shared })

    /// Replaces what publishing does (the package's tests count the attempts instead of
    /// making the shared session, which publishes on the session bus).
    package static func setPublishAction(_ action: @escaping @Sendable () -> Void) {
        self.action.withLock { $0 = action }
    }

    /// Makes sure the shared session exists: it publishes the shared centers unless it has.
    static func publishIfNeeded() {
        RemoteControlPublication.action.withLock { $0 }()
    }
}
