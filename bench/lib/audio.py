#!/usr/bin/env python3
# The measuring and analysis half of bench/audio, which starts it; see that script for what it measures.
import os, sys, time, subprocess, statistics, re
from monitor import RATE, MonitorCapture, mono

E = os.environ
ROUNDS = int(E["AB_ROUNDS"]); PLAY_S = float(E["AB_PLAY_SECONDS"])
EARSHOT, BENCH, M, OUT = E["AB_EARSHOT"], E["AB_BENCH"], E["AB_MEDIA"], E["AB_OUT"]
PA_PID = int(E["AB_PA_PID"]); HAVE_MPV = E["AB_HAVE_MPV"] == "1"; CANBERRA = E["AB_CANBERRA"]
RAW = []           # raw figure lines for audio-last.txt
CHILDREN = set()

def log(msg):
    print(msg, file=sys.stderr, flush=True)

def raw(part, **kv):
    RAW.append(part + " " + " ".join(f"{k}={v}" for k, v in kv.items()))

def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

def pa_cpu():
    """The pulseaudio server's CPU seconds so far, all threads (schedstat: ns on CPU)."""
    total = 0
    for tid in os.listdir(f"/proc/{PA_PID}/task"):
        try:
            with open(f"/proc/{PA_PID}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total / 1e9

def machine():
    """Busy and total jiffies of all CPUs (/proc/stat), to show what else ran meanwhile."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v) - v[3] - v[4], sum(v)

def busy_since(m0):
    b1, t1 = machine()
    return 100 * (b1 - m0[0]) / max(1, t1 - m0[1])

def Capture(latency_ms):
    """parec on bench.monitor (monitor.py), given 0.2 s to settle after its first read."""
    cap = MonitorCapture("bench", latency_ms, children=CHILDREN)
    time.sleep(0.2)
    return cap

def run(cmd):
    """Runs cmd to its end; returns (wall, cpu user+sys from wait4, exit status, t0, t1)."""
    with open(f"{OUT}/audio-child.log", "w+") as log_file:
        t0 = mono()
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log_file)
        CHILDREN.add(p)
        _, status, ru = os.wait4(p.pid, 0)
        t1 = mono()
        p.returncode = os.waitstatus_to_exitcode(status)
        CHILDREN.discard(p)
        log_file.seek(0)
        err = log_file.read().strip()
    if p.returncode != 0:
        log(f"  ! {cmd[0]} exited {p.returncode}: {err[-300:]}")
    return t1 - t0, ru.ru_utime + ru.ru_stime, p.returncode, t0, t1

def fmt(x, d=1):
    return "-" if x is None else f"{x:.{d}f}"

def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b

results = {}
try:
    # --- 1. playback CPU ------------------------------------------------------
    flac, wav = f"{M}/play.flac", f"{M}/play.wav"
    players = [("earshot", [EARSHOT, "play", flac])]
    if HAVE_MPV:
        players += [("mpv-alsa", ["mpv", "--no-video", "--no-config", "--ao=alsa", "--really-quiet", flac]),
                    ("mpv-pulse", ["mpv", "--no-video", "--no-config", "--ao=pulse", "--really-quiet", flac])]
    players += [("paplay", ["paplay", flac]), ("aplay", ["aplay", "-q", wav])]
    P1 = {name: {"cpu": [], "wall": [], "heard": [], "pa": [], "onset": [], "busy": [], "bad": 0} for name, _ in players}
    cap = Capture(50)
    log(f"1. playback CPU: {len(players)} players x {PLAY_S:.0f} s x {ROUNDS} rounds")
    for r in range(ROUNDS):
        for i in range(len(players)):
            name, cmd = players[(i + r) % len(players)]
            time.sleep(0.5)
            pa0, m0 = pa_cpu(), machine()
            wall, cpu, rc, t0, t1 = run(cmd)
            pa, busy = pa_cpu() - pa0, busy_since(m0)
            time.sleep(0.3)
            heard = cap.heard(t0, t1 + 0.3)
            on = cap.onset(t0, t1)
            realtime = rc == 0 and 0.97 * PLAY_S <= wall <= PLAY_S + 3 and heard >= 0.95 * PLAY_S
            d = P1[name]
            d["cpu"].append(cpu); d["wall"].append(wall); d["heard"].append(heard); d["pa"].append(pa)
            d["onset"].append(None if on is None else 1000 * (on - t0)); d["busy"].append(busy)
            if not realtime:
                d["bad"] += 1
            raw("play", round=r + 1, player=name, cpu_s=f"{cpu:.4f}", wall_s=f"{wall:.3f}", heard_s=f"{heard:.3f}",
                pulse_cpu_s=f"{pa:.4f}", onset_ms=fmt(None if on is None else 1000 * (on - t0)), machine_busy_pct=f"{busy:.1f}", exit=rc,
                realtime="yes" if realtime else "NO")
            log(f"  round {r + 1} {name:10s} cpu {cpu:6.3f} s  wall {wall:6.2f} s  heard {heard:6.2f} s  "
                f"pulse {pa:5.3f} s  start {fmt(None if on is None else 1000 * (on - t0))} ms  machine busy {busy:4.1f} %"
                + ("" if realtime else "  <-- NOT REAL TIME"))
    cap.stop()

    # --- 2. start latency ----------------------------------------------------------
    beep = f"{M}/beep.wav"
    cmds = [("earshot sound", [EARSHOT, "sound", beep]), ("paplay", ["paplay", beep])]
    if CANBERRA:
        cmds.append(("canberra", [CANBERRA, beep]))
    K = 3
    P2 = {}
    def add2(key, r, lat, heard):
        d = P2.setdefault(key, {"lat": [[] for _ in range(ROUNDS)], "heard": [[] for _ in range(ROUNDS)], "miss": 0})
        if lat is None:
            d["miss"] += 1
        else:
            d["lat"][r].append(lat)
        d["heard"][r].append(heard)
    cap = Capture(5)
    log(f"2. start latency: {len(cmds)} commands x {K} + in-process x {K} cycles, x {ROUNDS} rounds")
    for r in range(ROUNDS):
        for k in range(K):
            for i in range(len(cmds)):
                name, cmd = cmds[(i + k + r) % len(cmds)]
                time.sleep(0.4)
                wall, cpu, rc, t0, t1 = run(cmd)
                time.sleep(0.3)
                on = cap.onset(t0, t1 + 0.3)
                heard = cap.heard(t0, t1 + 0.3)
                lat = None if on is None else 1000 * (on - t0)
                add2(name, r, lat, heard)
                raw("latency", round=r + 1, what=name.replace(" ", "-"), onset_ms=fmt(lat, 2), wall_ms=f"{1000 * wall:.1f}",
                    heard_ms=f"{1000 * heard:.1f}", exit=rc)
        # In process: earshot-bench prints the CLOCK_MONOTONIC time of each play() call.
        p = subprocess.Popen([BENCH, "latency", beep, "--cycles", str(K)], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        CHILDREN.add(p)
        plays = []
        for line in p.stdout:
            if line.startswith("play "):
                kv = dict(x.split("=", 1) for x in line.split()[1:])
                plays.append(kv)
            elif line.startswith("done "):
                raw("latency-inproc-done", round=r + 1, **dict(x.split("=", 1) for x in line.split()[1:]))
        err = p.stderr.read()
        p.wait(); CHILDREN.discard(p)
        if p.returncode != 0:
            log(f"  ! earshot-bench latency exited {p.returncode}: {err.strip()[-300:]}")
        time.sleep(0.4)
        for j, kv in enumerate(plays):
            t = float(kv["t"])
            nxt = float(plays[j + 1]["t"]) if j + 1 < len(plays) else mono()
            on = cap.onset(t, min(nxt, t + 1.5))
            heard = cap.heard(t, min(nxt, t + 1.5))
            lat = None if on is None else 1000 * (on - t)
            if not kv["kind"].startswith("warmup"):
                key = {"system": "SystemSound.play()", "player": "AudioPlayer.play()"}[kv["kind"]] + " " + kv["state"]
                add2(key, r, lat, heard)
            raw("latency", round=r + 1, what=f"inproc-{kv['kind']}-{kv['state']}", onset_ms=fmt(lat, 2),
                call_ms=kv["call_ms"], heard_ms=f"{1000 * heard:.1f}", ok=kv["ok"])
        summary = "  ".join(f"{key} {fmt(median(d['lat'][r]))}" for key, d in P2.items())
        log(f"  round {r + 1}: median ms: {summary}")
    read_ms = cap.read_ms(0, mono())
    cap.stop()

    # --- 3. 32 players in one process ------------------------------------------------
    variants = [("32 x 44.1k FLAC, prepared", [f"{M}/long.flac", "--seconds", "10"]),
                ("32 x 48k FLAC, prepared", [f"{M}/long48.flac", "--seconds", "5"]),
                ("32 x 44.1k FLAC, unprepared", [f"{M}/long.flac", "--seconds", "5", "--prepare", "0"])]
    P3 = {name: [] for name, _ in variants}
    cap = Capture(50)
    log(f"3. 32 players in one process: {len(variants)} variants x {ROUNDS} rounds")
    for r in range(ROUNDS):
        for i in range(len(variants)):
            name, args = variants[(i + r) % len(variants)]
            time.sleep(0.3)
            t0, m0 = mono(), machine()
            out = subprocess.run([BENCH, "players", "--count", "32"] + args, stdin=subprocess.DEVNULL,
                                 capture_output=True, text=True)
            t1, busy = mono(), busy_since(m0)
            line = next((l for l in out.stdout.splitlines() if l.startswith("players ")), None)
            if out.returncode != 0 or line is None:
                log(f"  ! earshot-bench players failed ({out.returncode}): {out.stderr.strip()[-300:]}")
                continue
            kv = dict(x.split("=", 1) for x in line.split()[1:])
            kv["heard"] = f"{cap.heard(t0, t1 + 0.2):.2f}"
            kv["machine_busy_pct"] = f"{busy:.1f}"
            P3[name].append(kv)
            raw("players", round=r + 1, variant=name.replace(" ", "_").replace(",", ""), **kv)
            log(f"  round {r + 1} {name:28s} cpu {kv['cpu_pct']:>6s} %  underruns {kv['underruns']}  dropouts {kv['dropouts']}"
                f"  (render {kv.get('render_pct')} %, reader {kv.get('reader_pct')} %)  heard {kv['heard']} s"
                f"  machine busy {kv['machine_busy_pct']} %")
    cap.stop()

    # --- 4. decode speed ------------------------------------------------------------------
    formats = [("FLAC", f"{M}/long.flac"), ("MP3", f"{M}/long.mp3"), ("Ogg Vorbis", f"{M}/long.ogg")]
    P4 = {name: {"in": [], "proc": [], "sox": [], "fps": [], "frames": None} for name, _ in formats}
    log(f"4. decode: {len(formats)} formats x {ROUNDS} rounds")
    for r in range(ROUNDS):
        for i in range(len(formats)):
            name, path = formats[(i + r) % len(formats)]
            for tool in ((0, 1) if r % 2 == 0 else (1, 0)):
                if tool == 0:
                    t0 = mono()
                    out = subprocess.run([BENCH, "decode", path], stdin=subprocess.DEVNULL, capture_output=True, text=True)
                    wall = mono() - t0
                    if out.returncode != 0:
                        log(f"  ! earshot-bench decode {path}: {out.stderr.strip()[-300:]}")
                        continue
                    kv = dict(x.split("=", 1) for x in out.stdout.split()[1:])
                    P4[name]["in"].append(float(kv["seconds"])); P4[name]["proc"].append(wall)
                    P4[name]["fps"].append(float(kv["fps"])); P4[name]["frames"] = int(kv["frames"])
                    raw("decode", round=r + 1, format=name.replace(" ", "-"), tool="earshot", inproc_s=kv["seconds"],
                        process_wall_s=f"{wall:.4f}", frames=kv["frames"], fps=kv["fps"])
                else:
                    wall, cpu, rc, _, _ = run(["sox", "-V1", path, "-t", "f32", "/dev/null"])
                    if rc == 0:
                        P4[name]["sox"].append(wall)
                    raw("decode", round=r + 1, format=name.replace(" ", "-"), tool="sox", wall_s=f"{wall:.4f}", cpu_s=f"{cpu:.4f}")

    # --- report ---------------------------------------------------------------------------
    lines = []
    def say(s=""):
        lines.append(s); print(s, flush=True)
    verdicts = []

    load_end = open("/proc/loadavg").read().split()[:3]
    say()
    say(f"sources {E['AB_SOURCES']} (sha1 of Sources/**/*.swift and Package.swift as built); machine: {os.cpu_count()} CPUs; "
        f"load average at start {E['AB_LOAD']}, at the end {' '.join(load_end)}"
        + ("  (busy: other work perturbs these figures)" if float(load_end[0]) > os.cpu_count() else ""))
    say()
    say(f"1. playing a {PLAY_S:.0f} s 44.1 kHz stereo file (FLAC; aplay: WAV) into the 48 kHz null sink; "
        f"median of {ROUNDS} rounds")
    say(f"{'player':<12}{'CPU s':>8}{'% core':>8}{'pulse s':>9}{'sum s':>8}{'wall s':>8}{'heard s':>9}{'start ms':>10}"
        f"{'real time':>11}{'busy %':>8}")
    F1 = {}
    for name, _ in players:
        d = P1[name]
        cpu, pa, wall, heard, on, busy = (median(d[k]) for k in ("cpu", "pa", "wall", "heard", "onset", "busy"))
        F1[name] = (cpu, pa)
        ok = f"{ROUNDS - d['bad']}/{ROUNDS}"
        say(f"{name:<12}{cpu:>8.3f}{100 * cpu / wall:>8.2f}{pa:>9.3f}{cpu + pa:>8.3f}{wall:>8.2f}{heard:>9.2f}"
            f"{fmt(on):>10}{ok:>11}{busy:>8.1f}")
    say("  CPU: the player process (user+sys, wait4); pulse: the pulseaudio server over the same run (it resamples")
    say("  44.1 kHz streams for mpv, paplay and aplay; Earshot resamples itself and sends 48 kHz); heard: seconds of")
    say("  sound captured at the sink; start: command start to the first sound at the sink; busy: the whole")
    say(f"  machine's CPU use during the run, % of its {os.cpu_count()} CPUs (everything, this benchmark included).")
    if HAVE_MPV:
        for m in ("mpv-alsa", "mpv-pulse"):
            say(f"  earshot/{m}: CPU {fmt(ratio(F1['earshot'][0], F1[m][0]), 2)}x, "
                f"CPU+pulse {fmt(ratio(sum(F1['earshot']), sum(F1[m])), 2)}x")
        best = min(("mpv-alsa", "mpv-pulse"), key=lambda m: F1[m][0])
        ok = F1["earshot"][0] < F1[best][0] and P1["earshot"]["bad"] == 0
        verdicts.append(("PASS" if ok else "FAIL") + f" - 1. Earshot less CPU than mpv: earshot {F1['earshot'][0]:.3f} s vs "
                        f"{best} {F1[best][0]:.3f} s ({ratio(F1['earshot'][0], F1[best][0]):.2f}x) for {PLAY_S:.0f} s of audio"
                        + ("" if P1["earshot"]["bad"] == 0 else f"; earshot not real time in {P1['earshot']['bad']} runs"))
    else:
        verdicts.append("n/a  - 1. Earshot less CPU than mpv: mpv not installed")
    # Issue 8's target: resampling is Earshot's (paplay leaves it to the server), so 2x paplay's CPU.
    e_cpu, p_cpu = F1["earshot"][0], F1["paplay"][0]
    verdicts.append(("PASS" if e_cpu is not None and p_cpu and e_cpu <= 2 * p_cpu else "FAIL")
                    + f" - 1. a 44.1 kHz FLAC at no more than 2x paplay's CPU: earshot {fmt(e_cpu, 3)} s vs paplay "
                    + f"{fmt(p_cpu, 3)} s ({fmt(ratio(e_cpu, p_cpu), 2)}x)")

    say()
    say(f"2. start latency of a 0.25 s 1 kHz beep (44.1 kHz WAV) to its first non-silent frame at the sink, ms;")
    say(f"   median over {ROUNDS} rounds of the per-round median of {K} plays; capture resolution ~{fmt(read_ms, 1)} ms per read")
    say(f"{'what':<28}{'median':>8}{'min':>8}{'max':>8}{'heard ms':>10}{'missed':>8}")
    F2 = {}
    for key, d in P2.items():
        per_round = [median(x) for x in d["lat"]]
        alls = [x for xs in d["lat"] for x in xs]
        F2[key] = median(per_round)
        heard = median([x for xs in d["heard"] for x in xs])
        say(f"{key:<28}{fmt(F2[key]):>8}{fmt(min(alls) if alls else None):>8}{fmt(max(alls) if alls else None):>8}"
            f"{fmt(1000 * heard if heard is not None else None, 0):>10}{d['miss']:>8}")
    say("  commands: from just before fork/exec; in process: from just before the play() call (cold: the engine had")
    say("  released the device, so play() opens it; warm: the device was open). heard: ms of the 250 ms beep that")
    say("  reached the sink.")
    e, p_ = F2.get("earshot sound"), F2.get("paplay")
    if e is not None and p_ is not None:
        say(f"  earshot sound/paplay: {ratio(e, p_):.2f}x" + "".join(
            f";  {k}/paplay: {fmt(ratio(F2[k], p_), 2)}x" for k in F2 if k.startswith("SystemSound")))
        verdicts.append(("PASS" if e < p_ else "FAIL") + f" - 2. system sound starts faster than paplay: earshot sound "
                        f"{e:.1f} ms vs paplay {p_:.1f} ms ({ratio(e, p_):.2f}x); in process SystemSound cold "
                        f"{fmt(F2.get('SystemSound.play() cold'))} ms, warm {fmt(F2.get('SystemSound.play() warm'))} ms")
    else:
        verdicts.append("FAIL - 2. system sound starts faster than paplay: no onset measured")

    say()
    say(f"3. 32 AudioPlayers in one process (earshot-bench players; 60 s files, volume 1/32); median of {ROUNDS} rounds")
    say(f"{'variant':<30}{'% core':>8}{'render %':>10}{'reader %':>10}{'underruns':>11}{'dropouts':>10}{'1st s':>7}"
        f"{'late ms':>9}{'heard s':>9}{'busy %':>8}")
    F3 = {}
    for name, _ in variants:
        rows = P3[name]
        if not rows:
            say(f"{name:<30} (failed)"); continue
        def m(k, cast=float):
            vals = [cast(x[k]) for x in rows if x.get(k, "n/a") != "n/a"]
            return median(vals)
        cpu = m("cpu_pct"); und = max(int(x["underruns"]) for x in rows)
        drop = [x["dropouts"] for x in rows]
        dmax = max(int(x) for x in drop) if all(x != "n/a" for x in drop) else None
        first = max(int(x.get("dropouts_first_s", 0)) for x in rows) if dmax is not None else None
        late = median([1000 * (float(x["wall"]) - float(x["pos_min"])) for x in rows])
        F3[name] = (cpu, und, dmax, [x for x in rows])
        say(f"{name:<30}{cpu:>8.2f}{fmt(m('render_pct'), 2):>10}{fmt(m('reader_pct'), 2):>10}{und:>11}"
            f"{fmt(dmax, 0) if dmax is not None else 'n/a':>10}{fmt(first, 0) if first is not None else 'n/a':>7}"
            f"{late:>9.0f}{m('heard'):>9.2f}{m('machine_busy_pct'):>8.1f}")
    say("  % core: process user+sys over the playing window / wall; underruns, dropouts: worst round (dropouts: ring")
    say("  ran dry, summed over the 32 voices; 1st s: of them in the first second); late ms: wall - the smallest")
    say("  player position at the end (how far the most-behind player lags).")
    head = "32 x 44.1k FLAC, prepared"
    if head in F3:
        cpu, und, dmax, _ = F3[head]
        ok = cpu < 15 and und == 0 and (dmax or 0) == 0
        verdicts.append(("PASS" if ok else "FAIL") + f" - 3. 32 players under 15 % of one core, glitch-free: {cpu:.1f} % "
                        f"(44.1 kHz FLAC, decode + resample), {und} underruns, {fmt(dmax, 0) if dmax is not None else 'n/a'} dropouts")
    else:
        verdicts.append("FAIL - 3. 32 players under 15 % of one core: no measurement")

    say()
    say(f"4. decoding 60 s 44.1 kHz stereo to memory; median of {ROUNDS} rounds")
    say(f"{'format':<12}{'Earshot s':>10}{'Mframes/s':>11}{'x real time':>12}{'+process s':>11}{'sox s':>8}"
        f"{'sox/Earshot':>12}{'(process)':>10}")
    for name, _ in formats:
        d = P4[name]
        ins, proc, sox = median(d["in"]), median(d["proc"]), median(d["sox"])
        if ins is None or sox is None:
            say(f"{name:<12} (failed)"); continue
        fps = median(d["fps"])
        say(f"{name:<12}{ins:>10.4f}{fps / 1e6:>11.1f}{fps / 44100:>12.0f}{proc:>11.4f}{sox:>8.4f}"
            f"{sox / ins:>12.2f}{sox / proc:>10.2f}")
    say("  Earshot s: AudioFile open + readAll() in process; +process: the whole earshot-bench run; sox: wall time of")
    say("  `sox FILE -t f32 /dev/null`; sox/Earshot > 1: Earshot faster (first column in process, second process to process).")

    say()
    for v in verdicts:
        say("verdict: " + v)
    with open(f"{OUT}/audio-last.txt", "w") as f:
        f.write(f"# bench/audio {time.strftime('%Y-%m-%d %H:%M:%S')} sources={E['AB_SOURCES']} rounds={ROUNDS} play_seconds={PLAY_S:.0f} "
                f"load={open('/proc/loadavg').read().split()[:3]}\n")
        f.write("\n".join(RAW) + "\n\n" + "\n".join(lines) + "\n")
    sys.exit(3 if any(v.startswith("FAIL") for v in verdicts) else 0)
finally:
    for c in list(CHILDREN):
        try:
            c.kill(); c.wait()
        except Exception:
            pass
