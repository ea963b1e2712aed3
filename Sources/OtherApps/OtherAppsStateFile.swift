import FoundationEssentials
import Platform
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
package struct OtherAppsStateFile: Sendable {
    /// One ducked stream (a sink input of the sound server).
    package struct Stream: Codable, Sendable, Hashable {
        /// The sink input's index.
        package var index: UInt32
        /// Its process (`application.process.id`): a stream at the same index of another
        /// process is not the one ducked.
        package var pid: Int64
        /// Its volume before the ducking, per channel.
        package var original: [UInt32]
        /// The volumes the arbiter may have set on it, per channel: the next arbiter puts
        /// ``original`` back only if the stream still has one of these.
        package var set: [[UInt32]]

        /// The stream of `index` of `pid`, ducked from `original` with `set`.
        package init(index: UInt32, pid: Int64, original: [UInt32], set: [[UInt32]]) {
            self.index = index
            self.pid = pid
            self.original = original
            self.set = set
        }

        /// The stream a ducker's record keeps (its ladder is not empty).
        package init(_ record: ForeignDuckRamp.Record) {
            self.init(index: record.index, pid: record.pid, original: record.ladder[0], set: Array(record.ladder.dropFirst()))
        }

        /// The record a ducker takes it over as: its ladder, the volume before then the
        /// volumes set.
        package var record: ForeignDuckRamp.Record { .init(index: index, pid: pid, ladder: [original] + set) }
    }

    /// One player paused by the arbiter for a session.
    package struct Player: Codable, Sendable, Hashable {
        /// The unique bus name owning its MPRIS name (never reused on a bus).
        package var player: String
        /// The session (its unique bus name) it was paused for.
        package var pausedBy: String

        /// `player`, paused for `pausedBy`.
        package init(player: String, pausedBy: String) {
            self.player = player
            self.pausedBy = pausedBy
        }
    }

    /// What the file holds.
    package struct Contents: Codable, Sendable, Equatable {
        /// The format's version (``OtherAppsStateFile/version``).
        package var version = OtherAppsStateFile.version
        /// The ducked streams.
        package var streams: [Stream] = []
        /// The paused players (absent in files written before players were kept).
        package var players: [Player]? = []
        /// Nothing ducked, nothing paused: no file.
        package var isEmpty: Bool { streams.isEmpty && (players ?? []).isEmpty }

        /// Contents listing `streams` and `players`.
        package init(streams: [Stream] = [], players: [Player]? = []) {
            self.streams = streams
            self.players = players
        }
    }

    /// The format's version.
    package static let version = 1
    /// The largest file read, in bytes.
    package static let maximumSize = 64 * 1024
    /// At most this many streams, and as many players.
    package static let maximumStreams = 256
    /// At most this many volumes set on one stream.
    package static let maximumRungs = 32
    /// `PA_VOLUME_MAX`.
    package static let maximumVolume: UInt32 = UInt32.max / 2

    /// Where the file is.
    package let path: String

    /// The file at `path`.
    package init(path: String) {
        self.path = path
    }

    /// The file under `$XDG_RUNTIME_DIR/earshot/`, or `nil` when that is not set (or not an
    /// absolute path): then nothing outlives the arbiter.
    package static func standard() -> OtherAppsStateFile? {
        guard let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), runtime.hasPrefix("/") else { return nil }
        return OtherAppsStateFile(path: runtime + "/earshot/arbiter-state.json")
    }

    /// What the file lists; nothing when there is no file.
    package func read() throws(OtherAppsStateFileError) -> Contents {
        let bytes: [UInt8]
        do {
            bytes = try SmallFile.read(path, limit: OtherAppsStateFile.maximumSize, followsLinks: false)
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

    private static func validate(_ contents: Contents) throws(OtherAppsStateFileError) {
        func bad(_ reason: String) -> OtherAppsStateFileError { .malformed(path: "", reason: reason) }
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
    package func write(_ contents: Contents) throws(OtherAppsStateFileError) {
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
package enum OtherAppsStateFileError: Error, CustomStringConvertible {
    /// Larger than ``OtherAppsStateFile/maximumSize``.
    case tooLarge(path: String, size: Int)
    /// The system could not read it.
    case unreadable(path: String, reason: String)
    /// Not JSON of the expected shape, or values out of range.
    case malformed(path: String, reason: String)
    /// The system could not write it (or its folder).
    case unwritable(path: String, reason: String)

    func at(_ path: String) -> OtherAppsStateFileError {
        if case .malformed(_, let reason) = self { return .malformed(path: path, reason: reason) }
        return self
    }

    /// The file and the reason, for the log.
    package var description: String {
        switch self {
        case .tooLarge(let path, let size):
            "\(path): \(size) bytes, more than \(OtherAppsStateFile.maximumSize); ignored"
        case .unreadable(let path, let reason): "\(path): cannot read it (\(reason)); ignored"
        case .malformed(let path, let reason): "\(path): \(reason); ignored"
        case .unwritable(let path, let reason): "\(path): cannot write it (\(reason))"
        }
    }
}
