import Earshot
import FoundationEssentials

/// The README's audio-session snippet: a playback session that ducks others and resumes
/// its player when an interruption ends with shouldResume.
func sessionExample(playing url: URL) async throws {
    let player = try AudioPlayer(contentsOf: url)
    player.play()
    let session = AudioSession.shared
    try await session.setCategory(.playback, options: [.duckOthers])
    try await session.setActive(true)
    for await notification in session.notifications() {
        if case .interruption(.ended(let shouldResume)) = notification, shouldResume { player.play() }
    }
}
