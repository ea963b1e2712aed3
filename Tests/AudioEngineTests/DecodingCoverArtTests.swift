import AudioEngine
import Foundation
import Testing
import TestSupport

// Cover art: embedded pictures read through FFmpeg, images beside the file, and the cache that
// turns them into files a desktop shell can show.

/// Files with art, made by ffmpeg from the shared 1 s signal and a 32×32 PNG.
private struct ArtFixtures: Sendable {
    let directory: String
    let png: [UInt8]

    static func shared() async throws -> ArtFixtures { try await building.value }
    private static let building = Task { try await ArtFixtures.build() }

    func path(_ name: String) -> String { directory + "/" + name }

    private static func build() async throws -> ArtFixtures {
        let base = try await DecodingFixtures.shared()
        let directory = base.path("art")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let cover = directory + "/source.png"
        let ffmpeg = DecodingFixtures.ffmpeg
        try await ffmpeg(["-f", "lavfi", "-i", "color=c=red:s=32x32", "-frames:v", "1", cover])
        let png = try DecodingFixtures.bytes(cover)
        let withPicture = ["-i", base.pcm16, "-i", cover, "-map", "0:a", "-map", "1:v", "-c:v", "copy"]
        try await ffmpeg(withPicture + ["-c:a", "libmp3lame", "-id3v2_version", "3",
                                        "-metadata:s:v", "comment=Cover (front)", directory + "/art.mp3"])
        try await ffmpeg(withPicture + ["-c:a", "aac", "-disposition:v", "attached_pic", directory + "/art.m4a"])
        try await ffmpeg(withPicture + ["-c:a", "flac", "-disposition:v", "attached_pic", directory + "/art.flac"])
        // Ogg: a FLAC picture block, base64, as a Vorbis comment.
        func be32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        let mime = Array("image/png".utf8)
        let block = be32(3) + be32(mime.count) + mime + be32(0) + be32(32) + be32(32) + be32(24) + be32(0) + be32(png.count) + png
        try await ffmpeg(["-i", base.pcm16, "-c:a", "libvorbis",
                          "-metadata", "METADATA_BLOCK_PICTURE=\(Data(block).base64EncodedString())", directory + "/art.ogg"])
        // An MP3 with a 50 MB picture (4096×4096, stored without compression).
        let big = directory + "/big.png"
        try await ffmpeg(["-f", "lavfi", "-i", "color=c=blue:s=4096x4096", "-frames:v", "1", "-pix_fmt", "rgb24",
                          "-compression_level", "0", big])
        try await ffmpeg(["-i", base.pcm16, "-i", big, "-map", "0:a", "-map", "1:v", "-c:v", "copy",
                          "-c:a", "libmp3lame", "-id3v2_version", "3", directory + "/huge-art.mp3"])
        try FileManager.default.removeItem(atPath: big)
        // A folder with an image beside a file without art, and one with a too-large image.
        for folder in ["beside", "too-large"] {
            try FileManager.default.createDirectory(atPath: directory + "/" + folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: base.pcm16, toPath: directory + "/\(folder)/track.wav")
        }
        try DecodingFixtures.write(png, to: directory + "/beside/Folder.PNG")
        try DecodingFixtures.write(png + [UInt8](repeating: 0, count: CoverArt.maximumSize), to: directory + "/too-large/cover.png")
        return ArtFixtures(directory: directory, png: png)
    }
}

@Suite("Decoding: cover art")
struct DecodingCoverArtTests {
    @Test(arguments: ["art.mp3", "art.m4a", "art.flac", "art.ogg"])
    func embeddedPictureIsTheImagesBytes(_ name: String) async throws {
        let fixtures = try await ArtFixtures.shared()
        let art = try #require(CoverArt.find(forAudioFileAt: fixtures.path(name)))
        #expect(art.data == fixtures.png)
        #expect(art.mimeType == "image/png")
        #expect(art.path == nil)
        // And the audio still decodes (the picture is a stream the decoder skips).
        let file = try AudioFile(contentsOf: fixtures.path(name))
        #expect(file.format.channelCount == 2)
        #expect(try file.readAll().count > 40000 * 2)
    }

