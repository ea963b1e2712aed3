import Foundation
import TestSupport

/// Files for the FFmpeg decoding tests, made once per test run with ffmpeg from the shared
/// reference signal of ``DecodingFixtures`` (1 s of stereo at 44100 Hz, 440 Hz left, 1000 Hz
/// right), in the same temporary directory. Nothing here is committed.
struct DecodingFFmpegFixtures: Sendable {
    let base: DecodingFixtures

    static func shared() async throws -> DecodingFFmpegFixtures { try await building.value }

    private static let building = Task { try await DecodingFFmpegFixtures.build() }

    func path(_ name: String) -> String { base.path(name) }

    // Formats libsndfile cannot open.
    /// AAC-LC in MP4 (ffmpeg's encoder writes an edit list with the 1024 priming frames).
    var aac: String { base.aac }
    var alacMP4: String { path("alac.m4a") }
    /// ALAC in CAF as ffmpeg writes it (format flags 0: libsndfile refuses it).
    var ffmpegCAF: String { path("alac-ffmpeg.caf") }
    var adts: String { path("music.aac") }
    var wma: String { path("music.wma") }
    /// HE-AAC, when this ffmpeg has an encoder for it (libfdk_aac; Debian's ffmpeg has none).
    var heAAC: String? { Self.heAACEncoder ? path("he.m4a") : nil }
    /// An MP4 with a video stream and no audio.
    var videoOnly: String { path("video-only.mp4") }
    /// AAC in MP4 with every tag FFmpeg maps.
    var taggedAAC: String { path("tagged.m4a") }
    /// MP3 (libsndfile's) with the same tags in ID3v2.4.
    var taggedMP3: String { path("tagged-id3.mp3") }
    /// FLAC with the same tags as Vorbis comments, as ffmpeg names them (ALBUMARTIST,
    /// TRACKNUMBER, DISCNUMBER, DESCRIPTION, …).
    var taggedFLAC: String { path("tagged-vorbis.flac") }
    /// AAC in MP4 whose title atom holds "La été" in Latin-1, not UTF-8.
    var latin1AAC: String { path("latin1-title.m4a") }

    // Broken MP4s, from a 4 s AAC file.
    /// Moov atom at the end (ffmpeg's default), file cut to 60 %: no moov.
    var moovMissing: String { path("moov-missing.m4a") }
    /// Moov atom first (`+faststart`), file cut to 60 % inside the media data.
    var cutAfterMoov: String { path("cut-after-moov.m4a") }
    /// The moov atom's size set to 0xFFFFFFF0, far past the end of the file.
    var hugeMoov: String { path("huge-moov.m4a") }
    /// The stsz atom's size set to 0x7FFFFFF0.
    var hugeSampleSizeAtom: String { path("huge-stsz.m4a") }
    /// The stsz atom's sample count set to 0x7FFFFFF0.
    var hugeSampleCount: String { path("huge-count.m4a") }
    /// Moov atom first, 2000 bytes of the media data in the middle overwritten with noise.
    var damagedMedia: String { path("damaged-media.m4a") }
    /// 100 copies of the 1 s AAC stream, as 100 tracks of one MP4.
    var manyTracks: String { path("many-tracks.m4a") }
    static let longSeconds = 4.0

    // A gapless album: one continuous 3.9 s signal cut into three items of 1.3 s (57330 frames,
    // not a multiple of AAC's 1024), each encoded on its own.
    var albumSource: String { path("album.wav") }
    var albumPieces: [String] { (1...3).map { path("album-\($0).wav") } }
    var albumItems: [String] { (1...3).map { path("album-\($0).m4a") } }
    static let albumItemFrames = 57330

    static let tags: [String: String] = [
        "title": "Tëst — “AAC” ✓", "artist": "First Artist;Second Artist", "album": "An Album",
        "album_artist": "The Band", "composer": "A Composer", "track": "3/12", "disc": "1/2",
        "genre": "Test Genre", "date": "2024", "comment": "A comment",
    ]

