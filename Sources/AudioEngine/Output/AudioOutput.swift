/// One playback stream the render thread writes the mix to: an ALSA PCM (``PCMOutput``) or a
/// stream on a PulseAudio-protocol sound server (``PulseOutput``).
///
/// `write`, `delay`, `drainAndPrepare` and `failure` run on the render thread; the output is
/// opened on the thread that starts the engine, so that errors reach the caller.
protocol AudioOutput: AnyObject, Sendable {
    /// The device's or server's name, for messages (“default”, “pulseaudio 16.1”).
    var name: String { get }
    /// Which kind of output this is.
    var kind: AudioEngine.OutputKind { get }
    /// What the engine asked for when it opened the output (the granted values are
    /// `sampleRate`, `periodFrames` and `bufferFrames`): the render thread reopens the
    /// output when the engine asks for something else.
    var request: AudioEngine.OutputRequest { get }
    /// The rate the output granted.
    var sampleRate: Int { get }
    /// The rate of the sink a sound server plays the stream on, as the server said when the
    /// output opened (it resamples the stream when the two differ); nil on ALSA or when the
    /// server did not say.
    var sinkSampleRate: Int? { get }
    /// Frames the render thread mixes per write.
    var periodFrames: Int { get }
    /// Frames buffered between the mix and the listener when the buffer is full.
    var bufferFrames: Int { get }
    /// Writes all `frames` (interleaved stereo Float32), blocking while the buffer is full.
    func write(_ samples: UnsafePointer<Float>, frames: Int) -> OutputWriteResult
    /// Frames written but not yet heard, from the device's or server's timing; nil when unknown.
    func delay() -> Int?
    /// ``delay()`` right after a ``write(_:frames:)``, on the render thread: an output that
    /// reads it as the write ends gives that reading.
    func delayAfterWrite() -> Int?
    /// Whether the device or server says it plays the stream, after its last write. A sink
    /// may take a new stream's first frames and not play them for seconds (a null sink
    /// sleeping out the block it began before the stream came, a Bluetooth sink waking):
    /// until it says so, no start counts as heard.
    func sinkPlays() -> Bool
    /// Waits until everything written has been heard; the next write starts the stream again.
    /// Returns false when ``interruptWrite()`` broke the wait off (a pause: the flush comes
    /// next, and the stream is not drained).
    func drainAndPrepare() -> Bool
    /// Drops what is buffered and not yet played, as far as the device or server can
    /// (a sink's own rendered block may still play), and makes the stream ready to start
    /// again on the next write. Returns the frames that still play after the call.
    func flush() -> Int
    /// Drops what the server holds and has not played, while the stream keeps running: the
    /// next write goes where playing has reached (the sink's own rendered part still plays
    /// before it). Returns how many of the frames written will not be played, or nil when
    /// the output cannot say (nothing is then dropped).
    func flushUnplayed() -> Int?
    /// Frames a flush is expected to leave playing (a sink's rendered block), from the
    /// latest timing; render thread.
    var expectedFlushRemainder: Int { get }
    /// From an app thread: makes a `write` that waits for room return now (what it had not
    /// written is dropped), because a flush follows. Outputs that cannot do this ignore it.
    func interruptWrite()
    /// Whether the output failed while idle (the server went away, the stream was killed),
    /// and why. Checked by the render thread when it wakes.
    func failure() -> OutputWriteResult?
    /// Applies a new identity (for example `media.name`) to the open stream, if the output can.
    func update(identity: AudioEngine.StreamIdentity)
    /// Stops at once, dropping what is buffered, and closes the stream.
    func close()
    /// Render thread, after a write: from now on the output's own thread mixes and writes
    /// (through `puller`) whenever the server asks for more, so that one wakeup serves each
    /// request instead of two (the output's thread, then the render thread). Returns false
    /// when the output cannot (ALSA) or stopped pulling at once (nothing plays, a write
    /// failed): the render thread goes on itself.
    func startPulling(_ puller: any OutputPuller) -> Bool
    /// Render thread: stops pulling and returns once no pull is under way; afterwards the
    /// render thread owns its state again.
    func stopPulling()
}

extension AudioOutput {
    /// A device that is written to plays (ALSA starts the stream at its threshold).
    func sinkPlays() -> Bool { true }
    func delayAfterWrite() -> Int? { delay() }
    func flushUnplayed() -> Int? { nil }
    func startPulling(_ puller: any OutputPuller) -> Bool { false }
    func stopPulling() {}
}

/// What an output's own thread renders through while it pulls (see
/// ``AudioOutput/startPulling(_:)``). Called under the output's lock, never at the same time
/// as the render thread's own work: no locks, no allocation, no waiting.
protocol OutputPuller: AnyObject {
    /// Mixes the next `frames` (at most the mix buffer's capacity) and returns the
    /// interleaved stereo samples and how many frames they are, or nil when the render
    /// thread must take over (nothing plays, or the engine is gone): the output then stops
    /// pulling and wakes the render thread.
    func mix(maxFrames: Int) -> (samples: UnsafePointer<Float>, frames: Int)?
    /// After a mix was written: `frames` written, the output's delay (frames written but not
    /// yet heard) when known, whether the sink plays the stream (``AudioOutput/sinkPlays()``),
    /// whether an underrun happened since the last write, and the frames a flush would leave
    /// playing.
    func wrote(frames: Int, delay: Int?, sinkPlays: Bool, underran: Bool, flushRemainder: Int)
    /// Whether the stream has started and its timing has not yet shown the sink playing:
    /// the output then asks for timing every few milliseconds (see ``wantsTiming``).
    var awaitsPlayingSink: Bool { get }
    /// Whether the output passes on timing that comes between writes, and asks for more
    /// (10, 20, 40 … ms apart): the sink is yet to be heard playing, or a restart has just
    /// flushed what it held. A long buffer's next request may be half a second away.
    var wantsTiming: Bool { get }
    /// Timing came between writes: the output's delay now, and whether the sink plays.
    func timed(delay: Int, sinkPlays: Bool)
}

/// The result of one write to an ``AudioOutput``.
enum OutputWriteResult: Sendable {
    case written
    /// An underrun (or suspend) happened and the stream continued.
    case recovered
    /// The output failed and cannot continue (for example the device was unplugged).
    case failed(String)
    /// `interruptWrite` cut the write short: the first `written` frames were written and the
    /// rest were not (a flush follows).
    case interrupted(written: Int)
    /// The sound server went away (it exited or restarted): every stream on it is gone.
    case serverLost(String)
}
