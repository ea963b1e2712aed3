public import AudioEngine
public import Foundation
import Synchronization

/// A short sound for alerts and feedback (the System Sound Services analog).
///
/// Made from a file or from a freedesktop sound-theme event name (`bell`,
/// `message-new-instant`, `complete`, …), decoded once and kept in memory. ``play(completion:)``
/// returns at once; a voice is kept prepared so that the sound starts on the engine's next
/// period. Several plays may overlap.
public final class SystemSound: Sendable {
    /// The file the sound was decoded from.
    public let path: String
    let audio: PCMAudio
    let engine: AudioEngine
    private let voices = Mutex<(ready: Voice?, playing: [ObjectIdentifier: Voice], disposed: Bool)>((nil, [:], false))

    /// Decodes a sound file.
    ///
    /// - Throws: ``AudioFileError`` naming the file and the reason.
    public init(contentsOf url: URL, engine: AudioEngine = .shared) throws {
        path = url.path
        audio = try PCMAudio(decoding: AudioFile(contentsOf: url.path))
        self.engine = engine
        try prepareNext()
    }

    /// Finds `name` in the sound theme, then decodes it.
    ///
    /// - Throws: ``SoundThemeError`` when no theme has the sound (the error lists the
    ///   themes and folders searched), or ``AudioFileError``.
    public convenience init(named name: String, theme: SoundTheme = SoundTheme(), engine: AudioEngine = .shared) throws {
        try self.init(contentsOf: URL(fileURLWithPath: theme.file(for: name)), engine: engine)
    }

    deinit { dispose() }

    /// The sound's length in seconds.
    public var duration: TimeInterval { audio.format.duration ?? 0 }

    /// Plays the sound; `completion` runs on the engine's event thread when it ends.
    ///
    /// - Throws: ``AudioEngineError`` when the device cannot be opened.
    public func play(completion: (@Sendable () -> Void)? = nil) throws {
        guard let voice = voices.withLock({ state -> Voice? in
            defer { state.ready = nil }
            if let ready = state.ready { state.playing[ObjectIdentifier(ready)] = ready }
            return state.ready
        }) else { throw AudioEngineError.deviceUnavailable(device: engine.configuration.device, reason: "the sound was disposed") }
        voice.setHandlers(onFinished: { [weak self, weak voice] _ in
            if let voice {
                voice.dispose()
                _ = self?.voices.withLock { $0.playing.removeValue(forKey: ObjectIdentifier(voice)) }
            }
            completion?()
        }, onError: nil)
        do {
            try voice.play()
        } catch {
            voice.dispose()
            _ = voices.withLock { $0.playing.removeValue(forKey: ObjectIdentifier(voice)) }
            try? prepareNext()
            throw error
        }
        try prepareNext()
    }

    /// Whether any play of this sound is still sounding.
    public var isPlaying: Bool { voices.withLock { !$0.playing.isEmpty } }

    /// Stops every play and releases the decoded audio's voices.
    public func dispose() {
        let all = voices.withLock { state -> [Voice] in
            defer { state = (nil, [:], true) }
            return Array(state.playing.values) + (state.ready.map { [$0] } ?? [])
        }
        for voice in all { voice.dispose() }
    }

    private func prepareNext() throws {
        let voice = try engine.makeVoice(for: audio.makeCursor())
        voice.prepare()
        let keep = voices.withLock { state -> Bool in
            guard !state.disposed else { return false }
            state.ready = voice
            return true
        }
        if !keep { voice.dispose() }
    }
}
