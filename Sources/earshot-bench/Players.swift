import Earshot
import AudioEngine
import Foundation
import Platform

#if canImport(Glibc)
import Glibc
#endif

/// The engine voice behind an `AudioPlayer` (internal there), read through reflection so that
/// its `dropoutCount` can be reported; nil if reflection metadata is not available.
func voice(of player: AudioPlayer) -> Voice? {
    Mirror(reflecting: player).children.first { $0.label == "voice" }?.value as? Voice
}

/// N players at once for S seconds: the process's CPU over that window, per thread too.
func runPlayers(files: [String], count: Int, seconds: Double, volume: Double?, prepare: Bool, prepareWait: Double) {
    let volume = Float(volume ?? 1 / Double(count))

    // The engine's three threads are the ones that appear when it is made.
    let before = Set(threadCPU().keys)
    let engine = AudioEngine.shared
    var engineThreads: [Int] = []
    for _ in 0..<200 where engineThreads.count < 3 {
        engineThreads = threadCPU().keys.filter { !before.contains($0) }.sorted()
        if engineThreads.count < 3 { usleep(5000) }
    }
    let names = ["render", "reader", "events"]

    var players: [AudioPlayer] = []
    for i in 0..<count {
        do {
            let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: files[i % files.count]))
            player.volume = volume
            players.append(player)
        } catch {
            fail("players: \(error)")
        }
    }
    guard players.allSatisfy({ $0.duration >= seconds }) else {
        fail("players: every file must last at least \(seconds) s")
    }

    // Prepared (AVAudioPlayer's prepareToPlay) by default: the rings are filled before play().
    if prepare {
        for player in players { player.prepareToPlay() }
        usleep(UInt32(prepareWait * 1e6))
    }

    let underruns0 = engine.underrunCount
    let threads0 = threadCPU()
    let cpu0 = processCPU()
    let t0 = MonotonicClock.seconds()
    for player in players where !player.play() {
        fail("players: play failed: \(player.lastError.map { "\($0)" } ?? "?")")
    }
    let started = MonotonicClock.seconds() - t0
    var early: [Int]? = nil
    // Sleep to the end of the window (nanosleep; the main thread does nothing meanwhile).
    // The dropouts in the first second (start-up) are counted apart from the rest.
    while MonotonicClock.seconds() - t0 < seconds {
        if early == nil, MonotonicClock.seconds() - t0 >= min(1, seconds / 2) { early = players.compactMap(voice(of:)).map(\.dropoutCount) }
        usleep(UInt32(min(0.05, max(0.001, seconds - (MonotonicClock.seconds() - t0))) * 1e6))
    }
    let wall = MonotonicClock.seconds() - t0
    let cpu1 = processCPU()
    let threads1 = threadCPU()

    let positions = players.map(\.currentTime)
    let playing = players.filter(\.isPlaying).count
    let voices = players.compactMap(voice(of:))
    let total = voices.reduce(0) { $0 + $1.dropoutCount }
    let first = early?.reduce(0, +) ?? 0
    let dropouts = voices.count == players.count && early?.count == players.count
        ? "\(total) dropouts_first_s=\(first) dropouts_after=\(total - first) voices_dropping=\(voices.filter { $0.dropoutCount > 0 }.count)"
        : "n/a"
    let user = cpu1.user - cpu0.user, system = cpu1.system - cpu0.system
    var line = "players count=\(count) prepared=\(prepare ? 1 : 0) wall=\(format(wall, 3)) cpu_user=\(format(user, 3)) cpu_sys=\(format(system, 3)) "
        + "cpu_pct=\(format(100 * (user + system) / wall, 2)) underruns=\(engine.underrunCount - underruns0) dropouts=\(dropouts) "
        + "playing_at_end=\(playing) pos_min=\(format(positions.min() ?? 0, 3)) pos_max=\(format(positions.max() ?? 0, 3)) "
        + "play_calls_ms=\(format(started * 1000, 2)) latency_ms=\(format(engine.outputLatency * 1000, 1))"
    for (index, tid) in engineThreads.enumerated() where index < names.count {
        let used = (threads1[tid] ?? 0) - (threads0[tid] ?? 0)
        line += " \(names[index])_pct=\(format(100 * used / wall, 2))"
    }
    let others = threads1.filter { !engineThreads.contains($0.key) }.reduce(0.0) { $0 + $1.value - (threads0[$1.key] ?? 0) }
    line += " other_threads_pct=\(format(100 * others / wall, 2))"
    emit(line)
    for player in players { player.stop() }
}
