import Earshot
import Foundation
import Platform

#if canImport(Glibc)
import Glibc
#endif

/// First-sample latency of `AudioRecorder.record()` in process: the time from the call to the
/// first frame written into the file (`currentTime > 0`), for a recorder prepared beforehand
/// (input open and capturing) and for one that opens its file and input in `record()`.
/// Prints `record-latency prepared=0|1 seconds=…` per run.
func runRecordLatency(folder: String, repeats: Int) {
    for run in 0..<repeats {
        for prepared in [true, false] {
            let url = URL(fileURLWithPath: "\(folder)/latency-\(run)-\(prepared ? 1 : 0).wav")
            let recorder: AudioRecorder
            do {
                recorder = try AudioRecorder(url: url, session: nil)
                if prepared {
                    try recorder.prepare()
                    usleep(300_000)
                }
            } catch {
                fail("record-latency: \(error)")
            }
            let start = MonotonicClock.seconds()
            guard recorder.record() else { fail("record-latency: \(recorder.lastError.map { "\($0)" } ?? "record() failed")") }
            let deadline = start + 5
            while recorder.currentTime == 0, MonotonicClock.seconds() < deadline { usleep(100) }
            let seconds = MonotonicClock.seconds() - start
            recorder.stop()
            emit("record-latency prepared=\(prepared ? 1 : 0) seconds=\(seconds)")
        }
    }
}
