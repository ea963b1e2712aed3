internal import Earshot

/// The app's MPRIS player, published without a call: iOS shows an app on the lock screen
/// once it has remote-command handlers or now-playing info. Earshot's shared session does
/// the same for the shared centers these wrap, from its creation on; the first handler
/// added to a carried command of ``MPRemoteCommandCenter/shared()``, or the first non-nil
/// ``MPNowPlayingInfoCenter/nowPlayingInfo`` of ``MPNowPlayingInfoCenter/default()``, makes
/// sure that session exists, so that an app that has not played yet shows up too (named
/// after the process, `org.mpris.MediaPlayer2.<process name>`).
package final class RemoteControlPublication: @unchecked Sendable {
    static let shared = RemoteControlPublication()

    private enum Phase { case idle, publishing, published(AnyObject) }
    private let phase = Locked(Phase.idle)
    /// What publishing does (the package's tests replace it so as to publish nothing).
    private static let action = Locked<@Sendable () async throws -> AnyObject>({
        AudioSession.shared
    })

    /// Replaces what publishing does (the package's tests count the attempts instead of
    /// publishing on the session bus), and allows a new attempt.
    package static func setPublishAction(_ action: @escaping @Sendable () async throws -> Void) {
        self.action.withLock { $0 = { try await action(); return NSObject() } }
        shared.phase.withLock { $0 = .idle }
    }

    /// Publishes the app unless it is published or being published.
    func publishIfNeeded() {
        let start = phase.withLock { phase -> Bool in
            guard case .idle = phase else { return false }
            phase = .publishing
            return true
        }
        guard start else { return }
        let action = RemoteControlPublication.action.withLock { $0 }
        Task.detached { [self] in
            do {
                let player = try await action()
                phase.withLock { $0 = .published(player) }
            } catch {
                phase.withLock { $0 = .idle }
            }
        }
    }
}
