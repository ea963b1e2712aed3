package import AudioEngine
public import FoundationEssentials
import Synchronization

/// A short sound for alerts and feedback (the System Sound Services analog).
///
/// Made from a file or from a freedesktop sound-theme event name (`bell`,
/// `message-new-instant`, `complete`, …), decoded once and kept in memory (up to
/// ``maximumDecodedBytes``). ``play(completion:)``
/// returns at once; a voice is kept prepared so that the sound starts on the engine's next
/// period. Several plays may overlap.
///
/// A sound made by name plays from the sound server's sample cache where a PulseAudio-protocol
/// server answers (see ``init(named:theme:)``), as libcanberra's sounds do: the
/// server holds the decoded sound and mixes it when asked, with `media.role` `event`.
///
/// Other system sounds play on `AudioEngine.systemSounds` unless given another engine: a stream
/// of their own, apart from the app's players, with `media.role` `event` (the desktop's
/// event-sounds volume applies, as to libcanberra's sounds) and a short buffer.
public final class SystemSound: Sendable {
    /// The file the sound was decoded from.
    public let path: String
    /// The sound in memory, or nil when it streams from the file (its length was
    /// unknown until decoded).
    let audio: PCMAudio?
    /// The sound's format (its frame count is the decoded length when in memory). A sound
    /// played from the sample cache without being looked up first
    /// (``playingFromCache(named:theme:identity:completion:)``) asks the server for it the
    /// first time it is wanted.
    var format: AudioFileFormat {
        if let known = knownFormat.withLock({ $0 }) { return known }
        let asked = cached.flatMap { try? $0.cache.sampleInfo(named: $0.sample) }.flatMap(AudioFileFormat.init(sampleCached:))
        let format = asked ?? (try? AudioFile(contentsOf: path).format)
            ?? AudioFileFormat(sampleRate: 0, channelCount: 0, frameCount: nil, container: "unknown", encoding: "unknown", bitDepth: nil)
        knownFormat.withLock { $0 = format }
        return format
    }
    private let knownFormat: Mutex<AudioFileFormat?>
    /// The engine it plays through: the one given, or `AudioEngine.systemSounds`, made only
    /// when a sound from the sample cache must fall back to it.
    var engine: AudioEngine { engineChoice ?? .systemSounds }
    private let engineChoice: AudioEngine?
    /// The sample in the sound server's cache this sound plays by name, or nil when it plays
    /// through `engine` (no server answered, a file given by path, or the cache failed).
    let cached: CachedSample?
    private let voices = Mutex<(ready: Voice?, playing: [ObjectIdentifier: Voice], disposed: Bool)>((nil, [:], false))
    /// Plays through the sample cache that have not ended.
    private let cachedPlays = Mutex<Set<PulseSampleCache.Play>>([])

    /// Decodes a sound file.
    ///
    /// System sounds are short: a file whose decoded audio would pass
    /// ``maximumDecodedBytes`` is refused before anything is decoded. A file whose length
    /// its header does not give (an MP3 without a Xing header, a cut Ogg file) is not
    /// decoded into memory: each play streams it from the file.
    ///
    /// - Throws: ``AudioFileError`` naming the file and the reason; ``SystemSoundError``
    ///   for a sound too long to be a system sound or one the engine cannot play (a sample
    ///   rate it cannot convert).
    public convenience init(contentsOf url: URL) throws {
        try self.init(contentsOf: url, engine: .systemSounds)
    }

    /// Decodes a sound file to play on `engine` (the package's tools and tests; apps play
    /// system sounds on the engine kept for them).
    package init(contentsOf url: URL, engine: AudioEngine) throws {
        path = url.path
        let file = try AudioFile(contentsOf: url.path)
        try SystemSound.checkSize(of: file.format, path: url.path)
        if file.format.frameCount != nil {
            let audio = try PCMAudio(decoding: file)
            self.audio = audio
            knownFormat = Mutex(audio.format)
        } else {
            audio = nil
            knownFormat = Mutex(file.format)
        }
        engineChoice = engine
        cached = nil
        do {
            try prepareNext()
        } catch let error as AudioFileError {
            throw error  // names the file already
        } catch {
            throw SystemSoundError(path: path, reason: .cannotPlay("\(error)"))
        }
    }

