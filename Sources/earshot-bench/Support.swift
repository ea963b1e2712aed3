import Foundation
import Platform

#if canImport(Glibc)
import Glibc
#endif

/// `--name value` options and positional arguments.
struct Options {
    var positional: [String] = []
    var named: [String: String] = [:]

    init(_ arguments: [String]) {
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            if a.hasPrefix("--"), i + 1 < arguments.count {
                named[String(a.dropFirst(2))] = arguments[i + 1]
                i += 2
            } else {
                positional.append(a)
                i += 1
            }
        }
    }

    func int(_ name: String, _ fallback: Int) -> Int {
        guard let text = named[name] else { return fallback }
        guard let value = Int(text), value > 0 else { fail("--\(name) takes a positive integer, not \(text)") }
        return value
    }

    func double(_ name: String, _ fallback: Double) -> Double {
        guard let text = named[name] else { return fallback }
        guard let value = Double(text), value.isFinite, value >= 0 else { fail("--\(name) takes a number ≥ 0, not \(text)") }
        return value
    }
}


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

func usage(exitCode: Int32) -> Never {
    let text = """
        usage: earshot-bench decode FILE [--repeat N]
               earshot-bench open FILE [--repeat N]
               earshot-bench players FILE… [--count N] [--seconds S] [--volume V] [--prepare 0|1] [--prepare-wait S]
               earshot-bench latency FILE [--cycles K] [--cold-gap S] [--warm-gap S]
               earshot-bench stream-start URL [--repeat N]
        The in-process measurements of bench/audio (see its --help). Plays to ALSA's
        device "default" or EARSHOT_AUDIO_DEVICE.

        """
    if exitCode == 0 { print(text, terminator: "") } else { FileHandle.standardError.write(Data(text.utf8)) }
    exit(exitCode)
}

func format(_ value: Double, _ digits: Int = 6) -> String { String(format: "%.\(digits)f", value) }
