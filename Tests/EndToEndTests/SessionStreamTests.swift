import DBus
import Foundation
import Testing
import TestSupport

// `earshot play` with http:// URLs, in a private bus and sound server: an Icecast-style radio
// whose ICY titles reach MPRIS (read with `playerctl metadata --follow` and D-Bus), OpenUri
// of an http URL, and OpenUri still refusing what it should.

@Suite("Session: streams over HTTP reach MPRIS", .serialized, .timeLimit(.minutes(2)), .tags(.sessions))
struct SessionStreamTests {
    @Test func radioTitlesFollowTheICYMetadata() async throws {
        let directory = NSTemporaryDirectory() + "earshot-stream-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let radio = directory + "/radio.mp3"
        let made = try await run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=660:sample_rate=44100:duration=10",
                                            "-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k", radio], timeout: 60)
        #expect(made.status == 0, "\(made.stderr)")
        // A short file first: the queue then moves on to the stream by itself (its opening is
        // done off the engine's event thread).
        let intro = directory + "/intro.wav"
        let introMade = try await run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=0.5",
                                                 "-ac", "2", intro], timeout: 60)
        #expect(introMade.status == 0, "\(introMade.stderr)")
        let server = try await HTTPTestServer(.icy(file: radio, bytesPerSecond: 16000, titleSeconds: 1.5))
        let url = server.url("radio")

        let world = try await SessionWorld()
        let app = "radio"
        let player = try Child(Paths.earshot, ["play", "--name", app, intro, url], environment: world.environment)
        defer { player.kill(SIGKILL) }
        try await sessionPoll("the stream playing after the file", timeout: 15) {
            let current = try? await world.playerctl("-p", app, "metadata", "xesam:url").output
            let status = try? await world.playerctl("-p", app, "status").output
            return current == url && status == "Playing"
        }
        let follow = try Child("/usr/bin/playerctl", ["-p", app, "metadata", "--follow", "--format", "{{xesam:title}}"], environment: world.environment)
        defer { follow.kill(SIGKILL) }
        // Each new StreamTitle is a new title; the server changes it every 1.5 s.
        try await sessionPoll("two titles in playerctl --follow", timeout: 15) {
            let titles = Set(follow.stdout.split(separator: "\n").filter { $0.hasPrefix("Artist ") })
            return titles.count >= 2
        }
        let titles = follow.stdout.split(separator: "\n").filter { $0.hasPrefix("Artist ") }.map(String.init)
        // In the server's order, each one the server sent ("Artist N - Song N").
        let numbers = titles.compactMap { Int($0.split(separator: " ")[1]) }
        #expect(titles == numbers.map { "Artist \($0) - Song \($0)" }, "\(titles)")
        #expect(numbers == numbers.sorted(), "\(titles)")

        // An endless stream: no length, no seeking; the URL and the station name are there.
        let reply = try await world.client.call(
            destination: "org.mpris.MediaPlayer2." + app, path: "/org/mpris/MediaPlayer2",
            interface: StandardInterface.properties, method: "GetAll", [.string("org.mpris.MediaPlayer2.Player")])
        let properties = try #require(reply.first?.stringKeyedDictionary)
        #expect(properties["CanSeek"] == .boolean(false))
        let metadata = try #require(properties["Metadata"]?.stringKeyedDictionary)
        #expect(metadata["mpris:length"] == nil, "\(metadata)")
        #expect(metadata["xesam:url"] == .string(url))
        #expect(metadata["xesam:album"] == .string("Earshot Test Radio"))
        // And as gdbus prints it.
        let gdbus = try await run("gdbus", [
            "call", "--session", "--dest", "org.mpris.MediaPlayer2." + app, "--object-path", "/org/mpris/MediaPlayer2",
            "--method", "org.freedesktop.DBus.Properties.Get", "org.mpris.MediaPlayer2.Player", "Metadata",
        ], environment: world.environment, timeout: 10)
        #expect(gdbus.stdout.contains("'xesam:title': <'Artist "), "\(gdbus.stdout)")
    }

    @Test func openUriPlaysHTTPAndRefusesWhatItShould() async throws {
        let directory = NSTemporaryDirectory() + "earshot-openuri-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = directory + "/first.wav"
        let second = directory + "/second.mp3"
        for (path, codec) in [(first, ["-c:a", "pcm_s16le"]), (second, ["-c:a", "libmp3lame"])] {
            let made = try await run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=20",
                                                "-ac", "2"] + codec + [path], timeout: 60)
            #expect(made.status == 0, "\(made.stderr)")
        }
        let server = try await HTTPTestServer(.files(directory: directory))
        let world = try await SessionWorld()
        let app = "openhttp"
        let player = try Child(Paths.earshot, ["play", "--name", app, first], environment: world.environment)
        defer { player.kill(SIGKILL) }
        let destination = "org.mpris.MediaPlayer2." + app
        try await sessionPoll("the player on the bus", timeout: 15) {
            (try? await world.playerctl("-p", app, "status").output) == "Playing"
        }
        let root = try await world.client.call(destination: destination, path: "/org/mpris/MediaPlayer2",
                                               interface: StandardInterface.properties, method: "Get",
                                               [.string("org.mpris.MediaPlayer2"), .string("SupportedUriSchemes")])
        #expect(root.first == .variant(.strings(["file", "http", "https"])) || root.first == .strings(["file", "http", "https"]), "\(root)")

        for refused in ["javascript:alert(1)", "data:audio/mpeg;base64,SUQz", "gopher://127.0.0.1/x.mp3"] {
            do {
                _ = try await world.client.call(destination: destination, path: "/org/mpris/MediaPlayer2",
                                                interface: "org.mpris.MediaPlayer2.Player", method: "OpenUri", [.string(refused)])
                Issue.record("OpenUri accepted \(refused)")
            } catch {
                #expect("\(error)".contains("NotSupported") || "\(error)".contains("InvalidArgs"), "\(refused): \(error)")
            }
        }
        let url = server.url("second.mp3")
        _ = try await world.client.call(destination: destination, path: "/org/mpris/MediaPlayer2",
                                        interface: "org.mpris.MediaPlayer2.Player", method: "OpenUri", [.string(url)])
        try await sessionPoll("the stream as the current track", timeout: 15) {
            (try? await world.playerctl("-p", app, "metadata", "xesam:url").output) == url
        }
        // A progressive file from a server that takes ranges: a length, and seeking.
        let length = try await world.playerctl("-p", app, "metadata", "mpris:length")
        #expect(abs((Double(length.output) ?? 0) / 1e6 - 20) < 0.1, "length \(length.output)")
        #expect(try await world.playerctl("-p", app, "position", "12").status == 0)
        try await sessionPoll("the position after seeking to 12 s", timeout: 10) {
            let position = Double((try? await world.playerctl("-p", app, "position").output) ?? "") ?? 0
            return position >= 12 && position < 15
        }
        // Back to 2 s: bytes already passed, asked for again with a range (FFmpeg reads a
        // short way forward rather than asking, so the forward seek may not need one).
        #expect(try await world.playerctl("-p", app, "position", "2").status == 0)
        try await sessionPoll("the position after seeking back to 2 s", timeout: 10) {
            let position = Double((try? await world.playerctl("-p", app, "position").output) ?? "") ?? 0
            return position >= 2 && position < 5
        }
        #expect(server.requests.contains { $0.hasPrefix("REQUEST /second.mp3 bytes=") && !$0.hasSuffix("bytes=0-") }, "\(server.requests)")
    }
}
