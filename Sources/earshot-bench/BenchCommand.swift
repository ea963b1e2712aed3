// earshot-bench: the in-process audio measurements behind the benchmarks in bench/.
// Every line it prints is `key=value` pairs after a leading word, for the benchmark to parse.

import ArgumentParser
import Earshot
import AudioEngine
import Foundation
import Platform

@main
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "earshot-bench",
        abstract: "In-process audio measurements for Earshot's benchmarks.",
        discussion: """
            earshot-bench measures what only a process using Earshot itself can see: the time \
            from a play() or record() call to its first frame, the CPU of many players at once, \
            decoding speed. The benchmarks in bench/ (audio, decode, first-frame, record, stream) \
            run it against a private sound server, compare its figures with the stock tools' and \
            print both; it is seldom run by hand.

            Each subcommand prints one line per measurement, a leading word and key=value pairs \
            (times in seconds from CLOCK_MONOTONIC), flushed at once, so that a benchmark reading \
            its standard output through a pipe sees each line as it happens.

            Playback goes to the sound server (or ALSA's device "default", or \
            EARSHOT_AUDIO_DEVICE). Errors go to standard error; the exit status is 0 on \
            success, 1 when a measurement fails and 64 on a usage error.
            """,
        subcommands: [Decode.self, Open.self, Players.self, Latency.self, RecordLatency.self, Encode.self, StreamStart.self]
    )
}

/// A `--repeat`-style count: a positive integer.
private func positive(_ value: Int, _ name: String) throws {
    guard value > 0 else { throw ValidationError("\(name) takes a positive integer, not \(value)") }
}

/// A duration or level: a finite number ≥ 0.
private func nonNegative(_ value: Double, _ name: String) throws {
    guard value.isFinite, value >= 0 else { throw ValidationError("\(name) takes a number ≥ 0, not \(value)") }
}

