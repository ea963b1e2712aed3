import MPRIS
import Synchronization
import Testing
import TestSupport

@Suite("NowPlayingInfoCenter (no bus)")
struct NowPlayingInfoCenterTests {
    /// Time that moves only when the test says so.
    final class ManualClock: Sendable {
        private let nanoseconds = Atomic<UInt64>(1_000_000_000)
        func advance(seconds: Double) { nanoseconds.add(UInt64(seconds * 1e9), ordering: .relaxed) }
        var read: @Sendable () -> UInt64 { { self.nanoseconds.load(ordering: .relaxed) } }
    }

    @Test("elapsed time extrapolates with the rate while playing, and stops while paused")
    func extrapolation() {
        let clock = ManualClock()
        let center = NowPlayingInfoCenter(clock: clock.read)
        var info = NowPlayingInfo(title: "A", duration: 100, elapsedTime: 10)
        info.playbackRate = 2
        center.nowPlayingInfo = info
        clock.advance(seconds: 0.2)
        // At 2× the position moves twice the time that passed.
        #expect(abs(center.currentElapsedTime - 10.4) < 1e-9, "\(center.currentElapsedTime)")

        center.update { $0?.playbackState = .paused }
        #expect(abs(center.currentElapsedTime - 10.4) < 1e-9, "pausing keeps the extrapolated position")
        clock.advance(seconds: 5)
        #expect(abs(center.currentElapsedTime - 10.4) < 1e-9, "and it stays there while paused")
    }

    @Test("extrapolation stops at the duration and never goes below zero")
    func clamping() {
        let clock = ManualClock()
        let center = NowPlayingInfoCenter(clock: clock.read)
        center.nowPlayingInfo = NowPlayingInfo(title: "A", duration: 1, elapsedTime: 0.99)
        clock.advance(seconds: 0.05)
        #expect(center.currentElapsedTime == 1)
        var bad = NowPlayingInfo(title: "B", duration: 5, elapsedTime: -.infinity)
        bad.playbackRate = .nan
        center.nowPlayingInfo = bad
        #expect(center.currentElapsedTime == 0)
        #expect(center.nowPlayingInfo?.playbackRate == 0)
    }

    @Test("the default center runs on the monotonic clock")
    func realClock() async throws {
        let center = NowPlayingInfoCenter()
        center.nowPlayingInfo = NowPlayingInfo(title: "A", duration: 100, elapsedTime: 10)
        try await Task.sleep(for: .milliseconds(50))
        #expect(center.currentElapsedTime > 10.04, "\(center.currentElapsedTime)")
    }

    @Test("observers see item changes, seeks, and nothing for a no-op")
    func changes() {
        let center = NowPlayingInfoCenter()
        let seen = Locked<[NowPlayingInfoCenter.Change]>([])
        let token = center.observe { change in seen.withLock { $0.append(change) } }
        var paused = NowPlayingInfo(title: "A", duration: 100, elapsedTime: 10, playbackState: .paused)
        center.nowPlayingInfo = paused
        center.nowPlayingInfo = paused                         // no change
        center.update { $0?.title = "A" }                      // no change
        paused.elapsedTime = 50
        center.nowPlayingInfo = paused                         // a seek
        center.update { $0?.elapsedTime = 50.05 }              // within tolerance: not a seek
        center.update { $0?.title = "B" }                      // a new item
        center.nowPlayingInfo = nil                            // gone
        let changes = seen.value
        #expect(changes.map(\.itemChanged) == [true, false, false, true, true])
        #expect(changes.map(\.discontinuity) == [false, true, false, false, false])
        token.cancel()
        center.update { $0 = NowPlayingInfo(title: "C") }
        #expect(seen.value.count == 5, "a cancelled observation sees nothing more")
    }

    @Test("item numbers change with the item, not with its state")
    func itemNumbers() {
        let center = NowPlayingInfoCenter()
        center.nowPlayingInfo = NowPlayingInfo(title: "A")
        let first = center.itemNumber
        center.update { $0?.playbackState = .paused }
        #expect(center.itemNumber == first)
        center.update { $0?.title = "B" }
        #expect(center.itemNumber == first + 1)
    }
}

@Suite("RemoteCommandCenter (no bus)")
struct RemoteCommandCenterTests {
    @Test("a command is available when enabled and targeted; the newest target handles it")
    func availability() {
        let center = RemoteCommandCenter()
        let changes = Locked(0)
        let token = center.observe { changes.withLock { $0 += 1 } }
        #expect(!center.playCommand.isAvailable)
        #expect(center.playCommand.perform() == nil)
        #expect(!center.hasAvailableCommand)
        let first = center.playCommand.addTarget { _ in .commandFailed }
        center.playCommand.addTarget { _ in .success }
        #expect(center.playCommand.perform() == .success)
        center.playCommand.isEnabled = false
        #expect(center.playCommand.perform() == nil)
        center.playCommand.isEnabled = true
        center.playCommand.removeAllTargets()
        #expect(!center.playCommand.isAvailable)
        center.playCommand.removeTarget(first)
        #expect(changes.value == 6)
        _ = token
    }

    @Test("failure statuses map to named D-Bus errors")
    func statusNames() {
        #expect(RemoteCommandHandlerStatus.success.errorName == nil)
        let names = [RemoteCommandHandlerStatus.noSuchContent, .noActionableNowPlayingItem, .deviceNotFound, .commandFailed].compactMap(\.errorName)
        #expect(Set(names).count == 4)
    }

    @Test("supported playback rates drop values no player can have")
    func rates() {
        let center = RemoteCommandCenter()
        center.changePlaybackRateCommand.supportedPlaybackRates = [0.75, -1, .nan, 0, 1.25]
        #expect(center.changePlaybackRateCommand.supportedPlaybackRates == [0.75, 1.25])
    }
}

@Suite("MPRISConfiguration (no bus)")
struct MPRISConfigurationTests {
    @Test("names that make valid bus names", arguments: ["earshot", "My_App", "vlc-2",
                                                       String(repeating: "a", count: MPRISConfiguration.maximumAppNameLength)])
    func valid(_ name: String) throws {
        try MPRISConfiguration(appName: name, identity: "X").validate()
    }

    @Test("names that do not (the longest: its target name passes D-Bus's 255 bytes)",
          arguments: ["", "a.b", "9lives", "spa ce", "ü", "a/b", String(repeating: "a", count: MPRISConfiguration.maximumAppNameLength + 1)])
    func invalid(_ name: String) {
        #expect(throws: (any Error).self) { try MPRISConfiguration(appName: name, identity: "X").validate() }
    }

    @Test("instance names and track-id prefixes")
    func names() throws {
        var configuration = MPRISConfiguration(appName: "my-app", identity: "X")
        #expect(configuration.busName == "org.mpris.MediaPlayer2.my-app")
        #expect(configuration.trackIDPrefix.rawValue == "/org/earshot/my_2dapp/Track")
        configuration.instanceID = "4242"
        #expect(configuration.busName == "org.mpris.MediaPlayer2.my-app.instance4242")
        try configuration.validate()
        configuration.instanceID = "42.1"
        #expect(throws: (any Error).self) { try configuration.validate() }
    }
}
