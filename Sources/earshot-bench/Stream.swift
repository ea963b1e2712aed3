import Platform
import Earshot
import AudioEngine
import Foundation

/// Opens URL as a NetworkStream and reads until the first decoded frame, `--repeat` times; one
/// line each: `stream-start seconds=…` (CLOCK_MONOTONIC, from before the open to the first frame
/// the engine's reader would get; reads that find nothing are retried every 0.2 ms).
func runStreamStart(url: String, repeats: Int) {
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 1024 * 8)
    defer { buffer.deallocate() }
    for _ in 0..<repeats {
        let t0 = MonotonicClock.seconds()
        do {
            let stream = try NetworkStream(url: url)
            while try stream.read(into: buffer, frames: 1024 * 8 / max(1, stream.format.channelCount)) == 0 {
                usleep(200)
            }
            let seconds = MonotonicClock.seconds() - t0
            stream.close()
            emit("stream-start seconds=\(format(seconds)) rate=\(stream.format.sampleRate)")
        } catch {
            fail("stream-start: \(error)")
        }
    }
}
