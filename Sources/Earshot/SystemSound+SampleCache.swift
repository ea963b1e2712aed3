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

    /// The property that tells whether a cached sample is still the file's: its size and
    /// modification time.
    static let fileStampProperty = "earshot.file"

    /// Looks `earshot.THEME.NAME` up in the sample cache of the engine's server (`server`,
    /// nil: libpulse's default), or decodes `path` and uploads it; nil when no server answers
    /// or the engine plays to an ALSA device (`output`): the sound plays through the engine,
    /// as before. Decoding errors are thrown; cache errors are not (the engine plays what was
    /// decoded).
    static func fromSampleCache(path: String, name: String, theme: String, output: AudioEngine.OutputChoice, server: String?,
                                identity: AudioEngine.StreamIdentity) throws -> SampleCacheResult? {
        guard output != .alsa, let stamp = fileStamp(path) else { return nil }
        let cache: PulseSampleCache
        do {
            cache = try PulseSampleCache.connection(server: server, identity: identity)
        } catch {
            return nil
        }
        let sample = "earshot.\(theme).\(name)"
        var properties = [
            "media.role": "event",
            "event.id": name,
            "media.name": name,
            "media.filename": path,
            "application.name": identity.applicationName,
            "application.id": identity.applicationID ?? "",
            "application.icon_name": identity.iconName ?? "",
            "application.process.id": String(getpid()),
        ]
        let play = properties
        properties[fileStampProperty] = stamp
        if let info = try? cache.sampleInfo(named: sample), info.properties["media.filename"] == path,
           info.properties[fileStampProperty] == stamp, info.sampleRate > 0
        {
            let format = AudioFileFormat(sampleRate: info.sampleRate, channelCount: info.channels,
                                         frameCount: Int64((info.duration * Double(info.sampleRate)).rounded()),
                                         container: "sample cache", encoding: "float 32-bit", bitDepth: 32)
            return SampleCacheResult(cached: CachedSample(cache: cache, sample: sample, playProperties: play), format: format, audio: nil)
        }
        let file = try AudioFile(contentsOf: path)
        try checkSize(of: file.format, path: path)
        // A file of unknown length streams through the engine (see ``init(contentsOf:)``).
        guard file.format.frameCount != nil else { return nil }
        let audio = try PCMAudio(decoding: file)
        do {
            try cache.upload(name: sample, audio: audio, properties: properties)
        } catch {
            return SampleCacheResult(cached: nil, format: audio.format, audio: audio)
        }
        return SampleCacheResult(cached: CachedSample(cache: cache, sample: sample, playProperties: play), format: audio.format, audio: audio)
    }

    /// "SIZE MTIME_NS" of the file at `path`, or nil when it cannot be read.
    static func fileStamp(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
    }
}
