import DBus
import Foundation
import Testing
import TestSupport

// Tags and cover art from the files `earshot play` plays to the desktop: a real player in a
// private bus and sound server, read with playerctl, gdbus and a D-Bus client.

@Suite("Session: tags and cover art reach MPRIS", .serialized, .timeLimit(.minutes(2)), .tags(.sessions))
struct SessionMetadataArtTests {
    /// An MP3 with ID3v2 tags and an APIC picture, then an .m4a with MP4 atoms and a `covr`
    /// picture, both made by ffmpeg with the same PNG: every tag arrives with its exact
    /// MPRIS type, `xesam:url` names each file, and `mpris:artUrl` is a file in the cache
    /// whose bytes are the embedded image, one file for both tracks.
    @Test func tagsAndEmbeddedArtOfMP3AndM4A() async throws {
        let (directory, cover) = try await directoryWithCover("metadata-art")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mp3 = directory + "/one.mp3"
        let m4a = directory + "/two.m4a"
        let withPicture = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=20", "-i", cover,
                           "-map", "0:a", "-map", "1:v", "-c:v", "copy"]
        try await ffmpeg(withPicture + [
            "-c:a", "libmp3lame", "-id3v2_version", "4", "-metadata:s:v", "comment=Cover (front)",
            "-metadata", "title=First Song", "-metadata", "artist=Ann Arbor;Bo Bell", "-metadata", "album=Both Sides",
            "-metadata", "album_artist=The Band", "-metadata", "track=3/12", "-metadata", "disc=1/2",
            "-metadata", "genre=Folk", "-metadata", "composer=Cy Cole", "-metadata", "date=2019-05-01",
            "-metadata", "comment=Recorded live", mp3,
        ])
        try await ffmpeg(withPicture + [
            "-c:a", "aac", "-disposition:v", "attached_pic",
            "-metadata", "title=Second Song", "-metadata", "artist=Dee Dunn", "-metadata", "album=Both Sides",
            "-metadata", "track=4/12", m4a,
        ])
        let png = try Data(contentsOf: URL(fileURLWithPath: cover))

        let world = try await SessionWorld()
        var environment = world.environment
        let cache = directory + "/cache"
        environment["XDG_CACHE_HOME"] = cache
        let app = "metaart"
        let player = try Child(Paths.earshot, ["play", "--name", app, mp3, m4a], environment: environment)
        defer { player.kill(SIGKILL) }

        // The art is found and written in the background: it arrives in a later change.
        let first = try await metadata(world, app, player, until: "the first track with its art") {
            $0["xesam:title"]?.string == "First Song" && $0["mpris:artUrl"] != nil
        }
        #expect(first["xesam:artist"] == .strings(["Ann Arbor", "Bo Bell"]))
        #expect(first["xesam:albumArtist"] == .strings(["The Band"]))
        #expect(first["xesam:album"] == .string("Both Sides"))
        #expect(first["xesam:trackNumber"] == .int32(3))
        #expect(first["xesam:discNumber"] == .int32(1))
        #expect(first["xesam:genre"] == .strings(["Folk"]))
        #expect(first["xesam:composer"] == .strings(["Cy Cole"]))
        #expect(first["xesam:comment"] == .strings(["Recorded live"]))
        #expect(first["xesam:contentCreated"] == .string("2019-05-01"))
        #expect(first["xesam:url"] == .string(URL(fileURLWithPath: mp3).absoluteString))
        let artURL = try #require(first["mpris:artUrl"]?.string)
        let artPath = try #require(URL(string: artURL)?.path)
        #expect(artURL.hasPrefix("file://" + cache + "/earshot/art/"), "\(artURL)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: artPath)) == png, "the art file's bytes are the embedded PNG")

