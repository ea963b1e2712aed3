#!/usr/bin/env python3
# The analysis half of bench/cpu-breakdown, which records the samples; see that script for what
# it measures. Arguments: --seconds S, then NAME=PERF_DATA for the reference (paplay) first and
# Earshot second, each NAME the program's file name (paplay, earshot). Prints each process's CPU by thread and layer, and the ratios.
import collections, subprocess, sys

LAYERS = ["kernel", "libpulse", "own code", "Swift runtime", "libc", "decoder", "other"]


def layer(dso, program):
    """The layer a shared object belongs to; `program` is the sampled executable's file name."""
    if dso.startswith("[kernel") or dso.startswith("[vdso") or dso == "[unknown]":
        # [unknown] samples without a user mapping are the kernel's (perf could not tell).
        return "kernel"
    if dso.startswith("libpulse"):
        return "libpulse"
    if dso == program:
        return "own code"
    if dso.startswith(("libswift", "libFoundation", "libdispatch", "libBlocksRuntime", "lib_FoundationICU")):
        return "Swift runtime"
    if dso.startswith(("libc.so", "libc-", "ld-linux", "libm.so", "libpthread", "libstdc++", "libgcc_s")):
        return "libc"
    if dso.startswith(("libsndfile", "libFLAC", "libvorbis", "libogg", "libopus", "libmpg123", "libav", "libsw")):
        return "decoder"
    return "other"


def rows(data):
    """(thread name, shared object, CPU ns) per row of `perf report`."""
    out = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "comm,dso", "-F", "period,comm,dso",
                          "--stdio", "-q", "-g", "none", "-t", "|"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"cpu-breakdown: perf report of {data} failed: {out.stderr.strip()}")
    for line in out.stdout.splitlines():
        fields = [f.strip() for f in line.split("|")]
        if len(fields) == 3 and fields[0].isdigit():
            yield fields[1], fields[2], int(fields[0])


def main():
    args = sys.argv[1:]
    if len(args) != 4 or args[0] != "--seconds":
        sys.exit("usage: cpu_breakdown.py --seconds S REFERENCE=DATA EARSHOT=DATA")
    seconds = float(args[1])
    processes = [a.split("=", 1) for a in args[2:]]
    percent = lambda ns: ns / seconds / 1e7  # ns over the window -> % of a core
    width = 15
    header = f"  {'':30}{'CPU':>9}  " + "".join(f"{name:>{width}}" for name in LAYERS)
    print("\n  % of a core, over the window; by layer: that share of the process's or thread's CPU")
    print(header)
    totals, outside, kernel_seen = {}, {}, False
    for name, data in processes:
        # Each NAME is its program's file name: the shared object its own code is in.
        by_thread = collections.defaultdict(lambda: collections.Counter())
        for thread, dso, ns in rows(data):
            kind = layer(dso, name)
            kernel_seen |= kind == "kernel"
            by_thread[thread][kind] += ns
        whole = collections.Counter()
        for counts in by_thread.values():
            whole.update(counts)
        total = sum(whole.values())
        if total == 0:
            sys.exit(f"cpu-breakdown: no samples of {name}")
        totals[name] = total
        outside[name] = total - whole["own code"] - whole["decoder"]

        def line(label, counts, indent):
            t = sum(counts.values())
            shares = "".join(f"{100 * counts[k] / t:>{width - 1}.0f}%" for k in LAYERS)
            print(f"  {indent}{label:<{30 - len(indent)}}{percent(t):>9.4f}  {shares}")

        line(name if name == "paplay" else "earshot play", whole, "")
        if len(by_thread) > 1:
            for thread, counts in sorted(by_thread.items(), key=lambda item: -sum(item[1].values())):
                if sum(counts.values()) >= total / 50:
                    line(thread, counts, "  ")
    reference, earshot = (name for name, _ in processes)
    print("\nratios (Earshot / paplay)")
    print(f"  {'playing CPU / paplay':<58}{totals[earshot] / totals[reference]:>6.2f}x")
    print(f"  {'CPU outside its own code and decoder / paplay':<58}{outside[earshot] / totals[reference]:>6.2f}x  "
          "(what a free mix and decode would leave)")
    if not kernel_seen:
        print("  (no kernel samples: perf may not sample the kernel here; the kernel's share is missing)")


if __name__ == "__main__":
    main()
