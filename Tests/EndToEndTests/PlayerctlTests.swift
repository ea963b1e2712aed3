import Foundation
import Testing
import TestSupport

/// playerctl, a real MPRIS client, against `earshot publish`.
@Suite("playerctl against earshot publish")
struct PlayerctlTests {
    @Test("status and metadata show the first title, artist, album and length")
    func statusAndMetadata() async throws {
        let publisher = try await Publisher(["--artist", "The Artist", "--album", "The Album", "--length", "180"])
        #expect(try await publisher.playerctlOutput("status") == "Playing")
        let metadata = try await publisher.playerctlOutput("metadata", "--format", "{{title}}|{{artist}}|{{album}}|{{mpris:length}}")
        #expect(metadata == "One|The Artist|The Album|180000000")
        // playerctl quotes object paths.
        #expect(try await publisher.playerctlOutput("metadata", "mpris:trackid") == "'\(publisher.trackID(0))'")
    }

    @Test("--paused starts Paused")
    func startsPaused() async throws {
        let publisher = try await Publisher(["--paused"])
        #expect(try await publisher.playerctlOutput("status") == "Paused")
    }

    @Test("play-pause flips the status and the publisher prints it; play, pause and stop too")
    func playPause() async throws {
        let publisher = try await Publisher()
        try await publisher.playerctlOutput("play-pause")
        #expect(try await publisher.playerctlOutput("status") == "Paused")
        try await publisher.waitForLine("play-pause")
        try await publisher.playerctlOutput("play-pause")
        #expect(try await publisher.playerctlOutput("status") == "Playing")
        #expect(publisher.commands == ["play-pause", "play-pause"])

        try await publisher.playerctlOutput("pause")
        #expect(try await publisher.playerctlOutput("status") == "Paused")
        try await publisher.playerctlOutput("play")
        #expect(try await publisher.playerctlOutput("status") == "Playing")
        try await publisher.playerctlOutput("stop")
        #expect(try await publisher.playerctlOutput("status") == "Stopped")
        #expect(publisher.commands == ["play-pause", "play-pause", "pause", "play", "stop"])
    }

    @Test("next and previous walk the titles")
    func nextAndPrevious() async throws {
        let publisher = try await Publisher()
        #expect(try await publisher.playerctlOutput("metadata", "title") == "One")
        try await publisher.playerctlOutput("next")
        #expect(try await publisher.playerctlOutput("metadata", "title") == "Two")
        try await publisher.playerctlOutput("next")
        #expect(try await publisher.playerctlOutput("metadata", "title") == "Three")
        #expect(try await publisher.playerctlOutput("metadata", "mpris:trackid") == "'\(publisher.trackID(2))'")
        try await publisher.playerctlOutput("previous")
        #expect(try await publisher.playerctlOutput("metadata", "title") == "Two")
        #expect(publisher.commands == ["next -> 2/3 Two", "next -> 3/3 Three", "previous -> 2/3 Two"])
    }

    @Test("position advances in real time while Playing and stays put while Paused")
    func positionRuns() async throws {
        // The title starts playing when the process does: its position can be no more than
        // the time since the launch (which, in the parallel pass on 2 cores, can be seconds).
        let launched = ContinuousClock.now
        let publisher = try await Publisher()
        let start = try seconds(try await publisher.playerctlOutput("position"))
        let sinceLaunch = launched.duration(to: .now)
        let sinceLaunchSeconds = Double(sinceLaunch.components.seconds) + Double(sinceLaunch.components.attoseconds) / 1e18
        #expect(start >= 0 && start <= sinceLaunchSeconds + 0.05, "position \(start) s, \(sinceLaunchSeconds) s after the launch")
        try await eventually("the position to advance by 0.3 s") {
            try seconds(try await publisher.playerctlOutput("position")) >= start + 0.3
        }
        // Real time, not faster: well under a second has passed.
        #expect(try seconds(try await publisher.playerctlOutput("position")) < start + 3)

        try await publisher.playerctlOutput("pause")
        let paused = try seconds(try await publisher.playerctlOutput("position"))
        try await Task.sleep(for: .milliseconds(300))
        #expect(try seconds(try await publisher.playerctlOutput("position")) == paused)
    }

    @Test("position can be set absolutely and relatively")
    func setPosition() async throws {
        let publisher = try await Publisher(["--paused", "--length", "60"])
        try await publisher.playerctlOutput("position", "12")
        #expect(try seconds(try await publisher.playerctlOutput("position")) == 12)
        try await publisher.playerctlOutput("position", "3+")
        #expect(try seconds(try await publisher.playerctlOutput("position")) == 15)
        try await publisher.playerctlOutput("position", "5-")
        #expect(try seconds(try await publisher.playerctlOutput("position")) == 10)
        #expect(publisher.commands == ["set-position 12.000 s", "seek +3.000 s -> 15.000 s", "seek -5.000 s -> 10.000 s"])
    }

    @Test("volume is set and read back")
    func volume() async throws {
        let publisher = try await Publisher()
        #expect(try seconds(try await publisher.playerctlOutput("volume")) == 1)
        try await publisher.playerctlOutput("volume", "0.4")
        #expect(try seconds(try await publisher.playerctlOutput("volume")) == 0.4)
        #expect(publisher.commands == ["volume 0.40"])
    }

    @Test("loop status is set and read back")
    func loop() async throws {
        let publisher = try await Publisher()
        #expect(try await publisher.playerctlOutput("loop") == "None")
        for (status, printed) in [("Track", "one"), ("Playlist", "all"), ("None", "off")] {
            try await publisher.playerctlOutput("loop", status)
            #expect(try await publisher.playerctlOutput("loop") == status)
            try await publisher.waitForLine("loop \(printed)")
        }
    }

    @Test("shuffle is switched on and off")
    func shuffle() async throws {
        let publisher = try await Publisher()
        #expect(try await publisher.playerctlOutput("shuffle") == "Off")
        try await publisher.playerctlOutput("shuffle", "On")
        #expect(try await publisher.playerctlOutput("shuffle") == "On")
        try await publisher.playerctlOutput("shuffle", "Off")
        #expect(try await publisher.playerctlOutput("shuffle") == "Off")
        #expect(publisher.commands == ["shuffle on", "shuffle off"])
    }

    @Test("playerctl --follow metadata sees the title change after next")
    func followMetadata() async throws {
        let publisher = try await Publisher()
        let follower = try Child("playerctl", ["-p", publisher.playerName, "--follow", "metadata", "--format", "{{title}}|{{artist}}"],
                                 environment: publisher.bus.environment)
        try await follower.waitForOutput("One|")
        #expect(!follower.stdout.contains("Two"))
        try await publisher.playerctlOutput("next")
        try await follower.waitForOutput("Two|")
        follower.kill(SIGKILL)
    }

    @Test("playerctl --follow status sees Paused after play-pause")
    func followStatus() async throws {
        let publisher = try await Publisher()
        let follower = try Child("playerctl", ["-p", publisher.playerName, "--follow", "status"], environment: publisher.bus.environment)
        try await follower.waitForOutput("Playing\n")
        try await publisher.playerctlOutput("play-pause")
        try await follower.waitForOutput("Paused\n")
        follower.kill(SIGKILL)
    }
}
