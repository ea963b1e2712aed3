#!/usr/bin/env python3
# The measuring and analysis half of bench/first-frame, which starts it; see that script for what it measures.
import os, sys, time, threading, subprocess, statistics
import numpy as np
E = os.environ
RATE = 48000
def mono(): return time.clock_gettime(time.CLOCK_MONOTONIC)
reads, lock = [], threading.Lock()
cap = subprocess.Popen(["parec", "-d", "bench.monitor", "--format=float32le", f"--rate={RATE}", "--channels=2", "--raw",
                        "--latency-msec=5"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def reader():
    fd, pending = cap.stdout.fileno(), b""
    while True:
        b = os.read(fd, 1 << 16); t = mono()
        if not b: return
        b = pending + b; n = len(b) // 8; pending = b[n * 8:]
        if n == 0: continue
        loud = int(np.count_nonzero(np.abs(np.frombuffer(b[:n * 8], dtype=np.float32)) > 1e-3))
        with lock: reads.append((t, loud))
threading.Thread(target=reader, daemon=True).start()
time.sleep(0.5)
def onset(t0, t1):
    with lock:
        return next((t for t, loud in reads if t0 <= t <= t1 and loud), None)
results = {}
made = {}
for mode in ("no bus", "bus"):
    env = dict(os.environ)
    if mode == "bus": env["DBUS_SESSION_BUS_ADDRESS"] = E["FF_BUS"]
    for r in range(int(E["FF_ROUNDS"])):
        p = subprocess.run([E["FF_BENCH"], "latency", E["FF_BEEP"], "--cycles", "3"], env=env,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if p.returncode != 0: print(f"  ! earshot-bench exited {p.returncode}: {p.stderr[-300:]}", file=sys.stderr)
        time.sleep(0.3)
        plays = [dict(x.split("=", 1) for x in l.split()[1:]) for l in p.stdout.splitlines() if l.startswith("play ")]
        made.setdefault(mode, []).extend(float(dict(x.split("=", 1) for x in l.split()[1:])["ms"])
                                         for l in p.stdout.splitlines() if l.startswith("made "))
        first = True
        for j, kv in enumerate(plays):
            if kv["kind"] != "player": continue
            # The process's first AudioPlayer.play() (cold) is the one that joins the session.
            state = "first" if first else kv["state"]
            first = False
            t = float(kv["t"]); nxt = float(plays[j + 1]["t"]) if j + 1 < len(plays) else t + 1.5
            on = onset(t, min(nxt, t + 1.5))
            results.setdefault((mode, state), []).append(None if on is None else 1000 * (on - t))
cap.kill()
print("AudioPlayer.play() to first frame at the sink, ms (median [min-max], n; misses); "
      "first: the process's first play (cold; it joins the session), cold: later cold plays")
for mode, xs in sorted(made.items()):
    print(f"  {mode:6s} AudioPlayer(contentsOf:), the engine's first voice (asks the sink's rate): "
          f"{statistics.median(xs):.2f} ms [{min(xs):.2f}-{max(xs):.2f}] n={len(xs)}")
for (mode, state), xs in sorted(results.items()):
    got = [x for x in xs if x is not None]
    if got:
        print(f"  {mode:6s} {state:5s}  {statistics.median(got):6.2f}  [{min(got):.2f}-{max(got):.2f}]  n={len(got)}; misses {len(xs) - len(got)}"
              + (f"  all: {' '.join(f'{x:.1f}' for x in got)}" if state == "first" else ""))
    else:
        print(f"  {mode:6s} {state:5s}  no onset heard ({len(xs)} plays)")
