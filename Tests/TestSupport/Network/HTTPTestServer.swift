import Foundation

/// An HTTP server on 127.0.0.1, started by a test (Python's `http.server`, run through
/// ``launch(_:)``), that serves audio the way real servers do, well or badly.
///
/// Modes (`HTTPTestServer.Mode`): files with range requests; an Icecast-style endless MP3 stream
/// with ICY titles that change; a file that stalls midway then resumes; a connection dropped
/// midway (then either served again from the range asked, or the server gone); bytes that are
/// no audio; a redirect loop; a file claiming to be 4 GB; a server that never answers.
public final class HTTPTestServer: Sendable {
    public enum Mode: Sendable {
        /// Files under a directory, with `Range` support.
        case files(directory: String)
        /// `file` repeated forever at `bytesPerSecond`, with ICY metadata every 8000 bytes when
        /// asked (`Icy-MetaData: 1`); the title becomes "Artist N - Song N" every `titleSeconds`.
        /// With `dropFirstAfter`, the first connection is closed after that many audio bytes.
        case icy(file: String, bytesPerSecond: Int, titleSeconds: Double, dropFirstAfter: Int? = nil)
        /// `file`, its first `atByte` bytes at once, then nothing for `seconds`, then the rest.
        case stall(file: String, atByte: Int, seconds: Double)
        /// `file` with its full length announced, closed after `atByte` bytes; later requests
        /// (a reconnection with a range) are served, unless `thenGone`: the server exits.
        case drop(file: String, atByte: Int, thenGone: Bool)
        /// 200 OK, `audio/mpeg`, with 200 000 random bytes.
        case garbage
        /// Every request redirected to another URL of the same server, forever.
        case redirectLoop
        /// Every request redirected to `location` (any URL, `file:` included).
        case redirect(to: String)
        /// A `Content-Length` of 4 GiB with ranges accepted; the body is `file`, then the connection closes.
        case huge(file: String)
        /// Accepts connections and never answers.
        case silent
        /// ``files(directory:)`` over TLS, with a self-signed certificate (`certificate` holds the key too).
        case tlsFiles(directory: String, certificate: String)
    }

    public let port: Int
    private let child: Child

    public init(_ mode: Mode) async throws {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-http-server-\(getpid()).py")
        if !FileManager.default.fileExists(atPath: script.path) {
            try HTTPTestServer.script.write(to: script, atomically: true, encoding: .utf8)
        }
        let arguments: [String]
        switch mode {
        case .files(let directory): arguments = ["files", directory]
        case .icy(let file, let rate, let seconds, let drop): arguments = ["icy", file, "\(rate)", "\(seconds)", "\(drop ?? 0)"]
        case .stall(let file, let at, let seconds): arguments = ["stall", file, "\(at)", "\(seconds)"]
        case .drop(let file, let at, let gone): arguments = ["drop", file, "\(at)", gone ? "gone" : "back"]
        case .garbage: arguments = ["garbage"]
        case .redirectLoop: arguments = ["redirect"]
        case .redirect(let location): arguments = ["redirect", location]
        case .huge(let file): arguments = ["huge", file]
        case .silent: arguments = ["silent"]
        case .tlsFiles(let directory, let certificate): arguments = ["files", directory, certificate]
        }
        if case .tlsFiles = mode { scheme = "https" } else { scheme = "http" }
        let child = try Child("/usr/bin/python3", ["-u", script.path] + arguments)
        self.child = child
        // The whole line: the number may come in a later read than "PORT ".
        try await child.waitForOutput("PORT ", timeout: 10)
        try await eventually("the test HTTP server's port line", timeout: 5) {
            child.stdout.components(separatedBy: "PORT ").dropFirst().first?.contains("\n") == true
        }
        let line = child.stdout.split(separator: "\n").first { $0.hasPrefix("PORT ") } ?? ""
        guard let port = Int(line.dropFirst(5).trimmingCharacters(in: .whitespaces)) else {
            throw TestFailure("the test HTTP server gave no port: \(child.stdout) \(child.stderr)")
        }
        self.port = port
    }

    /// `http://127.0.0.1:PORT/path` (`https://` for ``Mode/tlsFiles(directory:certificate:)``).
    public func url(_ path: String = "stream.mp3") -> String { "\(scheme)://127.0.0.1:\(port)/\(path)" }
    private let scheme: String

    /// Makes a self-signed certificate and key for the address `host` (127.0.0.1 by default,
    /// where the server listens) in one PEM file at `path`, and the certificate alone at
    /// `path.crt` (what a client trusts).
    public static func makeCertificate(at path: String, host: String = "127.0.0.1") async throws {
        let result = try await run("/usr/bin/openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                                                        "-subj", "/CN=\(host)", "-addext", "subjectAltName=IP:\(host)",
                                                        "-keyout", path, "-out", path + ".crt"], timeout: 60)
        guard result.status == 0 else { throw TestFailure("openssl: \(result.stderr)") }
        let combined = try String(contentsOfFile: path, encoding: .utf8) + String(contentsOfFile: path + ".crt", encoding: .utf8)
        try combined.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Whether the server process still runs (a `.drop(thenGone: true)` server exits).
    public var isRunning: Bool { child.isRunning }

    /// The server's log lines (one per request: method, path, range).
    public var requests: [String] { child.stdout.split(separator: "\n").filter { $0.hasPrefix("REQUEST ") }.map(String.init) }

    public func stop() { child.kill(SIGKILL) }

    deinit { child.kill(SIGKILL) }

