#if canImport(AVFoundation)
import AVFoundation
import MediaPlayer
#else
import EarshotCompat
#endif
import Earshot
import Testing
import TestSupport

/// MediaPlayer's centers over Earshot's, in process: what Earshot's now-playing store holds
/// for a dictionary, how an MPRIS command reaches a handler, and that the first handler or
/// info publishes the app (counted, not published: no bus).
@Suite("EarshotCompat: now playing and remote commands")
struct CompatMediaPlayerChecks {
    @Test func nowPlayingDictionaryReachesEarshot() throws {
        CompatTest.prepare()
        let (compat, earshot) = CompatTest.nowPlayingCenter()
        compat.nowPlayingInfo = [
            MPMediaItemPropertyTitle: "Episode 12",
            MPMediaItemPropertyArtist: "Matt Neuburg",
            MPMediaItemPropertyAlbumTitle: "TidBITS",
            MPMediaItemPropertyPlaybackDuration: NSNumber(value: 300.0),
            MPNowPlayingInfoPropertyElapsedPlaybackTime: 42.5,
            MPNowPlayingInfoPropertyPlaybackRate: 1.0,
            MPNowPlayingInfoPropertyPlaybackQueueIndex: 2,
            MPNowPlayingInfoPropertyPlaybackQueueCount: NSNumber(value: 7),
            "custom": Date(),
        ]
        let info = try #require(earshot.nowPlayingInfo)
        #expect(info.title == "Episode 12")
        #expect(info.artists == ["Matt Neuburg"])
        #expect(info.album == "TidBITS")
        #expect(info.duration == 300)
        #expect(info.elapsedTime == 42.5)
        #expect(info.playbackRate == 1)
        #expect(info.playbackState == .playing)
        #expect(info.queueIndex == 2 && info.queueCount == 7)
        // Read back as set, the keys Earshot does not show included.
        #expect(compat.nowPlayingInfo?[MPMediaItemPropertyTitle] as? String == "Episode 12")
        #expect(compat.nowPlayingInfo?["custom"] is Date)

        // iOS apps pause by setting the rate to 0.
        compat.nowPlayingInfo?[MPNowPlayingInfoPropertyPlaybackRate] = 0.0
        #expect(earshot.nowPlayingInfo?.playbackState == .paused)
        compat.playbackState = .stopped
        #expect(earshot.nowPlayingInfo?.playbackState == .stopped)
        compat.nowPlayingInfo = nil
        #expect(earshot.nowPlayingInfo == nil)
    }

    @Test func artworkFromDataBecomesAFile() throws {
        CompatTest.prepare()
        let (compat, earshot) = CompatTest.nowPlayingCenter()
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3])
        let artwork = MPMediaItemArtwork(boundsSize: CGSize(width: 600, height: 600)) { _ in png }
        compat.nowPlayingInfo = [MPMediaItemPropertyTitle: "With art", MPMediaItemPropertyArtwork: artwork]
        let path = try #require(earshot.nowPlayingInfo?.artworkPath)
        #expect(FileManager.default.contents(atPath: path) == png)
        try? FileManager.default.removeItem(atPath: path)
    }

    @Test func mprisCommandsReachHandlersOnTheMainQueue() async throws {
        CompatTest.prepare()
        let (compat, earshot) = CompatTest.commandCenter()
        #expect(!earshot.hasAvailableCommand)
        let calls = Collected<[String]>([])
        let token = compat.togglePlayPauseCommand.addTarget { event in
            calls.modify { $0.append("toggle, main: \(isOnMainQueue), same: \(event.command === compat.togglePlayPauseCommand)") }
            return .success
        }
        compat.skipForwardCommand.addTarget { event in
            calls.modify { $0.append("forward \((event as! MPSkipIntervalCommandEvent).interval)") }
            return .success
        }
        compat.skipBackwardCommand.addTarget { event in
            calls.modify { $0.append("backward \((event as! MPSkipIntervalCommandEvent).interval)") }
            return .success
        }
        compat.changePlaybackPositionCommand.addTarget { event in
            calls.modify { $0.append("position \((event as! MPChangePlaybackPositionCommandEvent).positionTime)") }
            return .noSuchContent
        }
        compat.changePlaybackRateCommand.supportedPlaybackRates = [0.75, 1, 1.25]
        #expect(earshot.changePlaybackRateCommand.supportedPlaybackRates == [0.75, 1, 1.25])

        #expect(earshot.togglePlayPauseCommand.isAvailable && earshot.seekCommand.isAvailable)
        #expect(await CompatTest.offMain { earshot.togglePlayPauseCommand.perform() } == .success)
        #expect(await CompatTest.offMain { earshot.seekCommand.perform(SeekCommandEvent(offset: 10)) } == .success)
        #expect(await CompatTest.offMain { earshot.seekCommand.perform(SeekCommandEvent(offset: -5)) } == .success)
        let position = await CompatTest.offMain {
            earshot.changePlaybackPositionCommand.perform(ChangePlaybackPositionCommandEvent(positionTime: 12))
        }
        #expect(position == .noSuchContent)
        #expect(calls.value == ["toggle, main: true, same: true", "forward 10.0", "backward 5.0", "position 12.0"])

        // Disabled: MPRIS no longer offers it; removed: neither.
        compat.togglePlayPauseCommand.isEnabled = false
        #expect(!earshot.togglePlayPauseCommand.isAvailable)
        compat.togglePlayPauseCommand.isEnabled = true
        #expect(earshot.togglePlayPauseCommand.isAvailable)
        compat.togglePlayPauseCommand.removeTarget(token)
        #expect(!earshot.togglePlayPauseCommand.isAvailable)
    }

    @Test func commandsMPRISCannotCarryStayInert() {
        CompatTest.prepare()
        let (compat, earshot) = CompatTest.commandCenter()
        for command in [compat.likeCommand, compat.dislikeCommand, compat.bookmarkCommand, compat.ratingCommand,
                        compat.seekForwardCommand, compat.seekBackwardCommand, compat.enableLanguageOptionCommand,
                        compat.disableLanguageOptionCommand] {
            command.addTarget { _ in .success }
        }
        #expect(!earshot.hasAvailableCommand)
    }

    /// The chapter's listings on the shared centers: the first handler and the first info
    /// each ask, without a call, for the app to be published (the shared session they make
    /// sure of publishes once, whichever came first in this process).
    @Test func firstHandlerOrInfoPublishes() {
        CompatTest.prepare()
        let controller = RemoteControlledViewController()
        let beforeHandlers = CompatTest.publications.load(ordering: .relaxed)
        controller.viewDidAppear()
        #expect(CompatTest.publications.load(ordering: .relaxed) > beforeHandlers, "a handler asks for the publication")
        let beforeInfo = CompatTest.publications.load(ordering: .relaxed)
        controller.showNowPlaying()
        #expect(CompatTest.publications.load(ordering: .relaxed) > beforeInfo, "now-playing info asks for the publication")
        #expect(NowPlayingInfoCenter.default.nowPlayingInfo?.title == "TidBITS News")
        #expect(NowPlayingInfoCenter.default.nowPlayingInfo?.artists == ["Matt Neuburg"])
        #expect(RemoteCommandCenter.shared.togglePlayPauseCommand.isAvailable)
        MPRemoteCommandCenter.shared().togglePlayPauseCommand.removeTarget(nil)
        MPNowPlayingInfoCenter.default().nowPlayingInfo = nil
    }
}