    static let heAACEncoder: Bool = {
        let pipe = Pipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg", "-hide_banner", "-encoders"]
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        // Through TestSupport's launch: Process.run from several threads at once crashes.
        guard (try? launch(process)) != nil else { return false }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self).contains("libfdk_aac")
    }()

    private static func build() async throws -> DecodingFFmpegFixtures {
        let base = try await DecodingFixtures.shared()
        let f = DecodingFFmpegFixtures(base: base)
        let ffmpeg = DecodingFixtures.ffmpeg
        try await ffmpeg(["-i", base.pcm16, "-c:a", "alac", f.alacMP4])
        try await ffmpeg(["-i", base.pcm16, "-c:a", "alac", f.ffmpegCAF])
        try await ffmpeg(["-i", base.pcm16, "-c:a", "aac", "-f", "adts", f.adts])
        try await ffmpeg(["-i", base.pcm16, "-c:a", "wmav2", f.wma])
        if let he = f.heAAC {
            try await ffmpeg(["-i", base.pcm16, "-c:a", "libfdk_aac", "-profile:a", "aac_he", he])
        }
        try await ffmpeg(["-f", "lavfi", "-i", "color=c=black:s=16x16:d=1", "-c:v", "mpeg4", f.videoOnly])
        let tagArguments = tags.sorted { $0.key < $1.key }.flatMap { ["-metadata", "\($0.key)=\($0.value)"] }
        try await ffmpeg(["-i", base.pcm16, "-c:a", "aac"] + tagArguments + [f.taggedAAC])
        try await ffmpeg(["-i", base.pcm16, "-c:a", "libmp3lame", "-id3v2_version", "4"] + tagArguments + [f.taggedMP3])
        try await ffmpeg(["-i", base.pcm16, "-c:a", "flac"] + tagArguments + [f.taggedFLAC])
        let latin1 = f.path("latin1-source.m4a")
        try await ffmpeg(["-i", base.pcm16, "-c:a", "aac", "-metadata", "title=La XtX", latin1])
        var bytes = try DecodingFixtures.bytes(latin1)
        let marker = Array("La XtX".utf8)
        guard let at = (0..<bytes.count - marker.count).first(where: { bytes[$0..<$0 + marker.count].elementsEqual(marker) }) else {
            throw TestFailure("no title in \(latin1)")
        }
        bytes[at + 3] = 0xE9
        bytes[at + 5] = 0xE9
        try DecodingFixtures.write(bytes, to: f.latin1AAC)

        // Broken MP4s.
        let long = f.path("long.wav")  // made by DecodingFixtures: the signal repeated, 4 s
        let moovLast = f.path("long.m4a"), moovFirst = f.path("long-faststart.m4a")
        try await ffmpeg(["-i", long, "-c:a", "aac", moovLast])
        try await ffmpeg(["-i", long, "-c:a", "aac", "-movflags", "+faststart", moovFirst])
        let last = try DecodingFixtures.bytes(moovLast), first = try DecodingFixtures.bytes(moovFirst)
        try DecodingFixtures.write(Array(last.prefix(last.count * 6 / 10)), to: f.moovMissing)
        try DecodingFixtures.write(Array(first.prefix(first.count * 6 / 10)), to: f.cutAfterMoov)
        try DecodingFixtures.write(try patchAtom(first, "moov", sizeTo: 0xFFFF_FFF0), to: f.hugeMoov)
        try DecodingFixtures.write(try patchAtom(first, "stsz", sizeTo: 0x7FFF_FFF0), to: f.hugeSampleSizeAtom)
        try DecodingFixtures.write(try patchAtom(first, "stsz", word: 4, to: 0x7FFF_FFF0), to: f.hugeSampleCount)
        var damaged = first
        var generator = SplitMix64(seed: 0xDA4A6E)
        for index in damaged.count / 2..<(damaged.count / 2 + 2000) {
            damaged[index] = UInt8(truncatingIfNeeded: generator.next())
        }
        try DecodingFixtures.write(damaged, to: f.damagedMedia)
        try await ffmpeg(["-i", base.aac] + Array(repeating: ["-map", "0:a"], count: 100).flatMap { $0 } + ["-c", "copy", f.manyTracks])

        // The gapless album: a sine gliding from 300 to 900 Hz (exponentially; no two joins alike), cut in three.
        try await DecodingFixtures.tool("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", f.albumSource,
                                                "synth", "3.9", "sine", "300-900", "gain", "-6"])
        for (index, piece) in f.albumPieces.enumerated() {
            try await DecodingFixtures.tool("sox", [f.albumSource, piece, "trim", "\(albumItemFrames * index)s", "\(albumItemFrames)s"])
            try await ffmpeg(["-i", piece, "-c:a", "aac", "-b:a", "192k", f.albumItems[index]])
        }
        return f
    }

    /// A copy of an MP4 with one big-endian 32-bit word of the first `name` atom replaced: word 0
    /// is its size, 1 its type, 2 a full atom's version and flags (stsz: 3 the sample size, 4 the count).
    private static func patchAtom(_ mp4: [UInt8], _ name: String, word: Int = 0, sizeTo value: UInt32) throws -> [UInt8] {
        try patchAtom(mp4, name, word: word, to: value)
    }

    private static func patchAtom(_ mp4: [UInt8], _ name: String, word: Int, to value: UInt32) throws -> [UInt8] {
        let type = Array(name.utf8)
        guard let typeAt = (4..<mp4.count - 4).first(where: { mp4[$0..<$0 + 4].elementsEqual(type) }) else {
            throw TestFailure("no \(name) atom")
        }
        let at = typeAt - 4 + word * 4
        var patched = mp4
        patched.replaceSubrange(at..<at + 4, with: (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) })
        return patched
    }
}
