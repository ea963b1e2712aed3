#!/usr/bin/env python3
# The figure table of docs/benchmarks.md from the output of the fast benchmarks (run by
# bench/readme-table).
#   readme_table.py OUTDIR [FILE]
# Reads OUTDIR/readme-mpris-latency.txt and OUTDIR/readme-session-latency.txt (each benchmark's
# standard output), prints the table with the date and the machine, and with FILE
# (docs/benchmarks.md) replaces what lies between the marker comments
# <!-- bench-table:begin --> and <!-- bench-table:end -->.
import datetime, os, platform, re, subprocess, sys

BEGIN, END = "<!-- bench-table:begin -->", "<!-- bench-table:end -->"
out_dir = sys.argv[1]
target = sys.argv[2] if len(sys.argv) > 2 else None


def output(*command):
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None


def machine():
    model = "unknown CPU"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            model = re.sub(r"\s+", " ", line.split(":", 1)[1].strip())
            break
    parts = [f"{model}, {os.cpu_count()} cores", f"Linux {platform.release()}"]
    for command in (("pulseaudio", "--version"), ("pipewire", "--version"), ("dbus-daemon", "--version")):
        text = output(*command)  # pipewire prints its name on a line of its own
        version = re.search(r"[0-9]+\.[0-9]+(\.[0-9]+)?", text or "")
        if version:
            parts.append(f"{command[0]} {version.group(0)}")
    return "; ".join(parts)


def read(name):
    path = f"{out_dir}/readme-{name}.txt"
    text = open(path).read()
    return text


def mpris_rows(text):
    # `target  Play-median  Play-p99  GetAll-median  GetAll-p99`, microseconds.
    rounds = re.search(r"median over ([0-9]+) rounds", text)
    medians = {}
    for line in text.splitlines():
        m = re.match(r"(c-floor|earshot|mpv)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*$", line)
        if m:
            medians[m.group(1)] = {"Play": float(m.group(2)), "GetAll(Player)": float(m.group(4))}
    if "earshot" not in medians or "c-floor" not in medians:
        sys.exit("readme_table: bench/mpris-latency printed no earshot and c-floor rows")
    rows = []
    for call in ("Play", "GetAll(Player)"):
        e, c = medians["earshot"][call], medians["c-floor"][call]
        reference, ratio = f"C floor {c:.1f} µs", f"{e / c:.2f}×"
        if "mpv" in medians:
            v = medians["mpv"][call]
            reference += f" / mpv {v:.1f} µs"
            ratio += f" / {e / v:.2f}×"
        rows.append((f"MPRIS `{call}` round trip, median of {rounds.group(1) if rounds else '?'} rounds "
                     "(`bench/mpris-latency`)", f"{e:.1f} µs", reference, ratio))
    return rows


def session_rows(text):
    floor = re.search(r"median ([0-9.]+) ms\)", text)
    rounds = re.search(r"over ([0-9]+) rounds", text)
    if not floor:
        sys.exit("readme_table: bench/session-latency printed no floor")
    found = {}
    for line in text.splitlines():
        m = re.match(r"(.+?)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)x\s*$", line)
        if m:
            found[m.group(1).strip()] = (float(m.group(2)), float(m.group(5)))
    names = [("first sound -> MPRIS owner", "first sound → MPRIS name owner"),
             ("first sound -> arbiter target", "first sound → arbiter target"),
             ("SetActive -> other's interruption", "`SetActive` → the other process's interruption"),
             ("SIGKILL of target -> previous owns name", "SIGKILL of the target → previous sounder owns the name")]
    rows = []
    for key, title in names:
        if key not in found:
            sys.exit(f"readme_table: bench/session-latency printed no “{key}” row")
        median, ratio = found[key]
        rows.append((f"{title}, median of {rounds.group(1) if rounds else '?'} rounds (`bench/session-latency`)",
                     f"{median:.2f} ms", f"bus round trip {float(floor.group(1)):.3f} ms", f"{ratio:.1f}×"))
    return rows


rows = mpris_rows(read("mpris-latency")) + session_rows(read("session-latency"))
load = open(f"{out_dir}/readme-load.txt").read().strip() if os.path.exists(f"{out_dir}/readme-load.txt") else None
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
lines = [f"Written by `bench/readme-table` on {now}, on {machine()}"
         + (f"; load average {load} when it started (the machine is shared: figures may be noisy)" if load else "")
         + ".", "", "| what | Earshot | reference | ratio |", "|---|---|---|---|"]
lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
table = "\n".join(lines)
print(table)
if target:
    text = open(target).read()
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        sys.exit(f"readme_table: {target} has no single {BEGIN} … {END} pair")
    head, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    open(target, "w").write(f"{head}{BEGIN}\n{table}\n{END}{tail}")
    print(f"readme_table: wrote the table into {target}", file=sys.stderr)
