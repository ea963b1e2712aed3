import Earshot
import Foundation

/// The README's library snippet: a playback session, a player that now playing and the
/// transport commands follow, and its MPRIS entry, so that media keys and playerctl reach it.
func libraryExample() async throws {
    let session = AudioSession.shared
    try await session.setCategory(.playback)          // interrupts other non-mixable audio
    try await session.setActive(true)

    let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: "song.flac"))
    player.connect(to: .default, commands: .shared)   // now playing and play/pause/seek follow the player
    let mpris = try await session.publishRemoteControl(MPRISConfiguration(appName: "myapp", identity: "My App"))
    player.play()                                     // media keys and playerctl reach it from now on
    try await Task.sleep(for: .seconds(player.duration))
    withExtendedLifetime(mpris) {}  // controllable until the song ends
}
