import Earshot
import FoundationEssentials

/// Remote control: media keys and playerctl drive an `AudioPlayer` through MPRIS, and the
/// process takes part in last sound wins. The README shows its last handler, which hands
/// app state over to the main actor.
func remoteControlExample(playing url: URL) async throws {
    let player = try AudioPlayer(contentsOf: url)
    let commands = RemoteCommandCenter.shared
    commands.togglePlayPauseCommand.addTarget { _ in
        if player.isPlaying { player.pause() } else { player.play() }
        return .success
    }
    commands.changePlaybackPositionCommand.addTarget { event in
        player.currentTime = event.positionTime
        return .success
    }

    var info = NowPlayingInfo(title: "Song A", artists: ["Someone"], duration: player.duration)
    info.elapsedTime = player.currentTime
    NowPlayingInfoCenter.default.nowPlayingInfo = info   // the position then runs by itself

    // Published on the session's connection and adopted: when this process makes sound,
    // it owns the app's MPRIS name and the arbiter makes it the media keys' target.
    let session = AudioSession.shared
    let mpris = try await session.publishRemoteControl(
        MPRISConfiguration(appName: "myapp", identity: "My App"), commands: commands)

    let library = Library()
    commands.nextTrackCommand.addTarget { _ in
        // Handlers run on the player's command queue, not on the main actor: hand
        // app state over to the actor that owns it.
        Task { @MainActor in library.skip() }
        return .success
    }
    player.play()
    try await Task.sleep(for: .seconds(player.duration))
    withExtendedLifetime(mpris) {}  // controllable until the song ends
}

/// App state that lives on the main actor, as a UI's would.
@MainActor final class Library {
    private(set) var skipped = 0
    func skip() { skipped += 1 }
}
