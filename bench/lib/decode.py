#!/usr/bin/env python3
# The measuring and analysis half of bench/decode, which starts it; see that script for what it measures.
import os, re, statistics, subprocess, sys

bench, media, rounds, length = os.environ["BENCH"], os.environ["MEDIA"], int(os.environ["ROUNDS"]), os.environ["LENGTH"]
files = {"AAC-LC in MP4": f"{media}/aac-{length}.m4a", "ALAC in MP4": f"{media}/alac-{length}.m4a"}

def run_cpu(argv):
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = process.stdout.read()
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"decode: {' '.join(argv)} failed: {err.decode()}")
    return usage.ru_utime + usage.ru_stime, out.decode()

def ffmpeg(path):
    return run_cpu(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "f32le", "-y", "/dev/null"])[0]

def startup():
    return run_cpu(["ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "anullsrc=r=44100:cl=stereo",
                    "-t", "0.01", "-f", "f32le", "-y", "/dev/null"])[0]

def earshot(path):
    _, out = run_cpu([bench, "decode", path])
    fields = dict(re.findall(r"(\w+)=(\S+)", out))
    return float(fields["cpu"]), int(fields["frames"])

results = {name: {"earshot": [], "ffmpeg": []} for name in files}
for r in range(rounds):
    for name, path in files.items():
        base = startup()
        e, frames = earshot(path)
        f = max(ffmpeg(path) - base, 1e-6)
        results[name]["earshot"].append(e)
        results[name]["ffmpeg"].append(f)
        print(f"  round {r + 1} {name}: earshot {e:.3f} s, ffmpeg {f:.3f} s "
              f"(start-up {base:.3f} s subtracted), {frames} frames", file=sys.stderr)

print(f"decoding {length} s of 44.1 kHz stereo to float32: CPU seconds, median of {rounds} rounds")
print(f"{'format':<16}{'earshot':>10}{'ffmpeg':>10}{'ratio':>8}  target <= 1.2")
failed = False
for name, d in results.items():
    e, f = statistics.median(d["earshot"]), statistics.median(d["ffmpeg"])
    ratio = e / f
    failed |= ratio > 1.2
    print(f"{name:<16}{e:>10.3f}{f:>10.3f}{ratio:>8.2f}  {'PASS' if ratio <= 1.2 else 'FAIL'}")

_, out = run_cpu([bench, "open", f"{media}/tagged.wav", "--repeat", str(max(25, rounds * 10))])
opens = {"0": [], "1": []}
for tags, seconds in re.findall(r"open tags=(\d) seconds=(\S+)", out):
    opens[tags].append(float(seconds) * 1000)
plain, tagged = statistics.median(opens["0"]), statistics.median(opens["1"])
print(f"opening a 1 s WAV, wall ms, median of {len(opens['0'])}: without tags {plain:.3f}, "
      f"reading tags {tagged:.3f} (ratio {tagged / plain:.1f})")
sys.exit(3 if failed else 0)