    @Test func anImageBesideTheFileIsFoundWhateverItsCase() async throws {
        let fixtures = try await ArtFixtures.shared()
        let art = try #require(CoverArt.find(forAudioFileAt: fixtures.path("beside/track.wav")))
        #expect(art.path == fixtures.path("beside/Folder.PNG"))
        #expect(art.data == fixtures.png)
    }

    @Test func noArtAndTooLargeArtAreNil() async throws {
        let fixtures = try await ArtFixtures.shared()
        let base = try await DecodingFixtures.shared()
        #expect(CoverArt.embedded(inAudioFileAt: base.pcm16) == nil)
        #expect(CoverArt.embedded(inAudioFileAt: base.randomWAV) == nil)
        #expect(CoverArt.embedded(inAudioFileAt: base.missing) == nil)
        #expect(CoverArt.find(forAudioFileAt: fixtures.path("too-large/track.wav")) == nil)
    }

    @Test func a50MBPictureIsIgnoredAndTheAudioStillPlays() async throws {
        let fixtures = try await ArtFixtures.shared()
        let path = fixtures.path("huge-art.mp3")
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_size > 50_000_000)
        let started = ContinuousClock.now
        #expect(CoverArt.find(forAudioFileAt: path) == nil, "over CoverArt.maximumSize")
        let file = try AudioFile(contentsOf: path)
        #expect(try file.readAll().count > 40000 * 2)
        let elapsed = ContinuousClock.now - started
        print("decoding huge-art.mp3: art lookup, open and decode in \(elapsed)")
        #expect(elapsed < .seconds(15))
    }

    @Test func theCacheStoresEachImageOnceUnderItsSHA256() async throws {
        let fixtures = try await ArtFixtures.shared()
        let directory = fixtures.path("cache \(UUID().uuidString)")
        let cache = CoverArtCache(directory: directory + "/earshot/art")
        let art = CoverArt(data: fixtures.png)
        let path = try cache.store(art)
        #expect(try cache.store(art) == path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache.directory) == [(path as NSString).lastPathComponent])
        #expect(try DecodingFixtures.bytes(path) == fixtures.png)
        // The name is the SHA-256 of the bytes, as sha256sum computes it.
        let sum = try await run("sha256sum", [fixtures.path("source.png")])
        let expected = String(sum.stdout.prefix(64))
        #expect(path == cache.directory + "/" + expected + ".png")
        // Other bytes, another name; the URL is a file:// URL with the space escaped.
        let other = try cache.store(CoverArt(data: fixtures.png + [0]))
        #expect(other != path)
        #expect(try cache.storeURL(art) == "file://" + path.replacingOccurrences(of: " ", with: "%20"))
    }

    @Test func theCacheEvictsTheLeastRecentlyUsed() async throws {
        let fixtures = try await ArtFixtures.shared()
        let images = (0..<5).map { CoverArt(data: [UInt8](repeating: UInt8($0), count: 1000)) }
        let cache = CoverArtCache(directory: fixtures.path("lru-\(UUID().uuidString)"), capacity: 3000)
        var paths: [String] = []
        for image in images.prefix(3) {
            paths.append(try cache.store(image))
            try await Task.sleep(for: .milliseconds(20))  // distinct modification times
        }
        _ = try cache.store(images[0])  // used again: now the most recent
        try await Task.sleep(for: .milliseconds(20))
        paths.append(try cache.store(images[3]))
        let present = Set(try FileManager.default.contentsOfDirectory(atPath: cache.directory).map { cache.directory + "/" + $0 })
        #expect(present == [paths[0], paths[2], paths[3]], "image 1, the least recently used, went")
    }
}
