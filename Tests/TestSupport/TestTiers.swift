public import Testing

/// The tiers of the test suites: each suite that does not run in the parallel pass of
/// everything else declares its tier with `.tags(...)` on its `@Suite` (on the attribute's
/// first line), and `scripts/test` runs each tier in the passes its table gives it (which
/// server, in parallel or one test at a time). A suite without one of these tags runs in the
/// parallel pass of the tests that do not play in real time.
extension Tag {
    /// Suites that play or record in the test process on the shared sound server: one test
    /// at a time, on PulseAudio at 48 kHz.
    @Tag public static var inProcessAudio: Self
    /// The app-level players' suites (AudioPlayer, QueuePlayer, SystemSound): one test at a
    /// time, on each of the three servers.
    @Tag public static var appAudio: Self
    /// Multi-process audio-session suites (each test with its own bus, sound server and
    /// players): in parallel, on each of the three servers.
    @Tag public static var sessions: Self
    /// Session suites that start a PipeWire of their own whatever the server: once.
    @Tag public static var ownPipeWire: Self
    /// `earshot play` at every sample rate and channel count: by itself, on each server.
    @Tag public static var sampleRates: Self
    /// The wakeups of idle Earshot processes, counted: by themselves.
    @Tag public static var idleWakeups: Self
    /// The arbiter's latency under a burst of MPRIS calls, timed: alone, last of the sessions.
    @Tag public static var arbiterLatency: Self
    /// The desktops' own media keys and widgets, headless: one test at a time.
    @Tag public static var desktop: Self
}