    private static let script = #"""
import os, random, socket, sys, threading, time
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

mode, args = sys.argv[1], sys.argv[2:]

def read(path):
    with open(path, 'rb') as f:
        return f.read()

class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    requests = 0

    def log_message(self, *a):
        pass

    def do_GET(self):
        Handler.requests += 1
        sys.stdout.write('REQUEST %s %s\n' % (self.path, self.headers.get('Range', '-')))
        sys.stdout.flush()
        try:
            getattr(self, 'serve_' + mode)()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def head(self, status, length=None, kind='audio/mpeg', extra=()):
        self.send_response(status)
        self.send_header('Content-Type', kind)
        if length is not None:
            self.send_header('Content-Length', str(length))
        for k, v in extra:
            self.send_header(k, v)
        self.send_header('Connection', 'close')
        self.end_headers()
        self.close_connection = True

    def ranged(self, data, total=None):
        total = len(data) if total is None else total
        r = self.headers.get('Range')
        start, end = 0, total - 1
        if r and r.startswith('bytes='):
            a, _, b = r[6:].partition('-')
            start = int(a or 0)
            end = int(b) if b else total - 1
            if start >= len(data):
                self.head(416, 0, extra=[('Content-Range', 'bytes */%d' % total)])
                return
            self.head(206, end - start + 1, extra=[('Accept-Ranges', 'bytes'), ('Content-Range', 'bytes %d-%d/%d' % (start, end, total))])
        else:
            self.head(200, total, extra=[('Accept-Ranges', 'bytes')])
        self.wfile.write(data[start:end + 1])

    def serve_files(self):
        path = os.path.join(args[0], self.path.lstrip('/').split('?')[0])
        if not os.path.isfile(path):
            self.head(404, 0)
            return
        self.ranged(read(path))

    def serve_icy(self):
        data, rate, every, drop = read(args[0]), int(args[1]), float(args[2]), int(args[3])
        first = Handler.requests == 1
        metaint = 8000 if self.headers.get('Icy-MetaData') == '1' else 0
        extra = [('icy-name', 'Earshot Test Radio')] + ([('icy-metaint', str(metaint))] if metaint else [])
        self.head(200, None, extra=extra)
        started, sent, pos, last = time.time(), 0, 0, None
        while True:
            n = 8000 if metaint else 4000
            chunk = b''
            while len(chunk) < n:
                take = data[pos:pos + n - len(chunk)]
                chunk += take
                pos = (pos + len(take)) % len(data)
            self.wfile.write(chunk)
            sent += n
            if metaint:
                number = int((time.time() - started) / every) + 1
                if number != last:
                    text = ("StreamTitle='Artist %d - Song %d';" % (number, number)).encode()
                    text += b'\0' * (-len(text) % 16)
                    self.wfile.write(bytes([len(text) // 16]) + text)
                    last = number
                else:
                    self.wfile.write(b'\0')
            self.wfile.flush()
            if first and drop and sent >= drop:
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            ahead = sent / rate - (time.time() - started)
            if ahead > 0.5:
                time.sleep(ahead - 0.5)

    def serve_stall(self):
        data, at, seconds = read(args[0]), int(args[1]), float(args[2])
        self.head(200, len(data))
        self.wfile.write(data[:at])
        self.wfile.flush()
        time.sleep(seconds)
        self.wfile.write(data[at:])

    def serve_drop(self):
        data, at, after = read(args[0]), int(args[1]), args[2]
        if Handler.requests == 1:
            self.head(200, len(data), extra=[('Accept-Ranges', 'bytes')])
            self.wfile.write(data[:at])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            if after == 'gone':
                os._exit(0)
            return
        self.ranged(data)

    def serve_garbage(self):
        body = random.Random(13).randbytes(200000)
        self.head(200, len(body))
        self.wfile.write(body)

    def serve_redirect(self):
        if args:
            self.head(302, 0, extra=[('Location', args[0])])
            return
        n = int(self.path.split('?')[-1]) if '?' in self.path else 0
        self.head(302, 0, extra=[('Location', '/loop.mp3?%d' % (n + 1))])

    def serve_huge(self):
        self.ranged(read(args[0]), total=4 * 1024 ** 3)

def announce(port):
    # One write: print() under -u writes 'PORT', ' ', the number and the newline apart, and
    # a reader once saw 'PORT ' with no number yet.
    sys.stdout.write('PORT %d\n' % port)
    sys.stdout.flush()

if mode == 'silent':
    server = socket.socket()
    server.bind(('127.0.0.1', 0))
    server.listen(16)
    announce(server.getsockname()[1])
    held = []
    while True:
        conn, _ = server.accept()
        held.append(conn)
else:
    ThreadingHTTPServer.daemon_threads = True
    server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    if mode == 'files' and len(args) > 1:
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args[1])
        server.socket = context.wrap_socket(server.socket, server_side=True)
    announce(server.server_address[1])
    server.serve_forever()
"""#
}

/// Runs blocking work (opening a stream, which waits for the server; reading one as the
/// engine's reader does) on a thread of its own, so that it never holds one of the few
/// threads of Swift's cooperative pool, which the other tests running in parallel need.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// Runs `body` as ``offThePool(_:)`` does and gives its result with the seconds it took,
/// timed on the thread that ran it. A time taken around the `await` would also count the
/// wait for a cooperative thread to resume the test on, which is seconds while other tests
/// of a parallel run hold the pool's few threads with synchronous work.
public func timedOffThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> (value: T, seconds: Double) {
    try await offThePool {
        let start = ContinuousClock.now
        let value = try body()
        let took = ContinuousClock.now - start
        return (value, Double(took.components.seconds) + Double(took.components.attoseconds) * 1e-18)
    }
}