extension BenchCommand {
    struct Decode: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decode a whole file to memory.",
            discussion: """
                Opens FILE with AudioFile and decodes all of it to memory (readAll). Prints one \
                line per repeat: decode frames=… seconds=… fps=… cpu=… (seconds: open and \
                readAll; cpu: the process's user and system seconds over the same span).
                """
        )
        @Argument(help: "The audio file to decode.") var file: String
        @Option(help: ArgumentHelp("How many times to decode it.", valueName: "n")) var `repeat` = 1

        func validate() throws { try positive(`repeat`, "--repeat") }
        func run() { runDecode(path: file, repeats: `repeat`) }
    }

    struct Open: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Open a file, without and with reading its tags.",
            discussion: """
                Opens and closes FILE with AudioFile 2×N times, alternately without and with \
                reading its tags: open tags=0|1 seconds=… per open (what a system sound pays, \
                and what a player showing tags pays).
                """
        )
        @Argument(help: "The audio file to open.") var file: String
        @Option(help: ArgumentHelp("Pairs of opens.", valueName: "n")) var `repeat` = 50

        func validate() throws { try positive(`repeat`, "--repeat") }
        func run() { runOpen(path: file, repeats: `repeat`) }
    }

    struct Players: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Play many AudioPlayers at once and report their CPU.",
            discussion: """
                Makes N AudioPlayers (FILE… cycled), prepares them (prepareToPlay, then waits \
                --prepare-wait) unless --prepare 0, and plays them all at once for --seconds. \
                Prints the process's CPU over the playing window, the engine's underruns, the \
                voices' dropouts (in the first second and after) and each engine thread's CPU.
                """
        )
        @Argument(help: "The audio files, cycled over the players.") var files: [String]
        @Option(help: ArgumentHelp("How many players.", valueName: "n")) var count = 32
        @Option(help: ArgumentHelp("How long they play together.", valueName: "seconds")) var seconds = 10.0
        @Option(help: ArgumentHelp("Each player's volume (default 1/N).", valueName: "v")) var volume: Double?
        @Option(help: ArgumentHelp("1: prepareToPlay() before play(); 0: play() unprepared.", valueName: "0|1"))
        var prepare = 1
        @Option(help: ArgumentHelp("Seconds to wait after preparing.", valueName: "seconds")) var prepareWait = 1.5

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("players takes at least one FILE") }
            try positive(count, "--count")
            try nonNegative(seconds, "--seconds")
            if let volume { try nonNegative(volume, "--volume") }
            guard prepare == 0 || prepare == 1 else { throw ValidationError("--prepare takes 0 or 1, not \(prepare)") }
            try nonNegative(prepareWait, "--prepare-wait")
        }
        func run() {
            runPlayers(files: files, count: count, seconds: seconds, volume: volume,
                       prepare: prepare == 1, prepareWait: prepareWait)
        }
    }

    struct Latency: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Play a sound repeatedly, cold and warm, timing each play() call.",
            discussion: """
                Plays FILE as a SystemSound and as a prepared AudioPlayer, alternately, with the \
                device released (cold: after more than the engine's idle release, then \
                --cold-gap) and open (warm: --warm-gap after the last sound). Prints \
                play kind=… state=… t=… with the CLOCK_MONOTONIC time taken just before each \
                play() call; the benchmark capturing the sink finds the first non-silent frame \
                after it.
                """
        )
        @Argument(help: "The sound to play (short: a 0.25 s beep in bench/audio).") var file: String
        @Option(help: ArgumentHelp("Cold and warm plays of each kind.", valueName: "k")) var cycles = 3
        @Option(help: ArgumentHelp("Seconds after the device's release before a cold play.", valueName: "seconds"))
        var coldGap = 0.3
        @Option(help: ArgumentHelp("Seconds between warm plays.", valueName: "seconds")) var warmGap = 0.4

        func validate() throws {
            try positive(cycles, "--cycles")
            try nonNegative(coldGap, "--cold-gap")
            try nonNegative(warmGap, "--warm-gap")
        }
        func run() { runLatency(path: file, cycles: cycles, warmGap: warmGap, coldGap: coldGap) }
    }

    struct RecordLatency: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "record-latency",
            abstract: "Time record() to the first frame in the file.",
            discussion: """
                Records from the default input into files in FOLDER, with a prepared recorder \
                (input open and capturing) and with one that opens its file and input in \
                record(). Prints record-latency prepared=0|1 seconds=… per run.
                """
        )
        @Argument(help: "Where the recordings go.") var folder: String
        @Option(help: ArgumentHelp("Runs of each kind.", valueName: "n")) var `repeat` = 5

        func validate() throws { try positive(`repeat`, "--repeat") }
        func run() { runRecordLatency(folder: folder, repeats: `repeat`) }
    }

    struct Encode: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "encode",
            abstract: "Encode a file as a recording would (AAC in .m4a by default).",
            discussion: """
                Decodes INPUT and writes it into OUTPUT through the recorder's own writer (FFmpeg's \
                aac encoder for .m4a, libsndfile for the rest), at INPUT's rate and channels, \
                offline: the encoding half of a recording, for bench/record to set against \
                `ffmpeg -i INPUT -c:a aac OUTPUT`. Prints encode frames=… seconds=… (wall time).
                """
        )
        @Argument(help: "The file to encode.") var input: String
        @Argument(help: "The file to write; its extension chooses the type.") var output: String
        @Option(name: .customLong("bit-rate"), help: ArgumentHelp("AAC's bit rate (default 64000 per channel).", valueName: "BPS"))
        var bitRate: Int?

        func run() {
            let ext = (output as NSString).pathExtension
            guard let type = RecordingFormat.FileType(fileExtension: ext) else { fail("encode: no file type for .\(ext)") }
            do {
                let source = try AudioFile(contentsOf: input)
                let format = RecordingFormat(fileType: type, sampleRate: source.format.sampleRate, channels: source.format.channelCount,
                                             bitRate: bitRate)
                let start = MonotonicClock.seconds()
                let frames = try format.encode(source, to: output)
                emit("encode frames=\(frames) seconds=\(MonotonicClock.seconds() - start)")
            } catch {
                fail("encode: \(error)")
            }
        }
    }

    struct StreamStart: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stream-start",
            abstract: "Time a network stream's open to its first decoded frame.",
            discussion: """
                Opens URL (http or https) as a NetworkStream and reads until its first decoded \
                frame. Prints stream-start seconds=… per repeat (for bench/stream).
                """
        )
        @Argument(help: "The stream's URL.") var url: String
        @Option(help: ArgumentHelp("How many times to open it.", valueName: "n")) var `repeat` = 1

        func validate() throws { try positive(`repeat`, "--repeat") }
        func run() { runStreamStart(url: url, repeats: `repeat`) }
    }
}
