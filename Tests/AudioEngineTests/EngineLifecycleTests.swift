@testable import AudioEngine
import Foundation
import Testing
import TestSupport

/// An engine's threads end when it is released, wherever the last release happens, and a
/// disposed voice is retired once. Named `SoundServer…` so that it runs in the serial
/// in-process audio pass (scripts/test): it plays on the shared sound server, and it counts
/// the process's engine threads, which another test's engines would disturb in parallel.
@Suite("AudioEngine lifecycle: threads end with the engine", .serialized, .tags(.inProcessAudio))
struct SoundServerEngineLifecycleTests {
    /// The process's threads named as the engine names its threads.
    static func engineThreads() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.count { task in
            let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            return ["earshot-render", "earshot-reader", "earshot-events"].contains(name.trimmingCharacters(in: .newlines))
        }
    }

    static func engine(server: PulseAudioServer) -> AudioEngine {
        var configuration = AudioEngine.Configuration()
        configuration.soundServer = server.address
        configuration.idleRelease = 0.2
        configuration.logsOutputChoice = false
        return AudioEngine(configuration: configuration)
    }

    /// This process's streams on the server.
    static func ownStreams(_ server: PulseAudioServer) throws -> Int {
        try SoundServerTests.sinkInputProperties(server).count { $0["application.process.id"] == String(getpid()) }
    }

    /// Plays a short sine on `engine` until its finish has been heard, then disposes the voice.
    static func playShortSound(_ engine: AudioEngine) async throws {
        let voice = try engine.makeVoice(for: AudioFile(contentsOf: TestSignals.sine(duration: 0.1)))
        let finished = Locked(false)
        voice.setHandlers(onFinished: { _ in finished.withLock { $0 = true } }, onError: nil)
        try voice.play()
        try await eventually("the sound to finish", timeout: 5) { finished.value }
        voice.dispose()
    }

    @Test("engines created and released, played or never started, leave no thread behind")
    func threadsEndWithTheEngine() async throws {
        try await withAudio(idleTimeout: 0) { server in
            let before = Self.engineThreads()
            let streamsBefore = try Self.ownStreams(server)
            var released: [WeakEngine] = []
            for n in 0..<6 {
                let engine = Self.engine(server: server)
                if n.isMultiple(of: 2) { try await Self.playShortSound(engine) }
                released.append(WeakEngine(engine))
            }
            let engines = released
            try await eventually("the released engines to go", timeout: 2) { engines.allSatisfy { $0.value == nil } }
            try await eventually("the engine threads to end (\(Self.engineThreads()) now, \(before) before)", timeout: 5) {
                Self.engineThreads() <= before
            }
            // The streams of the released engines are gone from the server too.
            try await eventually("the released engines' streams to close", timeout: 5) {
                try Self.ownStreams(server) <= streamsBefore
            }
        }
    }

    @Test("an engine released by a handler on its own event thread ends its threads")
    func releasedOnItsOwnEventThread() async throws {
        try await withAudio(idleTimeout: 0) { server in
            let before = Self.engineThreads()
            let holder = Locked<AudioEngine?>(Self.engine(server: server))
            let voice = try #require(holder.value).makeVoice(for: AudioFile(contentsOf: TestSignals.sine(duration: 0.1)))
            let weakEngine = WeakEngine(try #require(holder.value))
            let releasedOn = Locked<String?>(nil)
            voice.setHandlers(onFinished: { [unowned voice] _ in
                let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
                releasedOn.withLock { $0 = name.trimmingCharacters(in: .newlines) }
                voice.dispose()
                holder.withLock { $0 = nil }
            }, onError: nil)
            try voice.play()
            try await eventually("the handler to release the engine", timeout: 5) { releasedOn.value != nil }
            #expect(releasedOn.value == "earshot-events")
            try await eventually("the engine to go", timeout: 2) { weakEngine.value == nil }
            try await eventually("the engine threads to end (\(Self.engineThreads()) now, \(before) before)", timeout: 5) {
                Self.engineThreads() <= before
            }
        }
    }

    @Test("a disposed voice is retired once")
    func disposedVoiceRetiredOnce() throws {
        let engine = AudioEngine()
        let voice = try engine.makeVoice(for: AudioFile(contentsOf: TestSignals.sine(duration: 0.1)))
        // In the render table, as play puts it (no device needed: nothing renders).
        try engine.attach(voice)
        voice.dispose()
        let retirements = engine.retired.withLock { list in list.count { $0.voice === voice } }
        #expect(retirements == 1)
        #expect(engine.voices.withLock { $0[ObjectIdentifier(voice)] } == nil)
    }

    /// A queue's players go in any order: the one queued second may be disposed (and freed)
    /// first. The voice before it held it unretained as its successor and reached the freed
    /// voice when disposed in turn (a crash in `QueueEditTests` in the serial audio pass).
    @Test("a voice disposed while queued after another is forgotten by it")
    func disposedSuccessorIsForgotten() async throws {
        try await withAudio(idleTimeout: 0) { server in
            let engine = Self.engine(server: server)
            let first = try engine.makeVoice(for: AudioFile(contentsOf: TestSignals.sine(duration: 0.5)))
            var second: Voice? = try engine.makeVoice(for: AudioFile(contentsOf: TestSignals.sine(duration: 0.5)))
            try second!.play(after: first)
            #expect(first.successor.load(ordering: .acquiring) != 0)
            weak let gone = second
            second!.dispose()
            second = nil
            #expect(first.successor.load(ordering: .acquiring) == 0, "the predecessor still names the disposed voice")
            // Retired voices go once the render thread is past them; the predecessor's own
            // dispose must then find nothing to clear.
            try await eventually("the disposed voice to be freed", timeout: 5) {
                engine.retired.withLock { $0.removeAll() }
                return gone == nil
            }
            first.dispose()
        }
    }
}