    /// Finds `name` in the sound theme, then plays it by name from the sound server's sample
    /// cache, as libcanberra does, or decodes it for `engine`.
    ///
    /// Where a PulseAudio-protocol server answers (PulseAudio, or PipeWire through
    /// pipewire-pulse) and `engine` may use it, the decoded sound is uploaded to the server's
    /// sample cache once, as `earshot.THEME.NAME.STAMP` (STAMP tells this version of the file
    /// from others), and each play asks the server to play it: no stream to set up, nothing
    /// to decode. A later sound of that name, in this process or another, finds it there
    /// (the same file, unchanged) and decodes nothing. Without a
    /// server, or when the cache fails, the sound plays through `engine` as a file's does.
    ///
    /// - Throws: ``SoundThemeError`` when no theme has the sound (the error lists the
    ///   themes and folders searched), or ``AudioFileError``.
    public convenience init(named name: String, theme: SoundTheme = SoundTheme()) throws {
        try self.init(named: name, theme: theme, engine: .systemSounds)
    }

    /// Finds `name` in the sound theme and plays it from the sample cache, or decodes it to
    /// play on `engine` (the package's tools and tests).
    package convenience init(named name: String, theme: SoundTheme = SoundTheme(), engine: AudioEngine) throws {
        let path = try theme.file(for: name)
        if let found = try SystemSound.fromSampleCache(path: path, name: name, theme: theme.name, output: engine.configuration.output,
                                                       server: engine.configuration.soundServer, identity: engine.streamIdentity) {
            try self.init(path: path, format: found.format, audio: found.audio, cached: found.cached, engine: engine)
        } else {
            try self.init(contentsOf: URL(fileURLWithPath: path), engine: engine)
        }
    }

    /// For `earshot sound NAME`: finds `name` and plays it from the sample cache of libpulse's
    /// default server, presenting itself as `identity`, without making
    /// `AudioEngine.systemSounds` (its stream and threads) unless a play must fall back to it;
    /// `completion` runs after its last frame is heard. Nil, having played nothing, when no
    /// server answers, an ALSA device is named in `EARSHOT_AUDIO_DEVICE`, or the cache fails
    /// (play it with ``init(named:theme:)`` then).
    ///
    /// The play is asked for at once, by the name this version of the file has in the cache
    /// (see ``sampleCache(path:name:theme:output:server:identity:)``): a server that holds it
    /// starts it with no question asked first. Only when it does not is the file decoded
    /// and uploaded, and played then.
    ///
    /// - Throws: ``SoundThemeError`` or ``AudioFileError``, as ``init(named:theme:)``.
    package static func playingFromCache(named name: String, theme: SoundTheme, identity: AudioEngine.StreamIdentity,
                                         completion: @escaping @Sendable () -> Void) throws -> SystemSound? {
        let path = try theme.file(for: name)
        let output = AudioEngine.Configuration().output
        guard let cached = sampleCache(path: path, name: name, theme: theme.name, output: output, server: nil, identity: identity) else {
            return nil
        }
        let known = try SystemSound(path: path, format: nil, audio: nil, cached: cached, engine: nil)
        if known.playCached(cached, awaitingAnswer: true, completion: completion) { return known }
        // The server does not hold this version of the file: decoded and uploaded now.
        guard let found = try fromSampleCache(path: path, name: name, theme: theme.name, output: output, server: nil, identity: identity),
              let uploaded = found.cached else { return nil }
        let sound = try SystemSound(path: path, format: found.format, audio: found.audio, cached: uploaded, engine: nil)
        try sound.play(completion: completion)
        return sound
    }

    /// A sound that plays from the sample cache (`cached`), or through `engine` (nil:
    /// `AudioEngine.systemSounds`) with `audio` (decoded) or from `path` (streamed); a voice
    /// is prepared only when it plays through the engine. A nil `format` is asked of the
    /// cache when wanted (see ``format``).
    init(path: String, format: AudioFileFormat?, audio: PCMAudio?, cached: CachedSample?, engine: AudioEngine?) throws {
        self.path = path
        knownFormat = Mutex(format)
        self.audio = audio
        self.cached = cached
        engineChoice = engine
        guard cached == nil else { return }
        do {
            try prepareNext()
        } catch let error as AudioFileError {
            throw error
        } catch {
            throw SystemSoundError(path: path, reason: .cannotPlay("\(error)"))
        }
    }

    deinit { dispose() }

    /// The sound's length in seconds.
    public var duration: TimeInterval { format.duration ?? 0 }