        // The same, as gdbus prints it (types included: int32 bare, string arrays as lists).
        let gdbus = try await run("gdbus", [
            "call", "--session", "--dest", "org.mpris.MediaPlayer2." + app, "--object-path", "/org/mpris/MediaPlayer2",
            "--method", "org.freedesktop.DBus.Properties.Get", "org.mpris.MediaPlayer2.Player", "Metadata",
        ], environment: environment, timeout: 10)
        #expect(gdbus.status == 0, "\(gdbus.stderr)")
        for expected in ["'xesam:artist': <['Ann Arbor', 'Bo Bell']>", "'xesam:trackNumber': <3>",
                         "'xesam:album': <'Both Sides'>", "'mpris:artUrl': <'\(artURL)'>",
                         "'xesam:url': <'\(URL(fileURLWithPath: mp3).absoluteString)'>"] {
            #expect(gdbus.stdout.contains(expected), "gdbus printed \(gdbus.stdout)")
        }
        // And as playerctl shows it.
        let playerctl = try await world.playerctl("-p", app, "metadata", "--format",
                                                  "{{xesam:album}}|{{xesam:trackNumber}}|{{mpris:artUrl}}|{{xesam:url}}")
        #expect(playerctl.output == "Both Sides|3|\(artURL)|\(URL(fileURLWithPath: mp3).absoluteString)",
                "playerctl: \(playerctl.stdout) \(playerctl.stderr)")
        let artists = try await world.playerctl("-p", app, "metadata", "xesam:artist")
        #expect(artists.output.contains("Ann Arbor") && artists.output.contains("Bo Bell"), "\(artists.stdout)")

        // The next track has the same picture: the same cache file, and only that one.
        #expect(try await world.playerctl("-p", app, "next").status == 0)
        let second = try await metadata(world, app, player, until: "the second track with its art") {
            $0["xesam:title"]?.string == "Second Song" && $0["mpris:artUrl"] != nil
        }
        #expect(second["xesam:artist"] == .strings(["Dee Dunn"]))
        #expect(second["xesam:trackNumber"] == .int32(4))
        #expect(second["xesam:url"] == .string(URL(fileURLWithPath: m4a).absoluteString))
        #expect(second["mpris:artUrl"]?.string == artURL)
        let stored = try FileManager.default.contentsOfDirectory(atPath: cache + "/earshot/art").filter { !$0.hasPrefix(".") }
        #expect(stored.count == 1, "the art cache holds \(stored)")
    }

    /// A FLAC file with Vorbis comments and a picture block, as ffmpeg writes them: the tags
    /// and the art reach MPRIS as for MP3, and the player never loads FFmpeg to read them (its
    /// libraries cost a start about 35 ms of CPU; ``FLACMetadata`` reads FLAC's blocks).
    @Test func flacTagsAndArtWithoutFFmpeg() async throws {
        let (directory, cover) = try await directoryWithCover("metadata-flac")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let flac = directory + "/three.flac"
        try await ffmpeg([
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=20", "-i", cover,
            "-map", "0:a", "-map", "1:v", "-c:v", "copy", "-disposition:v", "attached_pic", "-c:a", "flac",
            "-metadata", "title=Third Song", "-metadata", "artist=Ann Arbor;Bo Bell", "-metadata", "album=Both Sides",
            "-metadata", "album_artist=The Band", "-metadata", "track=5/12", "-metadata", "disc=2/2",
            "-metadata", "composer=Cy Cole", flac,
        ])
        let png = try Data(contentsOf: URL(fileURLWithPath: cover))

        let world = try await SessionWorld()
        var environment = world.environment
        environment["XDG_CACHE_HOME"] = directory + "/cache"
        let app = "metaflac"
        let player = try Child(Paths.earshot, ["play", "--name", app, flac], environment: environment)
        defer { player.kill(SIGKILL) }
        let metadata = try await metadata(world, app, player, until: "the FLAC track with its art") {
            $0["xesam:title"]?.string == "Third Song" && $0["mpris:artUrl"] != nil
        }
        #expect(metadata["xesam:artist"] == .strings(["Ann Arbor", "Bo Bell"]))
        #expect(metadata["xesam:albumArtist"] == .strings(["The Band"]))
        #expect(metadata["xesam:composer"] == .strings(["Cy Cole"]))
        #expect(metadata["xesam:trackNumber"] == .int32(5))
        #expect(metadata["xesam:discNumber"] == .int32(2))
        let artPath = try #require(metadata["mpris:artUrl"]?.string.flatMap { URL(string: $0)?.path })
        #expect(try Data(contentsOf: URL(fileURLWithPath: artPath)) == png, "the art file's bytes are the FLAC picture")
        // Read with cat: Foundation reads a file's stat size, and /proc's files have none.
        let maps = try await run("cat", ["/proc/\(player.pid)/maps"]).stdout
        #expect(maps.contains("libpulse"), "the player's mappings were read: \(maps.prefix(200))")
        let ffmpegLibraries = Set(maps.split(separator: "\n").compactMap { line in
            line.split(separator: "/").last.flatMap { $0.hasPrefix("libav") || $0.hasPrefix("libswresample") ? String($0) : nil }
        })
        #expect(ffmpegLibraries.isEmpty, "earshot play of a FLAC file loaded \(ffmpegLibraries.sorted())")
    }

    /// Polls the player's Metadata until `condition` holds; fails naming what it last saw.
    private func metadata(
        _ world: SessionWorld, _ app: String, _ player: Child, until what: String,
        _ condition: @escaping @Sendable ([String: DBusValue]) -> Bool
    ) async throws -> [String: DBusValue] {
        let last = Locked<[String: DBusValue]>([:])
        do {
            try await sessionPoll(what, timeout: 15) {
                let reply = try? await world.client.call(
                    destination: "org.mpris.MediaPlayer2." + app, path: "/org/mpris/MediaPlayer2",
                    interface: StandardInterface.properties, method: "Get",
                    [.string("org.mpris.MediaPlayer2.Player"), .string("Metadata")])
                guard let metadata = reply?.first?.stringKeyedDictionary else { return false }
                last.withLock { $0 = metadata }
                return condition(metadata)
            }
        } catch {
            throw TestFailure("never saw \(what): Metadata was \(last.value); earshot printed \(player.stdout), stderr: \(player.stderr)")
        }
        return last.value
    }

    /// A new temporary directory (the caller removes it) holding `cover-source.png`, a 32×32
    /// red PNG made by ffmpeg.
    private func directoryWithCover(_ name: String) async throws -> (directory: String, cover: String) {
        let directory = NSTemporaryDirectory() + "earshot-\(name)-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let cover = directory + "/cover-source.png"
        try await ffmpeg(["-f", "lavfi", "-i", "color=c=red:s=32x32", "-frames:v", "1", cover])
        return (directory, cover)
    }

    private func ffmpeg(_ arguments: [String]) async throws {
        let result = try await run("ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments, timeout: 60)
        guard result.status == 0 else {
            throw TestFailure("ffmpeg \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.stderr)")
        }
    }
}
