import DBus
import Foundation
import Testing
import TestSupport

/// Files and faults the command line must survive: names that are not UTF-8 or that
/// hold terminal escapes, files that cannot play or are cut short, a huge "system
/// sound", and the bus going away under the daemon and publish (under play: in
/// ``SessionPlayerFaultTests``).
///
/// The file tests play to ALSA's `null` device: it takes samples as fast as they come
/// (no sound server, no pacing), so a file plays out in a moment; these tests are about
/// what the tool says and its exit status, not about timing.
///
/// One test at a time: each starts processes, and the parallel pass also runs tests that
/// time a player's position, which a burst of start-ups at once can starve.
@Suite("faults: the command line", .serialized)
struct CLIFaultTests {
    /// Runs earshot with `arguments` through `/bin/sh`, so that an argument may carry
    /// bytes that are not UTF-8 (Foundation's `Process` takes Strings): `$F` in the
    /// script is the file made for the test. Without a session bus (play runs without).
    func shell(_ script: String, file: String? = nil, timeout: Double = 20) async throws -> CommandResult {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/earshot-cli-faults"
        environment["E"] = Paths.earshot
        environment["F"] = file ?? ""
        environment["D"] = try TestSignals.directory
        return try await run("/bin/sh", ["-c", script], environment: environment, timeout: timeout)
    }

    func sine(_ duration: Double = 0.5, sampleRate: Int = 48000) throws -> String {
        try TestSignals.sine(frequency: 440, duration: duration, sampleRate: sampleRate)
    }

