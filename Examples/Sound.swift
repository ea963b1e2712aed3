import Earshot
import FoundationEssentials

/// Sound: looping, rate with the pitch kept, a sample-accurate start, a gapless queue on
/// MPRIS, and a theme sound.
func soundExample(urls: [URL]) async throws {
    let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: "song.flac"))
    player.numberOfLoops = 1
    player.enableRate = true
    player.rate = 1.5                       // pitch kept
    player.play()
    let other = try AudioPlayer(contentsOf: URL(fileURLWithPath: "drums.wav"))
    other.play(atTime: player.deviceCurrentTime + 0.5)   // sample-accurate start

    let queue = try QueuePlayer(urls: urls)
    queue.connect(to: .default, commands: .shared)       // controllable over MPRIS
    queue.play()

    try SystemSound(named: "message-new-instant").play()
    try await Task.sleep(for: .seconds(10))
}
