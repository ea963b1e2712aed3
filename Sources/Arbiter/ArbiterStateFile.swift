import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// What the arbiter changed in other apps' streams and players, kept outside its process so
/// that the next arbiter can undo it when this one dies (SIGKILL mid-duck): each ducked
/// stream's volume before, and the volumes the arbiter may have set on it (the rungs of its
/// ramp); and each player it paused, with the session it paused it for.
///
/// `$XDG_RUNTIME_DIR/earshot/arbiter-state.json`, written atomically (a temporary file
/// renamed over it), removed when nothing is ducked. Read with limits: a file over
/// ``maximumSize`` bytes, not JSON of the expected shape, or with values out of range is an
/// error naming the file and the reason, and is ignored.
struct ArbiterStateFile: Sendable {
    /// One ducked stream (a sink input of the sound server).
    struct Stream: Codable, Sendable, Hashable {
        /// The sink input's index.
        var index: UInt32
        /// Its process (`application.process.id`): a stream at the same index of another
        /// process is not the one ducked.
        var pid: Int64
        /// Its volume before the ducking, per channel.
        var original: [UInt32]
        /// The volumes the arbiter may have set on it, per channel: the next arbiter puts
        /// ``original`` back only if the stream still has one of these.
        var set: [[UInt32]]
    }

    /// One player paused by the arbiter for a session.
    struct Player: Codable, Sendable, Hashable {
        /// The unique bus name owning its MPRIS name (never reused on a bus).
        var player: String
        /// The session (its unique bus name) it was paused for.
        var pausedBy: String
    }

    /// What the file holds.
    struct Contents: Codable, Sendable, Equatable {
        var version = ArbiterStateFile.version
        var streams: [Stream] = []
        var players: [Player]? = []
        var isEmpty: Bool { streams.isEmpty && (players ?? []).isEmpty }
    }

    static let version = 1
    static let maximumSize = 64 * 1024
    static let maximumStreams = 256
    static let maximumRungs = 32
    /// `PA_VOLUME_MAX`.
    static let maximumVolume: UInt32 = UInt32.max / 2

    let path: String

    /// The file under `$XDG_RUNTIME_DIR/earshot/`, or `nil` when that is not set (or not an
    /// absolute path): then nothing outlives the arbiter.
    static func standard() -> ArbiterStateFile? {
        guard let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), runtime.hasPrefix("/") else { return nil }
        return ArbiterStateFile(path: runtime + "/earshot/arbiter-state.json")
    }

    /// What the file lists; nothing when there is no file.
    func read() throws(ArbiterStateFileError) -> Contents {
        let bytes: [UInt8]
        do {
            bytes = try SmallFile.read(path, limit: ArbiterStateFile.maximumSize, followsLinks: false)
        } catch {
            switch error {
            case .missing: return Contents()
            case .unreadable(let reason): throw .unreadable(path: path, reason: reason)
            case .notARegularFile: throw .malformed(path: path, reason: "not a regular file")
            case .tooLarge(let size): throw .tooLarge(path: path, size: size)
            }
        }
        let contents: Contents
        do {
            contents = try JSONDecoder().decode(Contents.self, from: Data(bytes))
        } catch {
            throw .malformed(path: path, reason: "not the expected JSON (\(error))")
        }
        do {
            try Self.validate(contents)
        } catch {
            throw error.at(path)
        }
        return contents
    }

    private static func validate(_ contents: Contents) throws(ArbiterStateFileError) {
        func bad(_ reason: String) -> ArbiterStateFileError { .malformed(path: "", reason: reason) }
        guard contents.version == version else { throw bad("version \(contents.version), not \(version)") }
        guard contents.streams.count <= maximumStreams else { throw bad("\(contents.streams.count) streams, more than \(maximumStreams)") }
        let players = contents.players ?? []
        guard players.count <= maximumStreams else { throw bad("\(players.count) players, more than \(maximumStreams)") }
        for player in players {
            for name in [player.player, player.pausedBy] where !(name.hasPrefix(":") && (2...255).contains(name.utf8.count)) {
                throw bad("“\(name.prefix(64))” is not a unique bus name")
            }
        }
        guard Set(contents.streams.map(\.index)).count == contents.streams.count else { throw bad("a stream listed twice") }
        for stream in contents.streams {
            guard stream.pid > 0 else { throw bad("stream \(stream.index): process \(stream.pid)") }
            guard (1...32).contains(stream.original.count) else { throw bad("stream \(stream.index): \(stream.original.count) channels") }
            guard stream.set.count <= maximumRungs else { throw bad("stream \(stream.index): \(stream.set.count) volumes set") }
            for volume in [stream.original] + stream.set {
                guard volume.count == stream.original.count else { throw bad("stream \(stream.index): channel counts differ") }
                guard volume.allSatisfy({ $0 <= maximumVolume }) else { throw bad("stream \(stream.index): a volume out of range") }
            }
        }
    }

    /// Replaces the file with `contents` (removes it when it holds nothing).
    func write(_ contents: Contents) throws(ArbiterStateFileError) {
        if contents.isEmpty {
            if unlink(path) != 0 && errno != ENOENT { throw .unwritable(path: path, reason: String(cString: strerror(errno))) }
            return
        }
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw .unwritable(path: path, reason: "cannot create \(directory): \(String(cString: strerror(errno)))")
        }
        let data: Data
        do {
            data = try JSONEncoder().encode(contents)
        } catch {
            throw .unwritable(path: path, reason: "\(error)")
        }
        guard data.count <= Self.maximumSize else { throw .unwritable(path: path, reason: "\(data.count) bytes, more than \(Self.maximumSize)") }
        let temporary = path + ".\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .unwritable(path: path, reason: String(cString: strerror(errno))) }
        var written = 0
        let ok = data.withUnsafeBytes { raw -> Bool in
            while written < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + written, raw.count - written)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                written += n
            }
            return true
        }
        let reason = ok ? nil : String(cString: strerror(errno))
        Glibc.close(fd)
        guard ok, rename(temporary, path) == 0 else {
            let failure = reason ?? String(cString: strerror(errno))
            unlink(temporary)
            throw .unwritable(path: path, reason: failure)
        }
    }
}

/// Why the arbiter's state file could not be read or written.
enum ArbiterStateFileError: Error, CustomStringConvertible {
    case tooLarge(path: String, size: Int)
    case unreadable(path: String, reason: String)
    case malformed(path: String, reason: String)
    case unwritable(path: String, reason: String)

    func at(_ path: String) -> ArbiterStateFileError {
        if case .malformed(_, let reason) = self { return .malformed(path: path, reason: reason) }
        return self
    }

    var description: String {
        switch self {
        case .tooLarge(let path, let size):
            "\(path): \(size) bytes, more than \(ArbiterStateFile.maximumSize); ignored"
        case .unreadable(let path, let reason): "\(path): cannot read it (\(reason)); ignored"
        case .malformed(let path, let reason): "\(path): \(reason); ignored"
        case .unwritable(let path, let reason): "\(path): cannot write it (\(reason))"
        }
    }
}
