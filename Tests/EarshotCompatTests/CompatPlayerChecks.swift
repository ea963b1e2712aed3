#if canImport(AVFoundation)
import AVFoundation
import MediaPlayer
#else
import EarshotCompat
#endif
import Testing
import TestSupport

/// AVPlayer's and AVQueuePlayer's bookkeeping and CMTime, without playing (files are
/// opened, nothing is heard).
@Suite("EarshotCompat: players and CMTime")
struct CompatPlayerChecks {
    @Test func cmTime() {
        let time = CMTime(seconds: 1.5, preferredTimescale: 600)
        #expect(time.value == 900 && time.timescale == 600 && time.seconds == 1.5)
        #expect(CMTimeGetSeconds(CMTimeMake(value: 3, timescale: 2)) == 1.5)
        #expect(CMTime.zero < time && time < .positiveInfinity)
        #expect(!CMTime.invalid.isValid && CMTime.indefinite.isIndefinite && CMTime.indefinite.seconds.isNaN)
        #expect(AVPlayer.TimeControlStatus.playing.rawValue == 2 && AVPlayer.ActionAtItemEnd.none.rawValue == 2)
    }

    @Test func queueItems() throws {
        let a = AVPlayerItem(url: URL(fileURLWithPath: try TestSignals.sine(duration: 1)))
        let b = AVPlayerItem(url: URL(fileURLWithPath: try TestSignals.sine(duration: 0.5)))
        let missing = AVPlayerItem(url: URL(fileURLWithPath: "/nonexistent/earshot-compat.wav"))
        let jukebox = JukeboxController(items: [a, missing, b])
        let player = jukebox.avQueuePlayer
        defer { jukebox.observer.map(NotificationCenter.default.removeObserver) }
        #expect(a.status == .readyToPlay && missing.status == .failed && missing.error != nil)
        #expect(abs(a.duration.seconds - 1) < 0.01)
        #expect(player.items() == [a, b])
        #expect(player.currentItem === a)
        #expect(player.actionAtItemEnd == .advance && player.timeControlStatus == .paused && player.rate == 0)

        let c = AVPlayerItem(url: URL(fileURLWithPath: try TestSignals.sine(duration: 0.5)))
        #expect(player.canInsert(c, after: a))
        player.insert(c, after: a)
        #expect(player.items() == [a, c, b])
        player.remove(c)
        #expect(player.items() == [a, b])
        player.advanceToNextItem()
        #expect(player.currentItem === b)
        #expect(player.items() == [b])
        player.removeAllItems()
        #expect(player.items().isEmpty && player.currentItem == nil)
    }

    @Test func singleItemPlayer() async throws {
        let url = URL(fileURLWithPath: try TestSignals.sine(duration: 1))
        let player = AVPlayer(url: url)
        #expect(player.actionAtItemEnd == .pause)
        #expect((player.currentItem?.asset as? AVURLAsset)?.url == url)
        player.seek(to: CMTime(seconds: 0.25, preferredTimescale: 600))
        try await eventually("the seek to show", timeout: 2) { abs(player.currentTime().seconds - 0.25) < 0.01 }
        let replacement = AVPlayerItem(url: URL(fileURLWithPath: try TestSignals.sine(duration: 0.5)))
        player.replaceCurrentItem(with: replacement)
        #expect(player.currentItem === replacement)
    }
}
