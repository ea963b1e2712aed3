#!/usr/bin/env python3
# The summary of bench/power: medians over rounds and ratios to the references.
#   power.py RESULTS
# RESULTS holds one line per window: SECTION<TAB>ROUND<TAB>NAME<TAB>wakeups/s<TAB>% of a core.
# Prints, per section, each process's median (and min-max when there are several rounds), then
# the ratios Earshot / reference. A ratio is taken round by round (the two processes of one
# round ran minutes apart at most, on the same machine load) and its median over the rounds is
# printed, with the range.
import statistics, sys
from collections import defaultdict

rows = defaultdict(dict)  # (section, name) -> {round: (wakeups, cpu)}
order = []
for line in open(sys.argv[1]):
    section, rnd, name, wakeups, cpu = line.rstrip("\n").split("\t")
    if (section, name) not in rows:
        order.append((section, name))
    rows[(section, name)][int(rnd)] = (float(wakeups), float(cpu))


def spread(values, fmt):
    text = fmt.format(statistics.median(values))
    if len(values) > 1:
        text += " (" + fmt.format(min(values)) + "-" + fmt.format(max(values)) + ")"
    return text


print("medians" + (" (min-max) over rounds" if any(len(r) > 1 for r in rows.values()) else ""))
section = None
for key in order:
    if key[0] != section:
        section = key[0]
        rounds = max(len(rows[k]) for k in order if k[0] == section)
        print(f"{section}" + (f", {rounds} rounds" if rounds > 1 else ""))
    values = rows[key].values()
    print(f"  {key[1]:<34} {spread([v[0] for v in values], '{:.1f}'):>20} wakeups/s "
          f"{spread([v[1] for v in values], '{:.4f}'):>26} % of a core")


def ratio(section, subject, reference, index):
    """Median and range of subject/reference over the rounds both have, or None."""
    a, b = rows.get((section, subject)), rows.get((section, reference))
    if not a or not b:
        return None
    common = sorted(set(a) & set(b))
    if any(b[r][index] <= 0 for r in common):
        return "n/a (reference 0)"
    values = [a[r][index] / b[r][index] for r in common]
    return spread(values, "{:.2f}x")


def value(section, name, index):
    r = rows.get((section, name))
    return statistics.median(v[index] for v in r.values()) if r else None


lines = []


def pair(label, section, subject, reference, target=None):
    if (section, subject) not in rows or (section, reference) not in rows:
        return
    for index, what in ((0, "wakeups"), (1, "CPU")):
        text = ratio(section, subject, reference, index)
        if index == 0 and target is not None:
            w = value(section, subject, 0)
            text += f"  (target: <= {target} wakeup{'s' if target != 1 else ''}/s: {w:.1f}, " + \
                ("met)" if w <= target else "missed)")
        lines.append((f"{label} {what}", text))


pair("daemon / playerctld", "idle", "earshot daemon", "playerctld (reference)", 1)
pair("daemon / dbus-daemon", "idle", "earshot daemon", "dbus-daemon (reference)")
pair("publish / playerctld", "idle", "earshot publish", "playerctld (reference)", 1)
pair("publish / dbus-daemon", "idle", "earshot publish", "dbus-daemon (reference)")
pair("paused play / mpv paused", "paused", "earshot play, paused", "mpv --pause (reference)", 2)
pair("playing / paplay", "playing", "earshot play", "paplay (reference)")
pair("playing / mpv", "playing", "earshot play", "mpv (reference)")
pair("queue playing / paplay", "playing", "earshot play of a queue", "paplay (reference)")
pair("--no-long-buffer playing / paplay", "playing", "earshot play --no-long-buffer", "paplay (reference)")
pair("baseline playing / paplay", "playing", "baseline play", "paplay (reference)")
pair("playing / baseline's", "playing", "earshot play", "baseline play")
pair("queue playing / baseline's", "playing", "earshot play of a queue", "baseline play of a queue")
if ("paused", "mpv --pause (reference)") not in rows and ("paused", "earshot play, paused") in rows:
    w = value("paused", "earshot play, paused", 0)
    lines.append(("paused play wakeups", f"{w:.1f}/s (target: <= 2/s, " + ("met)" if w <= 2 else "missed)")))

print()
print("ratios (Earshot / reference; median of the ratios round by round, min-max)")
for label, text in lines:
    print(f"  {label:<46} {text}")
