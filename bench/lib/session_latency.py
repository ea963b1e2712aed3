#!/usr/bin/env python3
# The measuring and analysis half of bench/session-latency, which starts it; see that script for what it measures.
import re, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
monitor = open(f"{work}/monitor.log").read().split("\nsignal ")
events = []   # (time, kind, args)
for block in monitor:
    m = re.search(r"time=([0-9.]+)", block)
    if not m: continue
    t = float(m.group(1))
    strings = re.findall(r'string "([^"]*)"', block)
    if "member=NameOwnerChanged" in block and len(strings) >= 3:
        events.append((t, "owner", strings))
    elif "member=PropertiesChanged" in block and '"Target"' in block:
        i = strings.index("Target") if "Target" in strings else -1
        if i >= 0 and i + 1 < len(strings): events.append((t, "target", strings[i + 1]))
def trace(path):
    out = {}
    for line in open(path):
        m = re.match(r"trace ([0-9.]+) (.*)", line.strip())
        if m: out.setdefault(m.group(2), float(m.group(1)))
    return out
def first(kind, after, pred):
    return next((t for t, k, a in events if k == kind and t >= after and pred(a)), None)
floor_line = open(f"{work}/floor.txt").read()
floor = float(re.search(r"median_us=([0-9.]+)", floor_line).group(1)) / 1000
TARGET_NAME = "org.earshot.MPRISTarget.bench"
sound_to_owner, sound_to_target, kill_to_owner, activate_to_interrupt = [], [], [], []
owner_names = {}
for r in range(1, rounds + 1):
    a, b = trace(f"{work}/r{r}/a.log"), trace(f"{work}/r{r}/b.log")
    kill = float(open(f"{work}/r{r}/kill.txt").read())
    start = b["sound started"]
    # B's claim: the app's MPRIS target name handed over from A (old and new owners both
    # set). The app's org.mpris.MediaPlayer2 name stays with one owner that forwards to
    # whoever holds org.earshot.MPRISTarget.<app> (DESIGN.md: the desktop's key daemons see
    # one player per app), so the handover is of the target name.
    t_owner = first("owner", start - 0.5, lambda s: s[0] == TARGET_NAME and s[1] != "" and s[2] != "")
    owner_b = next(s[2] for t, k, s in events if k == "owner" and t == t_owner)
    t_target = first("target", start - 0.5, lambda s: s == owner_b)
    sound_to_owner.append((t_owner - start) * 1000)
    sound_to_target.append((t_target - start) * 1000)
    t_back = first("owner", kill, lambda s: s[0] == TARGET_NAME and s[1] == owner_b)
    kill_to_owner.append((t_back - kill) * 1000)
    activate_to_interrupt.append((a["interruption began"] - b["activate"]) * 1000)
rows = [("first sound -> MPRIS target name", sound_to_owner), ("first sound -> arbiter target", sound_to_target),
        ("SIGKILL of target -> previous owns name", kill_to_owner), ("SetActive -> other's interruption", activate_to_interrupt)]
print(f"session latency over {rounds} rounds (ms; floor: bus round trip of GetAll, median {floor:.3f} ms)")
print(f"{'measure':42s} {'median':>8s} {'min':>8s} {'max':>8s} {'/floor':>8s}")
for name, values in rows:
    med = statistics.median(values)
    print(f"{name:42s} {med:8.2f} {min(values):8.2f} {max(values):8.2f} {med / floor:8.1f}x")
