#!/usr/bin/env python3
# parec on a null sink's monitor, every read timestamped with CLOCK_MONOTONIC on arrival: how
# bench/audio and bench/startup tell when a command's sound reached the sink.
import os, statistics, subprocess, threading, time
import numpy as np

RATE = 48000


def mono():
    return time.clock_gettime(time.CLOCK_MONOTONIC)


class MonitorCapture:
    """Records SINK.monitor (float32, stereo, RATE) with parec at `latency_ms`. Keeps per read
    only: arrival time, frames, non-silent frames (above -60 dBFS), first non-silent frame.
    Returns once parec delivers; `children`, if given, holds the parec process while it runs."""

    def __init__(self, sink, latency_ms, children=None):
        self.latency_ms = latency_ms
        self.children = children
        self.proc = subprocess.Popen(
            ["parec", "-d", sink + ".monitor", "--format=float32le", f"--rate={RATE}", "--channels=2", "--raw",
             f"--latency-msec={latency_ms}"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if children is not None:
            children.add(self.proc)
        self.reads = []   # (t, frames, nonsilent, first_nonsilent_index or -1)
        self.lock = threading.Lock()
        threading.Thread(target=self._run, daemon=True).start()
        deadline = mono() + 5
        while not self.reads and mono() < deadline:
            time.sleep(0.01)
        if not self.reads:
            self.stop()
            raise SystemExit(f"parec delivered nothing from {sink}.monitor")

    def _run(self):
        fd = self.proc.stdout.fileno()
        pending = b""
        while True:
            b = os.read(fd, 1 << 16)
            t = mono()
            if not b:
                return
            b = pending + b
            n = len(b) // 8
            pending = b[n * 8:]
            if n == 0:
                continue
            a = np.abs(np.frombuffer(b[:n * 8], dtype=np.float32).reshape(n, 2)).max(axis=1)
            loud = np.flatnonzero(a > 1e-3)   # -60 dBFS
            with self.lock:
                self.reads.append((t, n, int(loud.size), int(loud[0]) if loud.size else -1))

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        if self.children is not None:
            self.children.discard(self.proc)

    def between(self, t0, t1):
        with self.lock:
            return [r for r in self.reads if t0 <= r[0] <= t1]

    def onset(self, t0, t1=float("inf")):
        """Arrival time of the first read after t0 holding a non-silent frame, or None."""
        for r in self.between(t0, t1):
            if r[2]:
                return r[0]
        return None

    def heard(self, t0, t1):
        """Seconds of non-silent frames arriving in [t0, t1]."""
        return sum(r[2] for r in self.between(t0, t1)) / RATE

    def read_ms(self, t0, t1):
        rs = self.between(t0, t1)
        return 1000 * statistics.median([r[1] for r in rs]) / RATE if rs else None
