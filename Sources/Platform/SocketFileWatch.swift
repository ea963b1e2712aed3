#if canImport(Glibc)
import Glibc
#endif

/// Waits, without polling, for a socket file to be created again in its folder: what a
/// sound server does when it starts (it unlinks a stale socket and binds a new one).
/// inotify on the folder, and a pipe that ``cancel()`` writes to, so a waiting thread wakes
/// at once when its owner closes.
///
/// `@unchecked Sendable`: the descriptors are fixed at init; ``wait(seconds:)`` is for one
/// thread at a time, ``cancel()`` for any.
package final class SocketFileWatch: @unchecked Sendable {
    /// The socket's folder and file name.
    package let folder: String
    package let name: String
    private let watch: Int32
    private let pipeRead: Int32
    private let pipeWrite: Int32

    /// Watches `path`'s folder; nil when it cannot (no inotify, no such folder).
    package init?(path: String) {
        guard let slash = path.lastIndex(of: "/") else { return nil }
        folder = slash == path.startIndex ? "/" : String(path[..<slash])
        name = String(path[path.index(after: slash)...])
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        guard inotify_add_watch(fd, folder, UInt32(IN_CREATE | IN_MOVED_TO | IN_ATTRIB)) >= 0 else {
            close(fd)
            return nil
        }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            close(fd)
            return nil
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        watch = fd
        pipeRead = ends[0]
        pipeWrite = ends[1]
    }

    deinit {
        close(watch)
        close(pipeRead)
        close(pipeWrite)
    }

    /// The inotify descriptor, for a main loop of one's own (read it with ``drainNamesSocket()``).
    package var descriptor: Int32 { watch }

    /// Waits up to `seconds` for the socket to be created (or replaced). Returns `.created`,
    /// `.timedOut`, or `.cancelled` once ``cancel()`` was called (and at once after that).
    package func wait(seconds: Double) -> Outcome {
        let deadline = MonotonicClock.seconds() + max(0, seconds)
        while true {
            let left = deadline - MonotonicClock.seconds()
            guard left > 0 else { return .timedOut }
            var fds = [pollfd(fd: watch, events: Int16(POLLIN), revents: 0), pollfd(fd: pipeRead, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, Int32(min(left * 1000, Double(Int32.max)).rounded(.up)))
            if ready < 0, errno == EINTR { continue }
            if fds[1].revents != 0 { return .cancelled }
            if fds[0].revents != 0, drainNamesSocket() { return .created }
        }
    }

    /// Reads the pending inotify events; true when one named the socket.
    package func drainNamesSocket() -> Bool {
        var named = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        let header = MemoryLayout<inotify_event>.size
        while true {
            let count = buffer.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
            guard count > 0 else { return named }
            var offset = 0
            while offset + header <= count {
                let length = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: offset + 12, as: UInt32.self)) }
                let start = offset + header
                let bytes = buffer[start..<min(start + length, count)].prefix { $0 != 0 }
                if String(decoding: bytes, as: UTF8.self) == name { named = true }
                offset = start + length
            }
        }
    }

    /// Wakes a ``wait(seconds:)`` and makes later ones return `.cancelled`. Any thread.
    package func cancel() {
        var byte: UInt8 = 1
        _ = write(pipeWrite, &byte, 1)
    }

    /// How a wait ended.
    package enum Outcome: Sendable, Hashable {
        case created, timedOut, cancelled
    }

    /// The socket file of a pulse server string: `unix:PATH` or a bare path; for the default
    /// (nil or empty), `PULSE_SERVER` when it is one, else `$XDG_RUNTIME_DIR/pulse/native`.
    /// Nil for a TCP server (nothing to watch).
    package static func pulseSocket(server: String?) -> String? {
        let named = (server?.isEmpty == false ? server : nil) ?? getenv("PULSE_SERVER").map { String(cString: $0) }
        if let named, !named.isEmpty {
            if named.hasPrefix("unix:") { return String(named.dropFirst(5)) }
            return named.hasPrefix("/") ? named : nil
        }
        guard let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), !runtime.isEmpty else { return nil }
        return runtime + "/pulse/native"
    }
}
