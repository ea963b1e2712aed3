@testable import Earshot
import AudioEngine
import SessionPolicy
import Foundation
import Testing
import TestSupport

/// System sounds are not the app's audio session (System Sound Services play outside it on
/// iOS): they play on an engine of their own (`AudioEngine.systemSounds`), so an active
/// playback session that plays only a system sound is not sounding for the arbiter (it interrupts nobody, claims no remote target, is not the last sound), while an
/// `AudioPlayer` started during the same system sound is the session's sound. In process,
/// the session on a private bus hosting the arbiter; part of the `SystemSoundTests` suite, so
/// that `scripts/test` runs it in the real-time audio pass.
extension SystemSoundTests {
    @Test("a system sound is not the session's sound; a player started during it is")
    func systemSoundIsNotTheSessionsSound() async throws {
        try await withSharedAudio(idleTimeout: 0) { _ in
            let engine = AudioEngine.shared
            try await eventually("an earlier test's sound to end", timeout: 5) {
                !engine.isProducingSound && !AudioEngine.systemSounds.isProducingSound
            }
            let bus = try PrivateBus()
            let session = AudioSession(appName: "alerts", bus: .address(bus.address))
            defer { session.unfollow() }
            try await session.setCategory(.playback)
            try await session.setActive(true)
            let id = SessionID(try await session.connection().uniqueName)
            let arbiter = try #require(session.state.withLock { $0.hosted }, "the session hosts the arbiter on its bus")

            let tone = URL(fileURLWithPath: try TestSignals.sine(frequency: 1000, duration: 1.5))
            try SystemSound(contentsOf: tone).play()
            // The system sounds' engine sounds; the session's (the players') does not.
            try await eventually("the system sound to start", timeout: 3) { AudioEngine.systemSounds.isProducingSound }
            try await sleep(0.4)
            #expect(!engine.isProducingSound, "the system sound played on the players' engine")
            #expect(arbiter.policy[id]?.isProducingSound == false, "a system sound reported as the session's sound")

            let player = try AudioPlayer(contentsOf: tone)
            #expect(player.play())
            try await eventually("the arbiter to hear the player", timeout: 3) { arbiter.policy[id]?.isProducingSound == true }
            player.stop()
        }
    }

    /// The desktop tells them apart: `pactl list sink-inputs` shows a stream for the player
    /// with `media.role` `music` and one for the system sound with `event` (so the server's
    /// event-sounds volume and role policies apply to the beep, not to the music), both
    /// from this process.
    @Test("a system sound is a stream of its own, with media.role event, beside the player's music")
    func systemSoundStreamHasTheEventRole() async throws {
        try await withSharedAudio(idleTimeout: 0) { server in
            let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: try TestSignals.sine(frequency: 500, duration: 2)))
            #expect(player.play())
            defer { player.stop() }
            try SystemSound(contentsOf: URL(fileURLWithPath: try TestSignals.sine(frequency: 1000, duration: 1))).play()
            let pid = "application.process.id = \"\(getpid())\""
            let listed = Locked<[String]>([])
            try await eventually("two streams from this process", timeout: 3) {
                let blocks = try server.pactl("list", "sink-inputs").components(separatedBy: "Sink Input #").filter { $0.contains(pid) }
                listed.withLock { $0 = blocks }
                return blocks.count == 2
            }
            let blocks = listed.value
            #expect(blocks.filter { $0.contains("media.role = \"event\"") }.count == 1, "\(blocks)")
            #expect(blocks.filter { $0.contains("media.role = \"music\"") }.count == 1, "\(blocks)")
        }
    }
}
