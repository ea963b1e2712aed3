import Earshot
import AudioEngine
import Foundation
import Platform

#if canImport(Glibc)
import Glibc
#endif

/// Start-latency stimulus: plays FILE as a SystemSound and as a prepared AudioPlayer, each with
/// the device released (cold) and open (warm), and prints the CLOCK_MONOTONIC time of each
/// play() call. The capture side (bench/audio) finds the first non-silent frame after it.
func runLatency(path: String, cycles: Int, warmGap: Double, coldGap settle: Double) {
    let url = URL(fileURLWithPath: path)
    // settle: after the engine has released the device
    let engine = AudioEngine.shared

    let sound: SystemSound
    let player: AudioPlayer
    do {
        sound = try SystemSound(contentsOf: url)
        player = try AudioPlayer(contentsOf: url)
    } catch {
        fail("latency: \(error)")
    }
    player.prepareToPlay()

    func waitQuiet() {
        let deadline = MonotonicClock.seconds() + 10
        while (sound.isPlaying || player.isPlaying) && MonotonicClock.seconds() < deadline { usleep(2000) }
    }
    func waitReleased() {
        // The engine releases the device `idleRelease` seconds after the last sound.
        let deadline = MonotonicClock.seconds() + engine.configuration.idleRelease + 5
        while engine.isDeviceOpen && MonotonicClock.seconds() < deadline { usleep(10_000) }
        usleep(UInt32(settle * 1e6))
    }
    func play(_ kind: String) {
        let state = engine.isDeviceOpen ? "warm" : "cold"
        let t = MonotonicClock.seconds()
        var ok = true
        if kind == "player" {
            ok = player.play()
        } else {
            do { try sound.play() } catch { ok = false }
        }
        let returned = MonotonicClock.seconds()
        emit("play kind=\(kind) state=\(state) t=\(format(t)) call_ms=\(format((returned - t) * 1000, 3)) ok=\(ok ? 1 : 0)")
        waitQuiet()
    }

    // The process's first device open loads and connects ALSA's pulse plugin: not repeated later.
    play("warmup")
    for _ in 0..<cycles {
        for kind in ["system", "player"] {
            waitReleased()
            play(kind)
            usleep(UInt32(warmGap * 1e6))
            play(kind)
        }
    }
    // The last sound's finish is reported when the engine has mixed it, before the device has
    // played it: stay until it has been heard.
    usleep(UInt32((engine.outputLatency + 0.2) * 1e6))
    emit("done underruns=\(engine.underrunCount)")
}
