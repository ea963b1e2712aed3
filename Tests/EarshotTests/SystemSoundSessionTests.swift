@testable import Earshot
import AudioEngine
import SessionPolicy
import Foundation
import Testing
import TestSupport

/// System sounds are not the app's audio session (System Sound Services play outside it on
/// iOS): an active playback session that plays only a system sound is not sounding for the
/// arbiter (it interrupts nobody, claims no remote target, is not the last sound), while an
/// `AudioPlayer` started during the same system sound is the session's sound. In process,
/// the session on a private bus hosting the arbiter; part of the `SystemSoundTests` suite, so
/// that `scripts/test` runs it in the real-time audio pass.
extension SystemSoundTests {
    @Test("a system sound is not the session's sound; a player started during it is")
    func systemSoundIsNotTheSessionsSound() async throws {
        try await withAudio(idleTimeout: 0) { _ in
            let engine = AudioEngine.shared
            try await eventually("an earlier test's sound to end", timeout: 5) { !engine.isProducingSound }
            let bus = try PrivateBus()
            let session = AudioSession(appName: "alerts", bus: .address(bus.address))
            defer { AudioSession.connected.withLock { if $0 === session { $0 = nil } } }
            try await session.setCategory(.playback)
            try await session.setActive(true)
            let id = SessionID(try await session.connection().uniqueName)
            let arbiter = try #require(session.state.withLock { $0.hosted }, "the session hosts the arbiter on its bus")

            let tone = URL(fileURLWithPath: try TestSignals.sine(frequency: 1000, duration: 1.5))
            try SystemSound(contentsOf: tone).play()
            // The engine did hear it start: the session was told, and chose not to report it.
            try await eventually("the engine's sound-started event", timeout: 3) { engine.isProducingSound }
            try await sleep(0.4)
            #expect(arbiter.policy[id]?.isProducingSound == false, "a system sound reported as the session's sound")

            let player = try AudioPlayer(contentsOf: tone)
            #expect(player.play())
            try await eventually("the arbiter to hear the player", timeout: 3) { arbiter.policy[id]?.isProducingSound == true }
            player.stop()
        }
    }
}
