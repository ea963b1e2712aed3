@testable import AudioEngine
import Testing

/// `ExclusiveUse` is what keeps the promise of `AudioFile` and `SampleRateConverter`
/// (`@unchecked Sendable`, used by one thread at a time): handing over is allowed, being
/// inside at once stops the process.
@Suite("One thread at a time", .tags(.inProcessAudio))
struct ExclusiveUseTests {
    @Test("use handed from thread to thread, one at a time, passes")
    func handedOver() async {
        final class Guarded: Sendable { let use = ExclusiveUse("Handed") }
        let guarded = Guarded()
        var total = 0
        for _ in 0..<4 {
            total += await Task.detached { guarded.use.run { 1 } }.value
        }
        #expect(total == 4)
    }

    @Test("a second entry while one is inside stops the process, naming the type")
    func overlapStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let use = ExclusiveUse("Overlapped")
            use.run { use.run {} }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Overlapped used by two threads at once"), "stderr: \(message)")
    }
}
