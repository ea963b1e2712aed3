#!/usr/bin/env python3
# The measuring and analysis half of bench/startup, which starts it; see that script for what it measures.
import json, sys
out, sound, runs = sys.argv[1], sys.argv[2], sys.argv[3]
print(f"start-up, median of {runs} runs (hyperfine), installed earshot vs paplay, same run;")
print("CPU: user+sys, mean over the runs (hyperfine reports no median of it)")
print(f"{'command':<36}{'earshot':>10}{'paplay':>10}{'ratio':>8}{'CPU earshot':>14}{'paplay':>10}{'ratio':>8}")
rows = (
    ("help", "earshot", "--help"),
    ("sound", "earshot-warm", f"sound {sound}, warm (cached sample)"),
    ("sound", "earshot-cold", f"sound {sound}, cold (decode, upload)"),
    ("sound", "earshot-file", "sound FILE (engine stream)"),
)
for name, command, label in rows:
    results = {r["command"]: r for r in json.load(open(f"{out}/startup-{name}.json"))["results"]}
    e, p = results[command]["median"], results["paplay"]["median"]
    ce = results[command]["user"] + results[command]["system"]
    cp = results["paplay"]["user"] + results["paplay"]["system"]
    print(f"{label:<36}{e * 1000:>8.1f}ms{p * 1000:>8.1f}ms{e / p:>7.2f}x{ce * 1000:>12.1f}ms{cp * 1000:>8.1f}ms{ce / cp:>7.2f}x")
