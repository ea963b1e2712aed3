import AudioEngine
import MPRIS

extension AudioEngine {
    /// Makes the stream's `media.name` (what `pactl list sink-inputs`, GNOME Settings and
    /// pavucontrol show under the app's name) follow the title in `center`, as it changes;
    /// the application name again when there is no title. The server is told only when
    /// the title differs from the one it has. Keep the token for as long as it should follow.
    func followTitle(of center: NowPlayingInfoCenter) -> ObservationToken {
        let follow: @Sendable (NowPlayingInfo?) -> Void = { [weak self] info in
            guard let self, self.streamIdentity.mediaName != info?.title else { return }
            self.streamIdentity.mediaName = info?.title
        }
        follow(center.nowPlayingInfo)
        return center.observe { change in follow(change.info) }
    }
}
