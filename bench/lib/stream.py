#!/usr/bin/env python3
# The measuring and analysis half of bench/stream, which starts it; see that script for what it measures.
import os, re, statistics, subprocess, sys, threading, time, functools
from http.server import ThreadingHTTPServer, SimpleHTTPRequestHandler

bench, media, rounds, length = os.environ["BENCH"], os.environ["MEDIA"], int(os.environ["ROUNDS"]), os.environ["LENGTH"]

class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        if self.path != "/radio":
            return super().do_GET()
        # A radio as Icecast sends one: a 64 KiB burst (its default burst-size), then 128 kb/s
        # in real time; endless, so it stops after 5 s for each listener.
        data = open(f"{media}/tone-{length}.mp3", "rb").read()
        self.send_response(200)
        self.send_header("Content-Type", "audio/mpeg")
        self.send_header("icy-name", "bench")
        self.end_headers()
        try:
            self.wfile.write(data[:65536])
            start, sent = time.monotonic(), 65536
            while time.monotonic() - start < 5 and sent < len(data):
                self.wfile.write(data[sent:sent + 1600])
                sent += 1600
                time.sleep(0.1)
        except (BrokenPipeError, ConnectionResetError):
            pass

server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=media))
threading.Thread(target=server.serve_forever, daemon=True).start()
base_url = f"http://127.0.0.1:{server.server_address[1]}"
files = {"MP3 128 kb/s": f"{base_url}/tone-{length}.mp3", "AAC in MP4": f"{base_url}/tone-{length}.m4a",
         "MP3 radio": f"{base_url}/radio"}

def wall(argv):
    t0 = time.monotonic()
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if result.returncode != 0:
        sys.exit(f"stream: {' '.join(argv)} failed: {result.stderr.decode()}")
    return time.monotonic() - t0, result.stdout.decode()

def ffmpeg(url):
    return wall(["ffmpeg", "-nostdin", "-v", "error", "-i", url, "-frames:a", "1", "-f", "null", "-"])[0]

def earshot(url):
    whole, out = wall([bench, "stream-start", url])
    return whole, float(dict(re.findall(r"(\w+)=(\S+)", out))["seconds"])

results = {name: {"earshot": [], "inside": [], "ffmpeg": []} for name in files}
for r in range(rounds):
    for name, url in files.items():
        e, inside = earshot(url)
        f = ffmpeg(url)
        results[name]["earshot"].append(e * 1000)
        results[name]["inside"].append(inside * 1000)
        results[name]["ffmpeg"].append(f * 1000)
        print(f"  round {r + 1} {name}: earshot-bench {e * 1000:.1f} ms (in-process {inside * 1000:.2f} ms), "
              f"ffmpeg {f * 1000:.1f} ms", file=sys.stderr)

print(f"HTTP stream start, URL to first decoded frame, 127.0.0.1: wall ms, median of {rounds} rounds")
print(f"{'format':<16}{'earshot':>10}{'ffmpeg':>10}{'ratio':>8}{'in-process':>12}")
for name, d in results.items():
    e, f, inside = statistics.median(d["earshot"]), statistics.median(d["ffmpeg"]), statistics.median(d["inside"])
    print(f"{name:<16}{e:>10.1f}{f:>10.1f}{e / f:>8.2f}{inside:>12.2f}")
server.shutdown()
