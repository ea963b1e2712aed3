#!/usr/bin/env python3
# The measuring and analysis half of bench/others-latency, which starts it; see that script for what it measures.
import re, statistics, sys
work, rounds, mpv, daemon = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
events = []   # (time, kind, value)
text = open(f"{work}/monitor.log").read()
for block in re.split(r"\n(?=signal |method call )", text):
    m = re.search(r"time=([0-9.]+)", block)
    if not m: continue
    t = float(m.group(1))
    sender = re.search(r"sender=(\S+)", block)
    dest = re.search(r"destination=(\S+)", block)
    strings = re.findall(r'string "([^"]*)"', block)
    if block.startswith("method call") and "member=Pause" in block and dest and dest.group(1) == mpv:
        events.append((t, "pause-call", sender.group(1) if sender else ""))
    elif block.startswith("method call") and "member=Play" in block and dest and dest.group(1) == mpv:
        events.append((t, "play-call", sender.group(1) if sender else ""))
    elif "member=PropertiesChanged" in block and sender and sender.group(1) == mpv and "PlaybackStatus" in strings:
        i = strings.index("PlaybackStatus")
        if i + 1 < len(strings): events.append((t, "mpv", strings[i + 1]))
    elif "member=PropertiesChanged" in block and "Target" in strings:
        i = strings.index("Target")
        if i + 1 < len(strings): events.append((t, "target", strings[i + 1]))
def first(kind, after, pred=lambda v: True):
    return next((t for t, k, v in events if k == kind and t >= after and pred(v)), None)
def trace(path):
    out = {}
    for line in open(path):
        m = re.match(r"trace ([0-9.]+) (.*)", line.strip())
        if m: out.setdefault(m.group(2), float(m.group(1)))
    return out
floor, activate_to_paused, playing_to_target = [], [], []
for r in range(1, rounds + 1):
    a = trace(f"{work}/r{r}/play.log")
    start = a["activate"]
    paused = first("mpv", start, lambda v: v == "Paused")
    activate_to_paused.append((paused - start) * 1000)
    play = first("play-call", a["deactivate"] - 0.5, lambda v: v == daemon)
    target = first("target", play, lambda v: v == mpv) if play is not None else None
    if target is not None: playing_to_target.append((target - play) * 1000)
# The floor: each Pause call sent by dbus-send (not by the arbiter) to mpv's Paused.
for t in [t for t, k, v in events if k == "pause-call" and v != daemon]:
    paused = first("mpv", t, lambda v: v == "Paused")
    if paused is not None: floor.append((paused - t) * 1000)
f = statistics.median(floor)
rows = [("activation -> mpv Paused", activate_to_paused), ("arbiter's Play -> Target is mpv", playing_to_target)]
print(f"other apps' latency over {rounds} rounds (ms; floor: mpv's own Pause round trip, median {f:.3f} ms)")
print(f"{'measure':40s} {'median':>8s} {'min':>8s} {'max':>8s} {'/floor':>8s}")
for name, values in rows:
    if not values:
        print(f"{name:40s} {'-':>8s}"); continue
    med = statistics.median(values)
    print(f"{name:40s} {med:8.2f} {min(values):8.2f} {max(values):8.2f} {med / f:8.1f}x")