    /// Plays the sound; `completion` runs when it ends: after its last frame is heard, on the
    /// engine's event thread, or (from the sample cache) on a thread of its own.
    ///
    /// - Throws: ``AudioEngineError`` when the device cannot be opened.
    public func play(completion: (@Sendable () -> Void)? = nil) throws {
        if let cached, playCached(cached, awaitingAnswer: false, completion: completion) { return }
        guard let voice = voices.withLock({ state -> Voice? in
            defer { state.ready = nil }
            if let ready = state.ready {
                state.playing[ObjectIdentifier(ready)] = ready
                SystemSound.playing.add(1, ordering: .relaxed)
            }
            return state.ready
        }) else {
            // A cached sound that fell back to the engine prepares its first voice now.
            if cached != nil, !voices.withLock({ $0.disposed }) {
                try prepareNext()
                return try play(completion: completion)
            }
            throw AudioEngineError.deviceUnavailable(device: engine.configuration.device, reason: "the sound was disposed")
        }
        // The handler holds the sound until the play ends, so that a sound nobody keeps
        // (`try SystemSound(named: "bell").play()`) plays whole instead of being disposed
        // by `deinit` at once; the cycle (sound, voice, handler) ends with the play, or
        // with `dispose()`, which takes the voice out of the sound and the engine.
        voice.setHandlers(onFinished: { [self, weak voice] _ in
            if let voice {
                voice.dispose()
                self.stopped(voice)
                voice.setHandlers(onFinished: nil, onError: nil)
            }
            completion?()
        }, onError: nil)
        do {
            try voice.play()
        } catch {
            voice.dispose()
            stopped(voice)
            try? prepareNext()
            throw error
        }
        try prepareNext()
    }

    /// Asks the server to play the cached sample; false when it cannot (the caller plays
    /// through the engine instead), or, `awaitingAnswer`, when the server refused it (most
    /// often: it does not hold the sample). As with a voice, the completion holds the sound
    /// until the play ends or ``dispose()`` stops it.
    private func playCached(_ cached: CachedSample, awaitingAnswer: Bool, completion: (@Sendable () -> Void)?) -> Bool {
        guard !voices.withLock({ $0.disposed }) else { return false }
        let started = cachedPlays.withLock { plays -> Bool in
            // Under the lock, so that the completion (another thread) finds the play listed.
            do {
                let ended: @Sendable (PulseSampleCache.Play, PulseSampleCache.PlayEnd) -> Void = { [self] play, _ in
                    if self.cachedPlayEnded(play) { completion?() }
                }
                let properties = cached.playProperties
                guard let play = awaitingAnswer
                    ? try cached.cache.playIfPresent(sample: cached.sample, properties: properties, completion: ended)
                    : try cached.cache.play(sample: cached.sample, properties: properties, completion: ended)
                else { return false }
                plays.insert(play)
                SystemSound.playing.add(1, ordering: .relaxed)
                return true
            } catch {
                return false
            }
        }
        return started
    }

    /// A cached play ended; false for one that `dispose()` stopped meanwhile.
    private func cachedPlayEnded(_ play: PulseSampleCache.Play) -> Bool {
        let removed = cachedPlays.withLock { $0.remove(play) != nil }
        if removed { SystemSound.playing.subtract(1, ordering: .relaxed) }
        return removed
    }

    /// Whether any play of this sound is still sounding.
    public var isPlaying: Bool { voices.withLock { !$0.playing.isEmpty } || cachedPlays.withLock { !$0.isEmpty } }

    /// Stops every play and releases the decoded audio's voices. A sound that is playing
    /// keeps itself alive until it ends; this stops it at once.
    public func dispose() {
        let all = voices.withLock { state -> [Voice] in
            defer { state = (nil, [:], true) }
            SystemSound.playing.subtract(state.playing.count, ordering: .relaxed)
            return Array(state.playing.values) + (state.ready.map { [$0] } ?? [])
        }
        for voice in all {
            voice.dispose()
            voice.setHandlers(onFinished: nil, onError: nil)  // releases the sound they hold
        }
        let plays = cachedPlays.withLock { plays -> Set<PulseSampleCache.Play> in
            defer { plays = [] }
            return plays
        }
        SystemSound.playing.subtract(plays.count, ordering: .relaxed)
        // Kills each play's sink input; their completions (which hold the sound) are dropped.
        for play in plays { cached?.cache.stop(play) }
    }

    /// Plays of system sounds in the process that have not ended: the session does not
    /// count sound made while only these play as its own.
    static let playing = Atomic<Int>(0)
    static var playingCount: Int { playing.load(ordering: .relaxed) }

    /// A play ended (or failed to start): it no longer counts.
    private func stopped(_ voice: Voice) {
        let removed = voices.withLock { $0.playing.removeValue(forKey: ObjectIdentifier(voice)) }
        if removed != nil { SystemSound.playing.subtract(1, ordering: .relaxed) }
    }

    private func prepareNext() throws {
        let voice = try engine.makeVoice(for: audio?.makeCursor() ?? AudioFile(contentsOf: path))
        voice.prepare()
        let keep = voices.withLock { state -> Bool in
            guard !state.disposed else { return false }
            state.ready = voice
            return true
        }
        if !keep { voice.dispose() }
    }
}
