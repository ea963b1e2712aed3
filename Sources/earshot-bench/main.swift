// earshot-bench: the in-process audio measurements behind bench/audio.
//
//   earshot-bench decode FILE [--repeat N]
//       Opens FILE with AudioFile and decodes all of it to memory (readAll); one line per repeat:
//       `decode frames=… seconds=… fps=… cpu=…` (seconds = open + readAll, CLOCK_MONOTONIC).
//   earshot-bench open FILE [--repeat N]
//       Opens and closes FILE with AudioFile 2N times, alternately without and with reading its
//       tags: `open tags=0|1 seconds=…` (what a system sound pays, and what a player showing tags pays).
//   earshot-bench players FILE… [--count N] [--seconds S] [--volume V] [--prepare 0|1] [--prepare-wait S]
//       N AudioPlayers (files cycled) play at once for S seconds, after prepareToPlay() and a wait
//       (unless --prepare 0); prints the process CPU over the playing window, the engine's underruns,
//       the voices' dropouts (in the first second and after) and each engine thread's CPU.
//   earshot-bench latency FILE [--cycles K] [--cold-gap S] [--warm-gap S]
//       Plays FILE as a SystemSound and as a prepared AudioPlayer, alternately, with the device
//       released (cold: after more than the engine's idle release) and open (warm); prints
//       `play kind=… state=… t=MONOTONIC …` with the CLOCK_MONOTONIC time taken just before each
//       play() call, flushed at once.
//   earshot-bench record-latency FOLDER [--repeat N]
//       record() -> the first frame in the file, for a prepared recorder and for one that opens
//       its file and input in record() (the default input); `record-latency prepared=0|1 seconds=…`.
//   earshot-bench stream-start URL [--repeat N]
//       Opens URL (http/https) as a NetworkStream and reads until its first decoded frame:
//       `stream-start seconds=…` per repeat (for bench/stream).
//
// Every line is `key=value` pairs after a leading word, for bench/audio to parse.

import Earshot
import Foundation

#if canImport(Glibc)
import Glibc
#endif

var arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else { usage(exitCode: 2) }
arguments.removeFirst()

switch command {
case "decode": runDecode(Options(arguments))
case "open": runOpen(Options(arguments))
case "players": runPlayers(Options(arguments))
case "latency": runLatency(Options(arguments))
case "record-latency": runRecordLatency(Options(arguments))
case "stream-start": runStreamStart(Options(arguments))
case "-h", "--help", "help": usage(exitCode: 0)
default: usage(exitCode: 2)
}
exit(0)
