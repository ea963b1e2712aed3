#!/usr/bin/env python3
# bench/startup's first-frame part: command start -> first non-silent frame at the sink, for
# earshot sound NAME warm (the sample cached), cold (removed before the run: decode, upload),
# earshot sound FILE (the engine's own stream) and paplay FILE, interleaved round by round.
# parec records the sink's monitor at 5 ms latency; each read is timestamped on arrival with
# CLOCK_MONOTONIC, and a command's figure is the arrival of the first read holding a frame
# above -60 dBFS, minus the command's start. The capture's own delay is in every figure alike.
# Arguments: OUT SINK ROUNDS EARSHOT SOUND FILE SAMPLE; the environment is the clean one of
# bench/startup (its private server). Prints a table; raw figures go to OUT/startup-first-frame.txt.
import array, os, statistics, subprocess, sys, threading, time

out, sink, rounds, earshot, sound, path, sample = sys.argv[1:8]
rounds = int(rounds)
RATE = 48000

def mono():
    return time.clock_gettime(time.CLOCK_MONOTONIC)

class Capture:
    def __init__(self):
        self.proc = subprocess.Popen(["parec", "-d", sink + ".monitor", "--format=float32le", f"--rate={RATE}", "--channels=2",
                                      "--raw", "--latency-msec=5"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.loud = []   # arrival times of reads holding a non-silent frame
        self.reads = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._run, daemon=True).start()
        deadline = mono() + 5
        while self.reads == 0 and mono() < deadline:
            time.sleep(0.01)
        if self.reads == 0:
            raise SystemExit(f"startup: parec delivered nothing from {sink}.monitor")

    def _run(self):
        fd, pending = self.proc.stdout.fileno(), b""
        while True:
            b = os.read(fd, 1 << 16)
            t = mono()
            if not b:
                return
            b = pending + b
            n = len(b) // 4
            pending = b[n * 4:]
            samples = array.array("f", b[:n * 4])
            loud = max(samples, default=0) > 1e-3 or min(samples, default=0) < -1e-3
            with self.lock:
                self.reads += 1
                if loud:
                    self.loud.append(t)

    def onset(self, t0):
        with self.lock:
            return next((t for t in self.loud if t >= t0), None)

    def stop(self):
        self.proc.kill()
        self.proc.wait()

def run(command):
    t0 = mono()
    status = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    return t0, status

commands = [
    ("earshot sound NAME, warm", [earshot, "sound", sound], False),
    ("earshot sound NAME, cold", [earshot, "sound", sound], True),
    ("earshot sound FILE", [earshot, "sound", path], False),
    ("paplay FILE", ["paplay", path], False),
]
capture = Capture()
figures = {label: [] for label, _, _ in commands}
raw = []
try:
    run([earshot, "sound", sound])  # the sample is cached before the first warm run
    for r in range(rounds):
        for label, command, cold in commands:
            if cold:
                subprocess.run(["pactl", "remove-sample", sample], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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

paplay = statistics.median(figures["paplay FILE"]) if figures["paplay FILE"] else None
print()
print(f"command start -> first frame at the sink (parec, 5 ms reads), median of {rounds} interleaved rounds:")
print(f"{'command':<30}{'median':>10}{'min':>9}{'max':>9}{'/paplay':>9}")
for label, _, _ in commands:
    xs = figures[label]
    if not xs:
        print(f"{label:<30}{'-':>10}")
        continue
    m = statistics.median(xs)
    ratio = f"{m / paplay:.2f}x" if paplay else "-"
    print(f"{label:<30}{m:>8.1f}ms{min(xs):>7.1f}ms{max(xs):>7.1f}ms{ratio:>9}")
