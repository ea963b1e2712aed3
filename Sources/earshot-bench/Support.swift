import Foundation
import Platform

#if canImport(Glibc)
import Glibc
#endif

/// The process's user and system CPU seconds (all threads, getrusage).
func processCPU() -> (user: Double, system: Double) {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return (seconds(usage.ru_utime), seconds(usage.ru_stime))
}

/// Each thread's CPU seconds so far (`/proc/self/task/TID/schedstat`: nanoseconds on CPU), by TID.
func threadCPU() -> [Int: Double] {
    var result: [Int: Double] = [:]
    guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return result }
    for task in tasks {
        guard let tid = Int(task),
              let text = try? String(contentsOfFile: "/proc/self/task/\(task)/schedstat", encoding: .utf8),
              let first = text.split(separator: " ").first, let nanos = Double(first) else { continue }
        result[tid] = nanos / 1e9
    }
    return result
}

/// Writes a line to standard output and flushes it (standard output is a pipe under bench/audio).
func emit(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        offset += n
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("earshot-bench: \(message)\n".utf8))
    exit(1)
}

func format(_ value: Double, _ digits: Int = 6) -> String { String(format: "%.\(digits)f", value) }
