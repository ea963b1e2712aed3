import AudioEngine
#if canImport(Glibc)
import Glibc
#endif

/// A theme sound held in the sound server's sample cache: the connection, the sample's
/// name there, and the properties each play carries.
struct CachedSample: Sendable {
    let cache: PulseSampleCache
    let sample: String
    let playProperties: [String: String]
}

extension SystemSound {
    /// What ``init(named:theme:)`` found or made in the sample cache: the sample (nil
    /// when the upload failed and the decoded audio plays through the engine) and the sound's
    /// format and audio (nil when the sample was already there: nothing was decoded).
    struct SampleCacheResult {
        var cached: CachedSample?
        var format: AudioFileFormat
        var audio: PCMAudio?
    }

    /// The sample cache of the engine's server (`server`, nil: libpulse's default) and the
    /// name and properties the theme sound `name`, from `path`, has there; nil when no
    /// server answers, the engine plays to an ALSA device (`output`) or the file cannot be
    /// read. Asks the server nothing beyond connecting (once per process): whether it holds
    /// the sample is not known.
    ///
    /// The sample's name is `earshot.THEME.NAME.STAMP`, STAMP a hash of the file's path, size
    /// and modification time: a sample of that name is this file as it is now, so a play by
    /// name needs no question first, and a changed file gets a new name (the stale sample
    /// is removed once the new one is uploaded).
    static func sampleCache(path: String, name: String, theme: String, output: AudioEngine.OutputChoice, server: String?,
                            identity: AudioEngine.StreamIdentity) -> CachedSample? {
        guard output != .alsa, let stamp = fileStamp(path),
              let cache = try? PulseSampleCache.connection(server: server, identity: identity) else { return nil }
        let play = [
            "media.role": "event",
            "event.id": name,
            "media.name": name,
            "media.filename": path,
            "application.name": identity.applicationName,
            "application.id": identity.applicationID ?? "",
            "application.icon_name": identity.iconName ?? "",
            "application.process.id": String(getpid()),
        ]
        return CachedSample(cache: cache, sample: samplePrefix(theme: theme, name: name) + stamp, playProperties: play)
    }

    /// Looks the theme sound `name` (from `path`) up in the sample cache of the engine's
    /// server (see ``sampleCache(path:name:theme:output:server:identity:)``), or decodes it
    /// and uploads it; nil when no server answers or the engine plays to an ALSA device: the
    /// sound plays through the engine, as before. Decoding errors are thrown; cache errors
    /// are not (the engine plays what was decoded).
    static func fromSampleCache(path: String, name: String, theme: String, output: AudioEngine.OutputChoice, server: String?,
                                identity: AudioEngine.StreamIdentity) throws -> SampleCacheResult? {
        guard let cached = sampleCache(path: path, name: name, theme: theme, output: output, server: server, identity: identity) else {
            return nil
        }
        if let info = try? cached.cache.sampleInfo(named: cached.sample), let format = AudioFileFormat(sampleCached: info) {
            return SampleCacheResult(cached: cached, format: format, audio: nil)
        }
        let file = try AudioFile(contentsOf: path)
        try checkSize(of: file.format, path: path)
        // A file of unknown length streams through the engine (see ``init(contentsOf:)``).
        guard file.format.frameCount != nil else { return nil }
        let audio = try PCMAudio(decoding: file)
        do {
            try cached.cache.upload(name: cached.sample, audio: audio, properties: cached.playProperties)
        } catch {
            return SampleCacheResult(cached: nil, format: audio.format, audio: audio)
        }
        cached.cache.removeSamples(withPrefix: samplePrefix(theme: theme, name: name), keeping: cached.sample)
        return SampleCacheResult(cached: cached, format: audio.format, audio: audio)
    }

    /// The start of the names the theme sound `name` has in the sample cache, one per
    /// version of its file: `earshot.THEME.NAME.`.
    static func samplePrefix(theme: String, name: String) -> String { "earshot.\(theme).\(name)." }

    /// What tells this version of the file at `path` from any other: 16 hex digits hashing
    /// its path, size and modification time (FNV-1a); nil when it cannot be read.
    static func fileStamp(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(path)\0\(info.st_size)\0\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

extension AudioFileFormat {
    /// The format of a sample the server holds (uploaded as Float32); nil for one that says
    /// no rate.
    init?(sampleCached info: PulseSampleCache.SampleInfo) {
        guard info.sampleRate > 0 else { return nil }
        self.init(sampleRate: info.sampleRate, channelCount: info.channels,
                  frameCount: Int64((info.duration * Double(info.sampleRate)).rounded()),
                  container: "sample cache", encoding: "float 32-bit", bitDepth: 32)
    }
}
