# duck-latency's rounds and analysis (see bench/duck-latency); run by it, with the
# work folder, the rounds, the earshot binary and paplay's process id.
import os, re, statistics, subprocess, sys, threading, time
work, rounds, earshot, paplay = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def sink_input():
    text = subprocess.run(["pactl", "list", "sink-inputs"], capture_output=True, text=True).stdout
    for block in text.split("Sink Input #")[1:]:
        if f'application.process.id = "{paplay}"' in block:
            return int(block.split("\n", 1)[0])
    sys.exit("duck-latency: paplay's sink input not found")
index = sink_input()
events, lock = [], threading.Lock()
sub = subprocess.Popen(["pactl", "subscribe"], stdout=subprocess.PIPE, text=True, bufsize=1)
def read():
    for line in sub.stdout:
        t = time.time()
        if f"'change' on sink-input #{index}" in line:
            with lock: events.append(t)
threading.Thread(target=read, daemon=True).start()
time.sleep(0.3)
def changes_after(t):
    with lock: return [e for e in events if e >= t]
def wait_changes(t, n, timeout=5):
    end = time.time() + timeout
    while time.time() < end:
        c = changes_after(t)
        if len(c) >= n: return c
        time.sleep(0.005)
    return changes_after(t)
floor, first, last = [], [], []
env = dict(os.environ, EARSHOT_TRACE="1")
for r in range(rounds):
    # The floor: the same stream's volume set by a pactl command, there and back.
    for volume in ("40000", "41000"):
        t0 = time.time()
        subprocess.run(["pactl", "set-sink-input-volume", str(index), volume], check=True)
        c = wait_changes(t0, 1)
        if c: floor.append((c[0] - t0) * 1000)
        time.sleep(0.1)
    out = subprocess.run([earshot, "play", "--duck", "--name", "bench", f"{work}/tone.wav"], env=env,
                         capture_output=True, text=True).stdout
    m = re.search(r"trace ([0-9.]+) activate", out)
    if not m: sys.exit(f"duck-latency: no activate trace in: {out}")
    start = float(m.group(1))
    c = wait_changes(start, 5)
    if len(c) >= 5:
        first.append((c[0] - start) * 1000); last.append((c[4] - start) * 1000)
    time.sleep(0.8)  # the ramp back up
    print(f"round {r + 1} done", file=sys.stderr)
sub.kill()
f = statistics.median(floor)
print(f"ducking other apps over {rounds} rounds (ms; floor: a pactl set-sink-input-volume command to its change event, median {f:.2f} ms)")
print(f"{'measure':44s} {'median':>8s} {'min':>8s} {'max':>8s} {'/floor':>8s}")
for name, values in [("activation -> paplay's volume first lowered", first), ("activation -> fully ducked (5-step ramp)", last)]:
    if not values:
        print(f"{name:44s} {'-':>8s}"); continue
    med = statistics.median(values)
    print(f"{name:44s} {med:8.2f} {min(values):8.2f} {max(values):8.2f} {med / f:8.1f}x")
