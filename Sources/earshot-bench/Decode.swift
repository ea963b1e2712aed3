import Earshot
import AudioEngine
import Foundation
import Platform

/// Decodes a whole file to memory with `AudioFile.readAll()`, `--repeat` times.
func runDecode(path: String, repeats: Int) {
    for _ in 0..<repeats {
        let cpu0 = processCPU()
        let t0 = MonotonicClock.seconds()
        let samples: [Float]
        let channels: Int
        do {
            let file = try AudioFile(contentsOf: path)
            channels = file.format.channelCount
            samples = try file.readAll()
        } catch {
            fail("decode: \(error)")
        }
        let seconds = MonotonicClock.seconds() - t0
        let cpu1 = processCPU()
        let frames = samples.count / max(1, channels)
        // Touch the result so that the decode cannot be optimised away.
        var peak: Float = 0
        for i in stride(from: 0, to: samples.count, by: 997) { peak = max(peak, abs(samples[i])) }
        emit("decode frames=\(frames) channels=\(channels) seconds=\(format(seconds)) fps=\(format(Double(frames) / seconds, 0)) "
            + "cpu=\(format(cpu1.user + cpu1.system - cpu0.user - cpu0.system)) peak=\(format(Double(peak), 3))")
    }
}

/// Opens FILE `--repeat` times, alternately without and with reading its tags; one line each:
/// `open tags=0|1 seconds=…` (CLOCK_MONOTONIC, open and close, and the `tags` access when tags=1).
func runOpen(path: String, repeats: Int) {
    for round in 0..<(2 * repeats) {
        let readTags = round % 2 == 1
        let t0 = MonotonicClock.seconds()
        var fields = 0
        do {
            let file = try AudioFile(contentsOf: path)
            if readTags { fields = file.tags.artists.count + (file.tags.title == nil ? 0 : 1) }
        } catch {
            fail("open: \(error)")
        }
        let seconds = MonotonicClock.seconds() - t0
        emit("open tags=\(readTags ? 1 : 0) seconds=\(format(seconds)) fields=\(fields)")
    }
}
