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
    // settle: after the engines have released their streams. System sounds play on an
    // engine of their own (AudioEngine.systemSounds), players on the shared one.
    let engines = [AudioEngine.shared, AudioEngine.systemSounds]

    let sound: SystemSound
    let player: AudioPlayer
    do {
        sound = try SystemSound(contentsOf: url)
        // The shared engine's first voice: it asks the sound server for its default sink's
        // rate (`AudioEngine.Configuration.followsDefaultSinkRate`) before it is made.
        let made = MonotonicClock.seconds()
        player = try AudioPlayer(contentsOf: url)
        emit("made kind=player ms=\(format((MonotonicClock.seconds() - made) * 1000, 3))")
    } catch {
        fail("latency: \(error)")
    }
    player.prepareToPlay()

    func waitQuiet() {
        let deadline = MonotonicClock.seconds() + 10
        while (sound.isPlaying || player.isPlaying) && MonotonicClock.seconds() < deadline { usleep(2000) }
    }
    func waitReleased() {
        // An engine releases its device `idleRelease` seconds after its last sound.
        let deadline = MonotonicClock.seconds() + AudioEngine.shared.configuration.idleRelease + 5
        while engines.contains(where: \.isDeviceOpen) && MonotonicClock.seconds() < deadline { usleep(10_000) }
        usleep(UInt32(settle * 1e6))
    }
    func play(_ kind: String) {
        let state = (kind.hasSuffix("player") ? AudioEngine.shared : AudioEngine.systemSounds).isDeviceOpen ? "warm" : "cold"
        let t = MonotonicClock.seconds()
        var ok = true
        if kind == "player" || kind == "warmup-player" {
            ok = player.play()
        } else {
            do { try sound.play() } catch { ok = false }
        }
        let returned = MonotonicClock.seconds()
        emit("play kind=\(kind) state=\(state) t=\(format(t)) call_ms=\(format((returned - t) * 1000, 3)) ok=\(ok ? 1 : 0)")
        waitQuiet()
    }

    // The process's first open of each engine's output loads what it needs (libpulse, or
    // ALSA's plugins): not repeated later.
    play("warmup")
    play("warmup-player")
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
    usleep(UInt32((engines.map(\.outputLatency).max()! + 0.2) * 1e6))
    emit("done underruns=\(engines.map(\.underrunCount).reduce(0, +))")
}
