#!/usr/bin/env python3
# The measuring and analysis half of bench/record, which starts it; see that script for what it measures.
import os, signal, statistics, subprocess, time

E, D, S, R = os.environ["EARSHOT"], os.environ["DIR"], float(os.environ["SECS"]), int(os.environ["ROUNDS"])
B = os.environ["BENCH"]

def cpu(cmd, stop_with_sigint):
    """Runs cmd for S seconds; returns its user+sys CPU seconds (wait4)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if stop_with_sigint:
        time.sleep(S)
        p.send_signal(signal.SIGINT)
    _, _, ru = os.wait4(p.pid, 0)
    return ru.ru_utime + ru.ru_stime

def latency(cmd, path):
    """Command start -> the file holds more than its 44-byte header (polled every 0.2 ms)."""
    if os.path.exists(path):
        os.unlink(path)
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t = None
    while time.monotonic() - t0 < 10:
        try:
            if os.path.getsize(path) > 44:
                t = time.monotonic() - t0
                break
        except FileNotFoundError:
            pass
        time.sleep(0.0002)
    p.send_signal(signal.SIGINT)
    p.wait()
    return t

f = lambda name: os.path.join(D, name)
parecord = lambda kind, path: ["parecord", "--file-format=" + kind, "--rate=48000", "--channels=2", "--format=s16le", path]
arecord = ["arecord", "-q", "-D", "default", "-f", "S16_LE", "-r", "48000", "-c", "2"]
rows = []
for kind in ["flac", "wav"]:
    e = cpu([E, "record", f("e." + kind), "--duration", str(S)], False)
    rows.append((f"CPU, {S:.0f} s to {kind.upper()}", "parecord", e, cpu(parecord(kind, f("p." + kind)), True)))
    if kind == "wav":
        rows.append((f"CPU, {S:.0f} s to WAV", "arecord", e, cpu(arecord + ["-d", str(int(S)), f("a.wav")], False)))
# AAC: the recorder's writer offline (earshot-bench encode: AudioFile in, FFmpeg's aac encoder
# through FFmpegFileWriter out) against the ffmpeg command, on the same input (the WAV earshot
# recorded above), 128 kb/s stereo both; whole-process CPU, start-up included.
rows.append((f"CPU, encode {S:.0f} s WAV to AAC", "ffmpeg", cpu([B, "encode", f("e.wav"), f("e.m4a")], False),
             cpu(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", f("e.wav"), "-c:a", "aac", "-b:a", "128k", f("f.m4a")], False)))

lat = {"earshot": [], "parecord": [], "arecord": []}
for _ in range(R):
    lat["earshot"].append(latency([E, "record", f("l.wav")], f("l.wav")))
    lat["parecord"].append(latency(parecord("wav", f("l.wav")), f("l.wav")))
    lat["arecord"].append(latency(arecord + [f("l.wav")], f("l.wav")))
med = {k: statistics.median([x for x in v if x is not None]) if any(x is not None for x in v) else float("nan")
       for k, v in lat.items()}

inproc = {"1": [], "0": []}
out = subprocess.run([B, "record-latency", D, "--repeat", str(R)], capture_output=True, text=True).stdout
for line in out.splitlines():
    fields = dict(kv.split("=") for kv in line.split()[1:])
    inproc[fields["prepared"]].append(float(fields["seconds"]))

print(f"{'what':30} {'earshot':>10} {'reference':>10} {'':>10} {'ratio':>7}")
for what, ref, e, r in rows:
    print(f"{what:30} {e:9.3f}s {ref:>10} {r:9.3f}s {e / r if r else float('nan'):6.2f}x")
for ref in ["parecord", "arecord"]:
    print(f"{'first sample in file, median':30} {med['earshot'] * 1000:8.1f}ms {ref:>10} {med[ref] * 1000:7.1f}ms "
          f"{med['earshot'] / med[ref]:6.2f}x")
for key, label in [("1", "prepared"), ("0", "unprepared")]:
    if inproc[key]:
        print(f"{'record() -> first frame, ' + label:30} {statistics.median(inproc[key]) * 1000:8.1f}ms   (in process, median of {len(inproc[key])})")