    /// Whether `text` holds a character that acts on a terminal (a C0 control other than
    /// the newline, DEL, a C1 control) or a replacement character (bytes that were not UTF-8).
    func hasRawControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) || $0 == "\u{FFFD}" }
    }

    // MARK: File names

    @Test("a file whose name is not UTF-8 plays, by the bytes given, with play and sound")
    func nonUTF8Name() async throws {
        let played = try await shell(#"""
            f="$D/$(printf 'bad-\377\376-play.wav')"; cp "$F" "$f" && exec "$E" play --device null "$f"
            """#, file: try sine())
        #expect(played.status == 0, "\(played.stderr)")
        #expect(played.stdout.contains("played 1 item"), "\(played.stdout)")
        #expect(!played.stderr.contains("no such file"), "\(played.stderr)")

        let sounded = try await shell(#"""
            f="$D/$(printf 'bad-\377\376-sound.wav')"; cp "$F" "$f" && exec "$E" sound --device null "$f"
            """#, file: try sine())
        #expect(sounded.status == 0, "\(sounded.stderr)")
        #expect(sounded.stdout.contains(#"bad-\xFF\xFE-sound.wav"#), "the name is not printed escaped: \(sounded.stdout)")
        #expect(!hasRawControl(sounded.stdout), "\(sounded.stdout.debugDescription)")
    }

    @Test("a missing file whose name is not UTF-8 is named escaped, with exit status 1")
    func nonUTF8Missing() async throws {
        for command in ["play", "sound"] {
            let result = try await shell(#"exec "$E" "# + command + #" --device null "$D/$(printf 'gone-\377\033[2J.wav')""#)
            #expect(result.status == 1, "\(command): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains(#"gone-\xFF\x1B[2J.wav: no such file"#), "\(command): \(result.stderr)")
            #expect(!hasRawControl(result.stderr), "\(command): \(result.stderr.debugDescription)")
        }
    }

    @Test("a file name with terminal escapes is printed escaped by play, on stdout and stderr")
    func escapedName() async throws {
        let result = try await shell(#"""
            f="$D/$(printf 'esc-\033]0;owned\007\302\233-name.wav')"; cp "$F" "$f" && exec "$E" play --device null "$f" "$f-missing"
            """#, file: try sine())
        #expect(result.status == 1, "the missing second file: \(result.stderr)")
        #expect(result.stderr.contains(#"esc-\x1B]0;owned\x07\u{9B}-name.wav-missing"#), "\(result.stderr)")
        #expect(!hasRawControl(result.stdout) && !hasRawControl(result.stderr), "\(result.stdout.debugDescription) \(result.stderr.debugDescription)")
    }

    // MARK: Files that cannot play

    @Test("a 1 Hz WAV: play exits 1 naming the file and why; sound too")
    func oneHertz() async throws {
        let file = try TestSignals.writeWAV([Float](repeating: 0.5, count: 4), sampleRate: 1, channels: 1, name: "one-hertz")
        let played = try await shell(#"exec "$E" play --device null "$F""#, file: file)
        #expect(played.status == 1, "\(played.stdout) \(played.stderr)")
        #expect(played.stderr.contains(file) && played.stderr.contains("1.0 Hz"), "\(played.stderr)")
        #expect(played.stdout.contains("played 0 items"), "\(played.stdout)")

        let sounded = try await shell(#"exec "$E" sound --device null "$F""#, file: file)
        #expect(sounded.status == 1)
        #expect(sounded.stderr.contains(file) && sounded.stderr.contains("1.0 Hz"), "\(sounded.stderr)")
    }

    @Test("a good file then one that cannot play: the good one plays, the exit status is 1")
    func mixedQueue() async throws {
        let bad = try TestSignals.writeWAV([Float](repeating: 0.5, count: 4), sampleRate: 1, channels: 1, name: "one-hertz")
        let result = try await shell(#"exec "$E" play --device null "$F" "$0""#.replacingOccurrences(of: "$0", with: bad), file: try sine())
        #expect(result.status == 1)
        #expect(result.stdout.contains("played 1 item in"), "\(result.stdout)")
        #expect(result.stderr.contains("1 file could not be played: \(bad)"), "\(result.stderr)")
    }

    @Test("a WAV cut short plays up to the cut, and the note says where, not that decoding stopped early")
    func truncated() async throws {
        let whole = try sine(3)
        let cut = whole + "-cut.wav"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        // 44-byte header, then 1.5 s of 48 kHz stereo 16-bit samples.
        try bytes.prefix(44 + 192_000 * 3 / 2).write(to: URL(fileURLWithPath: cut))
        let result = try await shell(#"exec "$E" play --device null "$F""#, file: cut)
        #expect(result.status == 0, "it played up to the cut: \(result.stderr)")
        #expect(result.stderr.contains("\(cut): truncated at 1.5 s; played up to there"), "\(result.stderr)")
        #expect(!result.stderr.contains("decoding stopped early") && !result.stderr.contains("skipped"), "\(result.stderr)")
        #expect(result.stdout.contains("played 1 item"), "\(result.stdout)")
    }

    // MARK: System sounds are short

    @Test("a 256 MiB sparse WAV as a system sound: refused at once, naming the file, its length and the limit, RSS bounded")
    func hugeSystemSound() async throws {
        let path = try TestSignals.directory + "/huge-sparse.wav"
        let dataBytes = 256 << 20
        var header = Data("RIFF".utf8)
        func put32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { header.append(contentsOf: $0) } }
        func put16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { header.append(contentsOf: $0) } }
        put32(36 + dataBytes)
        header.append(contentsOf: Array("WAVEfmt ".utf8))
        put32(16); put16(1); put16(2); put32(48000); put32(192_000); put16(4); put16(16)
        header.append(contentsOf: Array("data".utf8))
        put32(dataBytes)
        try header.write(to: URL(fileURLWithPath: path))
        let truncate = try await run("truncate", ["-s", "\(44 + dataBytes)", path])
        #expect(truncate.status == 0)
        defer { try? FileManager.default.removeItem(atPath: path) }

        // python3 reports the child's peak RSS (ru_maxrss, KiB) once it exits.
        let measure = """
            import resource, subprocess, sys
            r = subprocess.run(sys.argv[1:])
            sys.stderr.write("maxrss=%d\\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
            sys.exit(r.returncode)
            """
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/earshot-cli-faults"
        let result = try await run("python3", ["-c", measure, Paths.earshot, "sound", "--device", "null", path],
                                   environment: environment, timeout: 60)
        #expect(result.status == 1, "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("cannot use \(path) as a system sound: it lasts 1398.1 s, 512.0 MiB decoded, past the 16.0 MiB limit"),
                "\(result.stderr)")
        let rss = try #require(result.stderr.firstMatch(of: /maxrss=(\d+)/).flatMap { Int($0.1) }, "\(result.stderr)")
        print("earshot sound of a 256 MiB WAV: peak RSS \(rss / 1024) MiB")
        #expect(rss < 150 * 1024, "peak RSS \(rss / 1024) MiB: the file was decoded")
    }

    @Test("earshot remote seek by more seconds than an int64 of microseconds holds is a usage error, not a trap")
    func hugeSeek() async throws {
        for seconds in ["1e300", "-9.3e12"] {
            let result = try await shell(#"exec "$E" remote seek "# + seconds)
            #expect(result.status == 64, "\(seconds): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("seek takes at most 9000000000000 seconds either way, not \(seconds)"), "\(result.stderr)")
        }
    }

    // The arbiter refuses app names with control characters (C0, C1, ESC: see
    // HostileClientTests), so what reaches `earshot status` through it is a name with a
    // format character that reorders the terminal's text (U+202E, right-to-left override),
    // which the arbiter allows and status must still show escaped.
    @Test("an app name with a bidirectional override, registered by another client, is printed escaped by earshot status")
    func statusEscaped() async throws {
        let bus = try PrivateBus()
        let daemon = try Child(Paths.earshot, ["daemon", "--bus", bus.address])
        try await daemon.waitForOutput("serving org.earshot.AudioSession as :")
        let client = try DBusConnection(.address(bus.address))
        _ = try await client.call(destination: "org.earshot.AudioSession", path: "/org/earshot/AudioSession",
                                  interface: "org.earshot.AudioSession", method: "Register",
                                  [.string("evil\u{202E}lanimret"), .vardict(["category": .string("playback")])])
        let status = try await run(Paths.earshot, ["status", "--bus", bus.address])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains(#"evil\u{202E}lanimret"#), "\(status.stdout)")
        #expect(!status.stdout.unicodeScalars.contains("\u{202E}"), "\(status.stdout.debugDescription)")
        #expect(!hasRawControl(status.stdout), "\(status.stdout.debugDescription)")
        daemon.kill(SIGTERM)
        _ = try await daemon.wait(timeout: 5)
        withExtendedLifetime(client) {}
    }

    /// A `--trace` whose standard error stops being read (a terminal stopped with Ctrl-S, a
    /// pipe nobody drains) while other processes send events: the arbiter goes on answering,
    /// the lines waiting for the pipe are bounded, and what could not wait is counted and
    /// said when the pipe moves again.
    @Test("earshot daemon --trace with standard error not read: the arbiter answers, the backlog is bounded, the dropped lines are counted")
    func traceNotRead() async throws {
        let bus = try PrivateBus()
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: Paths.earshot)
        daemon.arguments = ["daemon", "--trace", "--bus", bus.address]
        // No sound server: the count of events below is this client's alone. (In a parallel
        // pass the test process's environment can name the shared test server, whose
        // streams from other tests came as two more events.)
        var environment = ProcessInfo.processInfo.environment
        environment["PULSE_SERVER"] = "unix:/nonexistent/earshot-trace-test"
        daemon.environment = environment
        let errors = Pipe()
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = errors  // not read until the flood is over
        try launch(daemon)
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        let client = try DBusConnection(.address(bus.address))
        defer { client.close() }
        try await eventually("the daemon to serve") { try await client.nameOwner("org.earshot.AudioSession") != nil }
        @Sendable func arbiter(_ method: String, _ arguments: [DBusValue], reply: Bool = true) async throws {
            let message = try DBusMessage.methodCall(destination: "org.earshot.AudioSession", path: "/org/earshot/AudioSession",
                                                     interface: "org.earshot.AudioSession", method: method, arguments: arguments)
            if reply {
                _ = try await client.call(message, timeout: .seconds(30))
            } else {
                message.setNoReply()
                try client.send(message)
            }
        }
        try await arbiter("Register", [.string("flood"), .vardict(["category": .string("playback")])])
        // Each SetActive is one event of the policy, so one line: far more than the pipe
        // (64 KiB) and the backlog (1000 lines) hold. The last one's reply says the arbiter
        // has applied them all.
        let flood = 3000
        for index in 1...flood {
            try await arbiter("SetActive", [.boolean(index % 2 == 1), .boolean(false)], reply: index == flood)
        }
        // Standard error still unread: the arbiter answers at once all the same.
        let asked = ContinuousClock.now
        _ = try await client.call(destination: "org.earshot.AudioSession", path: "/org/earshot/AudioSession",
                                  interface: "org.freedesktop.DBus.Properties", method: "GetAll",
                                  [.string("org.earshot.AudioSession")], timeout: .seconds(5))
        let answered = ContinuousClock.now - asked
        #expect(answered < .milliseconds(500), "GetAll took \(answered) while standard error was not read")

        // The pipe moves again; the next line queued after that says how many were dropped.
        let text = Locked("")
        let reader = Thread {
            while true {
                let data = errors.fileHandleForReading.availableData
                if data.isEmpty { return }
                text.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
        }
        reader.start()
        var extra = 0
        let deadline = ContinuousClock.now + .seconds(20)
        while !text.value.contains("dropped: standard error was not read") {
            guard ContinuousClock.now < deadline else { throw TestFailure("the trace never said that lines were dropped") }
            extra += 1
            try await arbiter("SetActive", [.boolean(extra % 2 == 0), .boolean(false)])
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(200))
        kill(daemon.processIdentifier, SIGKILL)
        let lines = text.value.split(separator: "\n")
        let traced = lines.filter { $0.hasPrefix("+") }.count
        let notices = lines.filter { $0.contains("dropped: standard error was not read") }
        let dropped = notices.compactMap { $0.dropFirst().split(separator: " ").first.flatMap { Int($0) } }.reduce(0, +)
        #expect(notices.count == 1, "\(notices)")
        // Every event is either a line or counted: the registration (two events: the
        // session, then its category), the flood, the prompts.
        let events = 2 + flood + extra
        let others = lines.filter { $0.hasPrefix("+") && !$0.contains(client.uniqueName) }
        #expect(traced + dropped == events, "\(traced) lines, \(dropped) dropped, of \(events) events; lines not about the client: \(others)")
        // Kept while the pipe was stopped, that is written before the notice: what the pipe
        // held (64 KiB, with a line being written into it), then the backlog of 1000.
        let before = lines.prefix { !$0.contains("dropped: standard error was not read") }
        let inPipe = before.dropLast(1000).reduce(0) { $0 + $1.utf8.count + 1 }
        let longest = before.map(\.utf8.count).max() ?? 0
        #expect(before.count > 1000 && inPipe <= 65536 + longest, "\(before.count) lines before the notice, \(inPipe) bytes beyond the backlog")
    }

    @Test("earshot status --follow reprints for the arbiter's PropertiesChanged, not for another client's")
    func statusFollowSpoofed() async throws {
        let bus = try PrivateBus()
        let daemon = try Child(Paths.earshot, ["daemon", "--bus", bus.address])
        try await daemon.waitForOutput("serving org.earshot.AudioSession as :")
        let follow = try Child(Paths.earshot, ["status", "--follow", "--bus", bus.address])
        @Sendable func tables() -> Int { follow.stdout.components(separatedBy: "SESSION ").count - 1 }
        try await eventually("the first table") { tables() == 1 }
        let spoofer = try DBusConnection(.address(bus.address))
        for _ in 0..<5 {
            try spoofer.send(try DBusMessage.signal(path: "/org/earshot/AudioSession", interface: StandardInterface.properties,
                                                    name: "PropertiesChanged",
                                                    arguments: [.string("org.earshot.AudioSession"), .vardict([:]), .strings(["Sessions"])]))
        }
        await spoofer.flush()
        try await Task.sleep(for: .milliseconds(500))
        #expect(tables() == 1, "a spoofed signal made it print again: \(follow.stdout)")
        // A real change (a session registers) is followed.
        let client = try DBusConnection(.address(bus.address))
        _ = try await client.call(destination: "org.earshot.AudioSession", path: "/org/earshot/AudioSession",
                                  interface: "org.earshot.AudioSession", method: "Register",
                                  [.string("follower"), .vardict(["category": .string("playback")])])
        try await eventually("a second table") { tables() >= 2 }
        follow.kill(SIGINT)
        daemon.kill(SIGTERM)
        _ = try? await follow.wait(timeout: 5)
        _ = try await daemon.wait(timeout: 5)
        withExtendedLifetime(client) {}
    }

    // MARK: The bus goes away

    @Test("earshot daemon exits 1 naming the bus when the bus goes away")
    func daemonLosesBus() async throws {
        var bus: PrivateBus? = try PrivateBus()
        let address = bus!.address
        let process = try Child(Paths.earshot, ["daemon", "--bus", address])
        try await process.waitForOutput("serving org.earshot.AudioSession as :")
        withExtendedLifetime(bus) {}
        bus = nil  // stops dbus-daemon
        let status = try await process.wait(timeout: 5)
        #expect(status == 1, "a service manager restarts only on failure: \(process.stderr)")
        #expect(process.stderr.contains("lost the connection to the bus at \(address)"), "\(process.stderr)")
        #expect(process.stderr.contains("org.earshot.AudioSession is no longer served"), "\(process.stderr)")
    }

    @Test("earshot daemon still exits 0 on SIGTERM")
    func daemonTerminated() async throws {
        let bus = try PrivateBus()
        let process = try Child(Paths.earshot, ["daemon", "--bus", bus.address])
        try await process.waitForOutput("serving org.earshot.AudioSession as :")
        process.kill(SIGTERM)
        #expect(try await process.wait(timeout: 5) == 0, "\(process.stderr)")
        #expect(process.stderr.isEmpty, "\(process.stderr)")
    }

    @Test("earshot publish names the bus it lost")
    func publishLosesBus() async throws {
        var bus: PrivateBus? = try PrivateBus()
        let address = bus!.address
        let process = try Child(Paths.earshot, ["publish", "--name", "publishLosesBus", "--bus", address])
        try await process.waitForOutput("published org.mpris.MediaPlayer2.publishLosesBus as :")
        withExtendedLifetime(bus) {}
        bus = nil
        #expect(try await process.wait(timeout: 5) == 1)
        #expect(process.stderr.contains("lost the connection to the bus at \(address)"), "\(process.stderr)")
    }
}
