import Earshot
import Dispatch
import FoundationEssentials
import Glibc
import AudioEngine
import Synchronization
import Platform

/// What `earshot play` shows: a live status line and keys on a terminal, or one line per
/// event otherwise.
///
/// `@unchecked Sendable`, and why that holds: the tally of items is written by the task
/// that handles the queue's events and read by the caller after `run`, so it is behind a
/// mutex. `savedTerminal` is written by `startKeyboard` before
/// the keyboard thread starts, and read by `finish`, which the caller runs after `run` on
/// the same task; the keyboard thread touches only `queue` and the quit signal, which are
/// `Sendable` themselves.
final class PlayDisplay: @unchecked Sendable {
    let queue: QueuePlayer
    let interactive: Bool
    private struct Tally {
        var started: Set<UInt64> = []
        var failed: Set<UInt64> = []
        var failures: [String] = []
    }
    private let tally = Mutex(Tally())
    /// The items given on the command line: only their failures make the command fail. An
    /// item another client added (MPRIS `OpenUri`, `AddTrack`) that cannot be played is
    /// reported, and changes nothing else.
    private let given: Set<UInt64>
    /// The files given on the command line that could not be played at all (not those cut
    /// short: they played).
    var failures: [String] { tally.withLock { $0.failures } }
    /// The items that played, wholly or up to a cut (each counted once).
    var itemsPlayed: Int { tally.withLock { $0.started.subtracting($0.failed).count } }
    private var savedTerminal = termios()

    init(queue: QueuePlayer, interactive: Bool) {
        self.queue = queue
        self.interactive = interactive
        given = Set(queue.items.map(\.id))
        // The live line's meter; without it the mix measures nothing.
        if interactive { queue.isMeteringEnabled = true }
    }

    /// Runs until the queue runs out or `quit` fires (the caller has SIGINT and SIGTERM
    /// fire it; see `onTerminationSignals`).
    func run(until quit: QuitSignal) async {
        if interactive { startKeyboard(quit) }
        let events = Task { [queue] in
            for await event in queue.events { self.handle(event) }
        }
        // Until the event that says the queue ran out is handled (not merely until the
        // queue has no current item), so that every event before it, a failure's note
        // among them, is handled before the run ends. Either of the two rings `finished`;
        // nothing here wakes on a clock unless a live line is on a terminal.
        let quitWatcher = Task { [finished] in
            await quit.wait()
            finished.ring()
        }
        if interactive {
            // The live line: 10 times a second while playing (the clock and meter move);
            // while paused only the state can change (a key or a remote command), and once
            // a second shows that soon enough without waking the process 10 times a second.
            while !finished.rung {
                drawStatus()
                // A quit (key, command or signal) ends the wait at once.
                await finished.wait(upTo: queue.isPlaying ? .milliseconds(100) : .seconds(1))
            }
        } else {
            await finished.wait()
        }
        quitWatcher.cancel()
        events.cancel()
        queue.stop()
    }

    /// Rung when the queue has run out or `quit` fired.
    private let finished = Doorbell()

    func finish() {
        if interactive {
            writeAll("\r\u{1B}[K", to: STDOUT_FILENO)
            var saved = savedTerminal
            tcsetattr(0, TCSANOW, &saved)
        }
    }

    private func handle(_ event: QueuePlayer.Event) {
        switch event {
        case .currentItemChanged(let item?): announce(item)
        case .currentItemChanged(nil): finished.ring()
        case .itemDidPlayToEnd(let item): if !interactive { say("finished: \(item.title)") }
        case .itemFailed(let item, let reason):
            let given = given.contains(item.id)
            tally.withLock { t in
                t.failed.insert(item.id)
                if given { t.failures.append(Self.name(item)) }
            }
            note("earshot play: skipped \(Self.name(item))\(given ? "" : " (added over MPRIS)"): \(reason)")
        case .itemEndedEarly(let item, let what): note("earshot play: \(Self.name(item)): \(what)")
        case .interruptionBegan: if !interactive { say("player: interruption began") }
        case .interruptionEnded(let shouldResume): if !interactive { say("player: interruption ended (shouldResume: \(shouldResume))") }
        case .timeControlStatusChanged: break
        }
    }

    private func announce(_ item: QueuePlayer.Item) {
        tally.withLock { _ = $0.started.insert(item.id) }
        // Where the item is in the queue now, not the queue's current index: by the time
        // the event is handled the queue may have moved on (or run out).
        let items = queue.items
        let position = (items.firstIndex(of: item).map { $0 + 1 } ?? 0, items.count)
        let artist = item.artist.map { " — \($0)" } ?? ""
        let line = "playing \(position.0)/\(position.1): \(item.title)\(artist) (\(clock(item.duration)))"
        if interactive {
            writeAll("\r\u{1B}[K\(TerminalText.escaped(line))\n", to: STDOUT_FILENO)
        } else {
            say(line)
        }
    }

    private func drawStatus() {
        guard let item = queue.currentItem else { return }
        let level = queue.averagePower()
        let meter = bar(max(level.left, level.right))
        let state = queue.isPlaying ? "▶" : "⏸"
        let line = "\r\u{1B}[K\(state) \(TerminalText.escaped(item.title))  \(clock(queue.currentTime)) / \(clock(item.duration))  \(meter)"
        writeAll(line, to: STDOUT_FILENO)
    }

    /// A 20-cell meter over −60…0 dBFS.
    private func bar(_ decibels: Float) -> String {
        let cells = Int(((max(-60, min(0, decibels)) + 60) / 60 * 20).rounded())
        return "[" + String(repeating: "#", count: cells) + String(repeating: "-", count: 20 - cells) + "]"
    }

    private func clock(_ seconds: Double) -> String {
        let total = Int(max(0, seconds.isFinite ? seconds : 0))
        return "\(total / 60):\(total % 60 < 10 ? "0" : "")\(total % 60)"
    }

    /// Raw keys: space, ← →, n, p, q.
    private func startKeyboard(_ quit: QuitSignal) {
        tcgetattr(0, &savedTerminal)
        var raw = savedTerminal
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        tcsetattr(0, TCSANOW, &raw)
        let queue = self.queue
        startThread(name: "earshot-keys") {
            var escape: [UInt8] = []
            while !quit.fired {
                var byte: UInt8 = 0
                guard read(0, &byte, 1) == 1 else { return }
                if !escape.isEmpty || byte == 0x1B {
                    escape.append(byte)
                    if escape.count == 3 {
                        if escape == [0x1B, 0x5B, 0x43] { queue.currentTime += 5 }
                        if escape == [0x1B, 0x5B, 0x44] { queue.currentTime -= 5 }
                        escape = []
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: " "): if queue.isPlaying { queue.pause() } else { queue.play() }
                case UInt8(ascii: "n"): queue.advanceToNextItem()
                case UInt8(ascii: "p"): queue.goToPreviousItem()
                case UInt8(ascii: "q"): quit.fire()
                default: break
                }
            }
        }
    }

    /// How messages name an item: a stream by its URL, a file by its path.
    static func name(_ item: QueuePlayer.Item) -> String {
        item.url.isFileURL ? item.url.path : item.url.absoluteString
    }
}
