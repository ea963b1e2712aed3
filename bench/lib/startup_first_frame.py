#!/usr/bin/env python3
# bench/startup's first-frame part: command start -> first non-silent frame at the sink, for
# earshot sound NAME warm (the sample cached), cold (removed before the run: decode, upload),
# earshot sound FILE (the engine's own stream) and paplay FILE; then earshot play of the sound
# as WAV and as FLAC and paplay of the WAV (the player's start: a WAV's tags are read without
# FFmpeg when its chunks hold none, a FLAC's by Earshot itself); interleaved round by round.
# parec records the sink's monitor at 5 ms latency; each read is timestamped on arrival with
# CLOCK_MONOTONIC, and a command's figure is the arrival of the first read holding a frame
# above -60 dBFS, minus the command's start. The capture's own delay is in every figure alike.
# Arguments: OUT SINK ROUNDS EARSHOT SOUND FILE SAMPLE WAV FLAC (SAMPLE: the start of the sound's
# sample names in the cache); the environment is the clean one of
# bench/startup (its private server). Prints a table; raw figures go to OUT/startup-first-frame.txt.
import statistics, subprocess, sys, time
from monitor import MonitorCapture, mono

out, sink, rounds, earshot, sound, path, sample, wav, flac = sys.argv[1:10]
rounds = int(rounds)

def run(command):
    t0 = mono()
    status = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    return t0, status

commands = [
    ("earshot sound NAME, warm", [earshot, "sound", sound], False),
    ("earshot sound NAME, cold", [earshot, "sound", sound], True),
    ("earshot sound FILE", [earshot, "sound", path], False),
    ("paplay FILE", ["paplay", path], False),
    ("earshot play WAV", [earshot, "play", wav], False),
    ("earshot play FLAC", [earshot, "play", flac], False),
    ("paplay WAV", ["paplay", wav], False),
]
# Each command's reference: paplay of the same file (the WAV for the players).
reference = {label: "paplay WAV" if "play" in command[1:2] or label == "paplay WAV" else "paplay FILE"
             for label, command, _ in commands}
capture = MonitorCapture(sink, 5)
figures = {label: [] for label, _, _ in commands}
raw = []
try:
    run([earshot, "sound", sound])  # the sample is cached before the first warm run
    for r in range(rounds):
        for label, command, cold in commands:
            if cold:  # every version of the sound: `sample` is the start of their names
                listed = subprocess.run(["pactl", "list", "samples", "short"], capture_output=True, text=True).stdout
                for name in [line.split("\t")[1] for line in listed.splitlines() if "\t" in line]:
                    if name.startswith(sample):
                        subprocess.run(["pactl", "remove-sample", name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.15)  # the sink is silent again
            t0, status = run(command)
            onset = capture.onset(t0)
            if status != 0 or onset is None:
                raw.append(f"{label} round {r}: status {status}, no onset")
                continue
            figures[label].append(1000 * (onset - t0))
            raw.append(f"{label} round {r}: {1000 * (onset - t0):.2f} ms")
finally:
    capture.stop()
with open(f"{out}/startup-first-frame.txt", "w") as f:
    f.write("\n".join(raw) + "\n")

print()
print(f"command start -> first frame at the sink (parec, 5 ms reads), median of {rounds} interleaved rounds;")
print("each against paplay of the same file:")
print(f"{'command':<30}{'median':>10}{'min':>9}{'max':>9}{'/paplay':>9}")
for label, _, _ in commands:
    xs = figures[label]
    if not xs:
        print(f"{label:<30}{'-':>10}")
        continue
    m = statistics.median(xs)
    ref = figures[reference[label]]
    ratio = f"{m / statistics.median(ref):.2f}x" if ref else "-"
    print(f"{label:<30}{m:>8.1f}ms{min(xs):>7.1f}ms{max(xs):>7.1f}ms{ratio:>9}")
