internal import CPulse
internal import PulseSupport
import Platform
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One playback stream on a PulseAudio-protocol sound server (PulseAudio, or PipeWire through
/// pipewire-pulse), through libpulse: a context of its own (PulseSupport's `PulseContext`)
/// on a `pa_threaded_mainloop` of its own (`PulseMainloop`).
///
/// The render thread writes under the mainloop's lock and, when the server's buffer is full,
/// sleeps in `pa_threaded_mainloop_wait` until the server's write request (or a state
/// change) signals it: no polling. The clock comes from the server's timing
/// (`pa_stream_get_latency`, interpolated, sink latency included); on pipewire-pulse, whose
/// timing moves in graph cycles, from its snapshots fitted across cycles (``GraphCycleClock``).
///
/// While a sound plays, the render thread hands the mixing to libpulse's thread
/// (`startPulling`): the write request then mixes and writes in the callback, as paplay and
/// pacat write, instead of waking the render thread, whose write would wake libpulse's
/// thread again to send it (two threads woken per request; measured 374 + 69 wakeups/s).
///
/// Opened on the thread that starts the engine (so that "no server" reaches the caller);
/// afterwards `write`, `delay`, `drainAndPrepare`, `failure` and `close` run on the render
/// thread and `update(identity:)` on an app thread, each under the mainloop's lock; while it
/// pulls, `pullLocked` runs on libpulse's thread, in the write callback, with the lock held.
/// `@unchecked Sendable` for that reason: every use of the libpulse objects, and of the
/// mutable members (`puller`, `restarting`, `underflowsSeen`, `sinkLatency`, `startWatch`, and the
/// graph-cycle clock's `graphTiming`), holds the lock.
final class PulseOutput: AudioOutput, @unchecked Sendable {
    /// Why a server could not be used.
    enum OpenError: Error {
        /// No server answered (nothing listens, or the connection was refused or timed out):
        /// the engine may fall back to ALSA.
        case noServer(String)
        /// A server answered but the stream could not be made.
        case failed(server: String, reason: String)
    }

    /// What libpulse's callbacks reach (their userdata): the mainloop to signal, the engine's
    /// render semaphore to post when the stream or server fails while the render thread
    /// sleeps, and a timeout flag. Kept alive by the output until every callback is cleared.
    /// `@unchecked Sendable` only for the `mainloop` pointer: libpulse's threaded mainloop
    /// may be signalled from any thread; every other member is Sendable.
    final class Signals: @unchecked Sendable {
        let mainloop: OpaquePointer
        let wake: Semaphore
        /// Set by `interruptWrite`: the render thread's write returns at once.
        let interrupted = Atomic<Bool>(false)
        /// Underflows the server reported that were dropouts (see ``countUnderflow(of:)``).
        let underflows = Atomic<Int>(0)
        /// Where (the stream's byte index) the last flush left nothing to play, or −1.
        let flushedAt = Atomic<Int64>(-1)
        /// Where (the stream's write index, in bytes) the output last saw by itself that the
        /// stream had run dry (``PulseOutput/noteDropoutIfRanDry()``), or −1: the server's
        /// underflow at that index is the same dropout, counted once.
        let dropoutSeenAt = Atomic<Int64>(-1)
        init(mainloop: OpaquePointer, wake: Semaphore) {
            self.mainloop = mainloop
            self.wake = wake
        }
    }

    /// Counts an underflow the server reported on `stream`, unless it is a flush's own: a
    /// flush (a pause, a restart, a skip) empties the server's buffer on purpose, and the
    /// server says so with an underflow at the index where it left off, often after the
    /// next write began (`takeRestart` forgets only those before it). Counted, that made a
    /// skip in `scripts/demo` an "underrun" in about half the runs, where nothing was lost.
    /// An underflow past that index is the stream running dry: a dropout. Where the server
    /// does not say where (`pa_stream_get_underflow_index` −1), every one counts.
    fileprivate static func countUnderflow(of stream: OpaquePointer?, _ signals: Signals) {
        let at = stream.map { pa_stream_get_underflow_index($0) } ?? -1
        let flushedAt = signals.flushedAt.load(ordering: .relaxed)
        if at >= 0, flushedAt >= 0, at <= flushedAt { return }
        // At or before where the output saw a dropout and wrote again: that stall, counted.
        if at >= 0, at <= signals.dropoutSeenAt.load(ordering: .relaxed) { return }
        signals.underflows.add(1, ordering: .relaxed)
    }

    /// The sink's share of a long buffer on pipewire-pulse, in frames at 48 kHz: half
    /// PipeWire's default quantum (`default.clock.quantum`, 1024).
    static let pipeWireLongBufferShare = 512

    /// The request size (`minreq`, and the start threshold) of a long buffer of
    /// `bufferFrames` on pipewire-pulse: whatever leaves the sink's share, `(tlength −
    /// 2·minreq) / 2`, at ``pipeWireLongBufferShare``.
    ///
    /// pipewire-pulse makes that share the stream's `node.latency`, and the graph runs at
    /// the smallest latency any of its nodes asks. The engine's 8 ms share (see
    /// `AudioEngine.outputRequest()`) asked 384 frames, and the whole graph, the sound card
    /// and every other app's stream with it, ran in 256-frame cycles: PipeWire's data
    /// thread woke 376 times a second, for a stream meant to save power. And a cycle is the
    /// deadline of every client of the graph: on the harness's 2-core machine (a kernel
    /// without preemption) pipewire-pulse missed a 5.3 ms cycle ("client too slow!" in
    /// PipeWire's log) in half of the 4 s runs of a queue test, and the sink played 5–10 ms
    /// of silence in place of what the stream had given it.
    ///
    /// Not the default quantum itself: a flush (a pause) leaves what the graph has taken
    /// playing, the cycle under way and the block taken for the next, up to two cycles:
    /// 43 ms at 1024 frames, past the 30 ms every user action is to be heard in, and a
    /// pause's position was then 31 ms short of what was heard in 2 of 8 runs. At 512
    /// frames, 21 ms at most.
    static func pipeWireLongBufferRequest(bufferFrames: Int, rate: Int) -> Int {
        let share = pipeWireLongBufferShare * rate / 48_000
        return max(rate / 50, (bufferFrames - 2 * share) / 2)
    }

    /// Bytes in a frame of the stream: stereo, 16-bit or Float32 (see ``sixteenBit``).
    let frameBytes: Int
    /// Whether the stream carries 16-bit samples: the default sink's format holds 16 bits
    /// or fewer (PulseAudio's default, `s16le`), so the server would convert Float32 to
    /// 16 bits anyway. The engine converts the mix itself then, as the server would
    /// (``MixKernels/convertToInt16(_:_:samples:)``), and half the bytes go through the
    /// socket and libpulse's copies. Float32 elsewhere (pipewire-pulse's sinks are Float32).
    let sixteenBit: Bool
    /// Whether the stream's timing is asked for by the output itself instead of by libpulse's
    /// automatic updates: a long buffer on PulseAudio. The automatic updates come every
    /// 1.5 s once a stream runs, each two wakeups of libpulse's thread (its timer, then the
    /// reply). Asked after a write, at most once in ``timingInterval`` (a long buffer's
    /// requests come every half second), only the reply wakes it. Where libpulse's automatic
    /// updates ask at once and then again 10, 20, 40 … ms later (its
    /// `request_auto_timing_update(s, true)`), the output asks at once, and again 10, 20,
    /// 40 … ms later while the stream's start is yet to be heard (``askForTiming(force:)``):
    /// the hand-over to pulling, a write at the read index (a restart), the server saying the
    /// stream started (its sink began to take it: a sink that woke late is heard from then,
    /// and the position must move at once, not half a second later at the next request), an
    /// underflow, a move to another sink, a suspension. Not on pipewire-pulse, whose
    /// graph-cycle clock takes its own snapshots after every write, and not for a short
    /// buffer, whose requests come tens of times a second.
    private let timingWithRequests: Bool
    /// When ``askForTiming(force:)`` last asked, in `pa_rtclock_now` µs. Under the lock.
    private var timingAsked: pa_usec_t = 0
    /// How often a running stream's timing is asked for: every sixth write request of a long
    /// buffer (one comes every half second), half as often as libpulse's automatic updates
    /// once they have slowed down. Between replies libpulse interpolates on the monotonic
    /// clock; a sound card's clock drifts from it by 100 ppm at most, 0.3 ms in 2.9 s,
    /// against the 10 ms the position may be off.
    private static let timingInterval: pa_usec_t = 2_900_000
    /// The timer that asks again after an event (``askForTiming(force:)``), and the interval
    /// to its next ask: 10 ms, doubling, until it reaches ``timingInterval``. Under the lock;
    /// `close` frees the timer.
    private var timingFollowUp: OpaquePointer?
    private var timingFollowUpInterval: pa_usec_t = 0
    /// The most frames one write asks libpulse for: a whole block of its memory pool (64 KB,
    /// 16,384 frames of 16-bit stereo), so that each write reaches the server as one message,
    /// which its sink's thread is woken for. With 16 KB parts a long buffer's half-second
    /// request was six, and the server's real-time sink thread took the CPU from the engine's
    /// reader six times while it decoded (bench/power: the reader's involuntary switches
    /// 1.2 -> 0.6 /s). libpulse may grant less (``beginWrite(frames:)``).
    private static let messageFrames = 16_384
    /// The frames mixed at a time while a message is filled: the mix (32 KB of Float32) and
    /// its conversion stay in the cache, where a half-second mix (192 KB at 48 kHz) went
    /// through memory in each of its passes (zeroing, mixing, the level scan, converting).
    private static let pieceFrames = 4096

    /// The loop and the context (PulseSupport's), and their libpulse pointers.
    private let loop: PulseMainloop
    private let connection: PulseContext
    private let mainloop: OpaquePointer
    private let context: OpaquePointer
    private let stream: OpaquePointer
    private let signals: Signals
    /// Set once by `close`, which frees the mainloop: nothing may lock it afterwards.
    private let closed = Atomic<Bool>(false)
    private var underflowsSeen = 0
    /// What the dropout check measures from (see ``noteDropoutIfRanDry()``): the end of a
    /// write after which the server's timing was fresh (monotonic seconds), what was buffered
    /// then (the delay, in seconds), and the frames written since. Nil after a drain, a flush
    /// or a dropout, until a write is followed by fresh timing again, and before the first.
    /// Under the lock.
    private var dropoutAnchor: (at: Double, buffered: Double, writtenSince: Int)?
    /// Set by a drain or flush: the stream's own underflow at the end of a sound may be
    /// reported late, so the next write starts counting afresh.
    private var restarting = false
    let server: String
    let sampleRate: Int
    let sinkSampleRate: Int?
    let periodFrames: Int
    let bufferFrames: Int
    let request: AudioEngine.OutputRequest

    var name: String { server }
    var kind: AudioEngine.OutputKind { .soundServer(server: server) }

    /// Connects to `address`, or the default server (`PULSE_SERVER`, the client
    /// configuration, or the user's runtime folder) and opens a stereo stream at `sampleRate` on the
    /// default sink (16-bit for a sink of 16 bits or fewer, else Float32; see ``sixteenBit``), asking for `request`'s rate, its period per server request and its
    /// buffer in all. The granted period and buffer are read back from the server.
    init(server address: String? = nil, identity: AudioEngine.StreamIdentity, request: AudioEngine.OutputRequest,
         wake: Semaphore, connectTimeout: Double = 3) throws(OpenError) {
        let (sampleRate, periodFrames, bufferFrames) = (request.sampleRate, request.periodFrames, request.bufferFrames)
        guard let loop = PulseMainloop(name: "earshot-pulse") else { throw .noServer("pa_threaded_mainloop_new failed") }
        let mainloop = loop.pointer
        let signals = Signals(mainloop: mainloop, wake: wake)
        let userdata = Unmanaged.passUnretained(signals).toOpaque()
        let properties = PulseClient.properties(identity, mediaName: nil)
        defer { pa_proplist_free(properties) }
        // The stream's audio goes over the socket, not in shared memory: with shared memory the
        // server sends a release for every block it has played, each a wakeup of its own (one a
        // period with the short buffer, six a second with the long one), about half of all the
        // process's wakeups while it plays. The copy through the socket costs less than those
        // wakeups did (bench/power: 134 -> 71 wakeups/s, 0.58 -> 0.53 % of a core; the long
        // buffer's 15 -> 10 wakeups/s), and the server's CPU did not change. pipewire-pulse
        // takes audio over the socket anyway.
        _ = pa_proplist_sets(properties, PA_PROP_CONTEXT_FORCE_DISABLE_SHM, "yes")
        guard let connection = PulseContext(on: loop, name: identity.applicationName, properties: properties) else {
            loop.stop()
            throw .noServer("pa_context_new failed")
        }
        let context = connection.pointer
        do { try connection.start(server: address) } catch { throw .noServer(error.reason) }

        loop.lock()
        // libpulse's thread answers the server's requests for the render thread: it gets the
        // same real-time priority, where the process may have it, so that a loaded machine
        // does not starve the stream. Under the lock: `pa_mainloop_api_once` creates a defer
        // event and then sets its destroy callback, and without the lock the running loop
        // can fire and free the event in between (libpulse then aborts on "!e->dead",
        // seen about once in 30 starts of `earshot sound`).
        pa_mainloop_api_once(pa_threaded_mainloop_get_api(mainloop), { _, _ in
            var parameters = sched_param()
            parameters.sched_priority = 10
            _ = pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &parameters)
        }, nil)
        // A server that accepts the connection and then never answers (stopped, hung) must
        // not hang the caller: a deadline ends the wait.
        let deadline = connection.deadline(after: connectTimeout)
        func teardown(stream: OpaquePointer? = nil) {
            deadline.cancel()
            PulseOutput.disconnectAndStop(loop: loop, connection: connection, stream: stream)
        }
        switch connection.waitUntilReady(deadline) {
        case .ready: break
        case .failed(let reason):
            teardown()
            throw .noServer(reason)
        case .timedOut:
            teardown()
            throw .noServer("the server did not answer within \(connectTimeout) s")
        }
        let serverName = PulseContext.serverName(context, mainloop: mainloop) { deadline.passed }
            ?? pa_context_get_server(context).map { String(cString: $0) } ?? "unknown server"

        let sinkFormat = PulseContext.defaultSinkFormat(context, mainloop: mainloop) { deadline.passed }
        let sixteenBit = sinkFormat?.bits.map { $0 <= 16 } ?? false
        let frameBytes = sixteenBit ? 2 * MemoryLayout<Int16>.size : 2 * MemoryLayout<Float>.size
        var spec = pa_sample_spec(format: sixteenBit ? PA_SAMPLE_S16LE : PA_SAMPLE_FLOAT32LE, rate: UInt32(sampleRate), channels: 2)
        var map = pa_channel_map()
        pa_channel_map_init_stereo(&map)
        let streamProperties = PulseClient.properties(identity, mediaName: identity.mediaName ?? identity.applicationName)
        defer { pa_proplist_free(streamProperties) }
        guard let stream = pa_stream_new_with_proplist(context, identity.mediaName ?? identity.applicationName, &spec, &map,
                                                       streamProperties) else {
            let reason = PulseClient.error(context)
            teardown()
            throw .failed(server: serverName, reason: reason)
        }
        pa_stream_set_state_callback(stream, { _, userdata in PulseOutput.signalAndWake(userdata) }, userdata)
        pa_stream_set_write_callback(stream, { _, _, userdata in PulseOutput.signal(userdata) }, userdata)
        pa_stream_set_underflow_callback(stream, { stream, userdata in
            guard let userdata else { return }
            PulseOutput.countUnderflow(of: stream, Unmanaged<Signals>.fromOpaque(userdata).takeUnretainedValue())
        }, userdata)
        let attributeFrameBytes = UInt32(frameBytes)
        // The whole buffer is the target length; the server asks for a period at a time; it
        // starts playing once a period is there (as ALSA's start threshold), and after the
        // engine drains it waits for the next period rather than playing silence. With
        // block-synced requests the sink renders a period at a time on top of the queue, so
        // the queue is the buffer less that period.
        let synced = request.blockSyncedRequests && bufferFrames > periodFrames
        let queueFrames = synced ? bufferFrames - periodFrames : bufferFrames
        let onPipeWire = serverName.contains("PipeWire")
        let requestFrames = request.longBuffer && onPipeWire && !synced
            ? PulseOutput.pipeWireLongBufferRequest(bufferFrames: queueFrames, rate: sampleRate) : periodFrames
        var attributes = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32(queueFrames) * attributeFrameBytes,
                                        prebuf: UInt32(requestFrames) * attributeFrameBytes, minreq: UInt32(requestFrames) * attributeFrameBytes,
                                        fragsize: UInt32.max)
        let timingWithRequests = request.longBuffer && !onPipeWire
        let flags = pa_stream_flags_t(rawValue: PA_STREAM_INTERPOLATE_TIMING.rawValue
                                      | (timingWithRequests ? 0 : PA_STREAM_AUTO_TIMING_UPDATE.rawValue)
                                      | (synced ? PA_STREAM_EARLY_REQUESTS.rawValue : PA_STREAM_ADJUST_LATENCY.rawValue))
        guard pa_stream_connect_playback(stream, nil, &attributes, flags, nil, nil) >= 0 else {
            let reason = PulseClient.error(context)
            teardown(stream: stream)
            throw .failed(server: serverName, reason: reason)
        }
        while true {
            let state = pa_stream_get_state(stream)
            if state == PA_STREAM_READY { break }
            if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED || deadline.passed {
                let reason = deadline.passed ? "the server did not answer within \(connectTimeout) s"
                    : PulseClient.error(context)
                teardown(stream: stream)
                throw .failed(server: serverName, reason: reason)
            }
            pa_threaded_mainloop_wait(mainloop)
        }
        deadline.cancel()
        // A change of the context's state now also wakes the render thread: a server that goes
        // away while nothing plays must be noticed, not found at the next write.
        connection.onStateChange { [wake] _ in wake.signal() }
        let granted = pa_stream_get_buffer_attr(stream)?.pointee
        let rate = pa_stream_get_sample_spec(stream)?.pointee.rate ?? UInt32(sampleRate)
        pa_threaded_mainloop_unlock(mainloop)

        self.loop = loop
        self.connection = connection
        self.mainloop = mainloop
        self.context = context
        self.stream = stream
        self.signals = signals
        self.server = serverName
        self.request = request
        self.sampleRate = Int(rate)
        self.sinkSampleRate = sinkFormat?.sampleRate
        self.frameBytes = frameBytes
        self.sixteenBit = sixteenBit
        self.timingWithRequests = timingWithRequests
        let minreq = granted.map { Int($0.minreq) / frameBytes } ?? periodFrames
        let grantedPeriod = max(64, min(minreq, 16_384))
        self.periodFrames = grantedPeriod
        // With block-synced requests the sink's block (a period) plays on top of the queue.
        self.bufferFrames = granted.map { Int($0.tlength) / frameBytes + (synced ? grantedPeriod : 0) } ?? bufferFrames
        // pipewire-pulse's timing moves in graph cycles: its own clock (see `GraphCycleClock`).
        graphTiming = onPipeWire ? GraphCycleTiming(rate: Int(rate)) : nil
        // From now on the write request also reaches the output itself, for pulling. The
        // output outlives the callback: every owner closes it before letting go, and `close`
        // clears the callback under the lock.
        pa_threaded_mainloop_lock(mainloop)
        pa_stream_set_write_callback(stream, { _, _, userdata in
            guard let userdata else { return }
            let output = Unmanaged<PulseOutput>.fromOpaque(userdata).takeUnretainedValue()
            pa_threaded_mainloop_signal(output.mainloop, 0)
            output.pullLocked()
        }, Unmanaged.passUnretained(self).toOpaque())
        // Timing updates (libpulse's own, 10, 20, 40 … ms into a stream; or, with
        // `timingWithRequests`, the output's own follow-ups and the start watch's) tell when
        // the sink starts playing, before a long buffer's next request would.
        pa_stream_set_latency_update_callback(stream, { _, userdata in
            guard let userdata else { return }
            Unmanaged<PulseOutput>.fromOpaque(userdata).takeUnretainedValue().timingUpdatedLocked()
        }, Unmanaged.passUnretained(self).toOpaque())
        if timingWithRequests {
            // The events after which libpulse's automatic updates would ask at once.
            let output = Unmanaged.passUnretained(self).toOpaque()
            let askNow: pa_stream_notify_cb_t = { _, userdata in
                guard let userdata else { return }
                Unmanaged<PulseOutput>.fromOpaque(userdata).takeUnretainedValue().askForTiming(force: true)
            }
            pa_stream_set_started_callback(stream, askNow, output)
            pa_stream_set_moved_callback(stream, askNow, output)
            pa_stream_set_suspended_callback(stream, askNow, output)
            pa_stream_set_underflow_callback(stream, { stream, userdata in
                guard let userdata else { return }
                let output = Unmanaged<PulseOutput>.fromOpaque(userdata).takeUnretainedValue()
                PulseOutput.countUnderflow(of: stream, output.signals)
                output.askForTiming(force: true)
            }, output)
            // As libpulse does when the stream is ready.
            askForTiming(force: true)
        }
        pa_threaded_mainloop_unlock(mainloop)
    }

    deinit {
        close()
    }

    // MARK: Render thread

    func write(_ samples: UnsafePointer<Float>, frames: Int) -> OutputWriteResult {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        var seek = takeRestart()
        var offset = 0
        while offset < frames {
            if let failure = lockedFailure() { return failure }
            if signals.interrupted.exchange(false, ordering: .acquiringAndReleasing) { return .interrupted(written: offset) }
            let writable = pa_stream_writable_size(stream)
            if writable < frameBytes {
                pa_threaded_mainloop_wait(mainloop)
                continue
            }
            let count = min(writable / frameBytes, frames - offset)
            // Here, after the wait for room, not before it: a process stopped meanwhile has
            // its dropout inside that wait.
            noteDropoutIfRanDry()
            guard send(samples + offset * 2, frames: count, seek: seek) else { return .failed(PulseClient.error(context)) }
            seek = PA_SEEK_RELATIVE
            offset += count
        }
        requestTiming()
        let delay = lockedDelay()
        delayAfterLastWrite = delay
        noteWritten(frames: frames, delay: delay)
        let underflows = signals.underflows.load(ordering: .relaxed)
        defer { underflowsSeen = underflows }
        return underflows != underflowsSeen ? .recovered : .written
    }

    /// Under the lock, before a write: counts a dropout (as an underflow of the server's
    /// would be) when more time has passed since the last write than it left buffered, by
    /// ``dropoutSlack`` or more: the stream ran dry meanwhile (the process was stopped or
    /// starved). PulseAudio does not always say so: at its defaults (a resampled null sink
    /// with rewinds) a process stopped for 0.4 s got no underflow at all (4 of 4 runs), and
    /// the dropout went uncounted. Not on pipewire-pulse, whose underflows carry no index to
    /// tell the two reports of one dropout apart; it reports them.
    private func noteDropoutIfRanDry() {
        guard graphTiming == nil, let anchor = dropoutAnchor else { return }
        let dry = MonotonicClock.seconds() - anchor.at - anchor.buffered - Double(anchor.writtenSince) / Double(sampleRate)
        guard dry >= PulseOutput.dropoutSlack else { return }
        // One stall, one dropout: nothing more is measured until timing taken after it says
        // what is buffered. (Measured from the stale timing of before the stall, the delay
        // after the first write read as nothing, and the next write counted a second
        // dropout: 2 for one stop in a fresh-clone CI run.)
        dropoutAnchor = nil
        if let timing = pa_stream_get_timing_info(stream)?.pointee, timing.write_index_corrupt == 0 {
            signals.dropoutSeenAt.store(timing.write_index, ordering: .relaxed)
        }
        signals.underflows.add(1, ordering: .relaxed)
    }

    /// Under the lock, after a write of `frames`: anchors the dropout check on it when the
    /// server's timing is fresh (taken within ``dropoutTimingFreshness``), with `delay`, read
    /// after the write; otherwise counts the frames onto the anchor.
    private func noteWritten(frames: Int, delay: Int?) {
        guard graphTiming == nil else { return }
        if let timing = pa_stream_get_timing_info(stream)?.pointee, timing.write_index_corrupt == 0,
           PulseTimingSnapshot.elapsed(since: timing) < PulseOutput.dropoutTimingFreshness,
           let delay {
            dropoutAnchor = (MonotonicClock.seconds(), Double(delay) / Double(sampleRate), 0)
        } else {
            dropoutAnchor?.writtenSince += frames
        }
    }

    /// How recent the server's timing must be for the delay after a write to anchor the
    /// dropout check.
    static let dropoutTimingFreshness = 0.05

    /// How far past the buffered audio a write must come to count as a dropout: more than
    /// the clock's interpolation can be off (libpulse's estimate, the sink's latency in it),
    /// so that a write that was merely late never counts.
    static let dropoutSlack = 0.02

    func delay() -> Int? {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        return lockedDelay()
    }

    /// The delay `write` read as it ended (it anchors the dropout check with it), rather than
    /// the same computation a second time.
    func delayAfterWrite() -> Int? {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        return delayAfterLastWrite
    }

    private func lockedDelay() -> Int? {
        if graphTiming != nil, let delay = lockedGraphDelay() { return delay }
        var usec: pa_usec_t = 0
        var negative: Int32 = 0
        guard pa_stream_get_latency(stream, &usec, &negative) >= 0 else { return nil }
        let interpolated = negative != 0 ? 0 : Int((Double(usec) * Double(sampleRate) / 1e6).rounded())
        guard let timing = pa_stream_get_timing_info(stream)?.pointee else { return interpolated }
        sinkLatency = Int((Double(timing.sink_usec) * Double(sampleRate) / 1e6).rounded())
        // The larger of libpulse's interpolation and the last snapshot's delay, on PulseAudio
        // (see `PulseTimingSnapshot`).
        guard graphTiming == nil, let snapshot = PulseTimingSnapshot(timing, frameBytes: Int64(frameBytes)) else {
            return interpolated
        }
        return max(interpolated, snapshot.delay(after: PulseTimingSnapshot.elapsed(since: timing), rate: sampleRate))
    }

    // MARK: The clock on pipewire-pulse

    /// On pipewire-pulse: the play position from its timing snapshots, fitted across them
    /// (``GraphCycleClock``), instead of libpulse's interpolation from the last one, which
    /// wandered 5–17 ms per take against the monotonic clock. Nil elsewhere (PulseAudio's
    /// timing, sink latency included, held within 0.3 ms). Under the lock.
    private var graphTiming: GraphCycleTiming?
    /// What `write` read as it ended, for ``delayAfterWrite()``. Under the lock.
    private var delayAfterLastWrite: Int?

    /// Under the lock, after a write on pipewire-pulse: asks for a fresh snapshot unless one
    /// is on its way (the clock narrows with each snapshot, each up to a graph cycle stale).
    private func requestTiming() {
        graphTiming?.requestSnapshot(of: stream)
        askForTiming()
    }

    /// Under the lock, after a write or on a stream event (see ``timingWithRequests``): asks
    /// PulseAudio for the stream's timing if ``timingInterval`` has passed since the last
    /// ask; with `force`, at once, and again 10, 20, 40 … ms later while the puller wants
    /// timing (the stream is yet to be heard, or a restart has just flushed; a reply after
    /// an underflow needs no more).
    private func askForTiming(force: Bool = false) {
        guard timingWithRequests else { return }
        let now = pa_rtclock_now()
        if force, wantsTiming { followUpTiming(after: 10_000, now: now) }
        if force || now >= timingAsked + PulseOutput.timingInterval { sendTimingRequest(now: now) }
    }

    /// Under the lock: asks PulseAudio for the stream's timing now (the reply comes to the
    /// latency-update callback), and notes when.
    private func sendTimingRequest(now: pa_usec_t) {
        guard let operation = pa_stream_update_timing_info(stream, nil, nil) else { return }
        timingAsked = now
        pa_operation_unref(operation)
    }

    /// Under the lock: whether the follow-up asks go on: the puller wants timing between
    /// writes (or the render thread writes, and cannot say); once it does not, the asks after
    /// writes keep the clock.
    private var wantsTiming: Bool { puller?.wantsTiming ?? true }

    /// Under the lock: sets the follow-up timer to ask in `interval` µs, unless that reaches
    /// ``timingInterval`` (the asks after writes go on from there).
    private func followUpTiming(after interval: pa_usec_t, now: pa_usec_t = pa_rtclock_now()) {
        timingFollowUpInterval = interval
        guard interval < PulseOutput.timingInterval else { return }
        if let timingFollowUp {
            pa_context_rttime_restart(context, timingFollowUp, now + interval)
            return
        }
        timingFollowUp = pa_context_rttime_new(context, now + interval, { _, _, _, userdata in
            // libpulse's thread, lock held; `close` frees the timer before the output goes.
            guard let userdata else { return }
            let output = Unmanaged<PulseOutput>.fromOpaque(userdata).takeUnretainedValue()
            guard output.wantsTiming else { return }
            let now = pa_rtclock_now()
            output.sendTimingRequest(now: now)
            output.followUpTiming(after: 2 * output.timingFollowUpInterval, now: now)
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Under the lock: frames written and not yet played, from the graph-cycle clock; nil
    /// when it cannot tell (no snapshot yet, or libpulse lost track of the write index after
    /// a seek until the next snapshot).
    private func lockedGraphDelay() -> Int? {
        guard var timing = graphTiming, let info = pa_stream_get_timing_info(stream)?.pointee else { return nil }
        sinkLatency = Int((Double(info.sink_usec) * Double(sampleRate) / 1e6).rounded())
        let frameBytes = Int64(frameBytes)
        timing.take(info, index: Int64(info.read_index) / frameBytes, valid: info.read_index_corrupt == 0)
        graphTiming = timing
        let clock = timing.clock
        // The block the sink took in a cycle plays in the next one (see `GraphCycleClock`).
        guard info.write_index_corrupt == 0, let taken = clock.position(at: MonotonicClock.seconds()) else { return nil }
        let played = taken - Double(clock.quantum)
        let written = Double(Int64(info.write_index) / frameBytes)
        return max(0, Int((written - played).rounded()))
    }

    // MARK: Pulling (libpulse's thread renders)

    /// Who renders on libpulse's thread while the render thread sleeps; nil when the render
    /// thread writes itself. Read and written under the mainloop's lock only.
    private var puller: (any OutputPuller)?

    func startPulling(_ puller: any OutputPuller) -> Bool {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        guard lockedFailure() == nil, !signals.interrupted.load(ordering: .acquiring) else { return false }
        self.puller = puller
        startWatchUntil = pa_rtclock_now() + 500_000
        startWatchInterval = 10_000
        askForTiming(force: true)
        // What the server asked for before now does not come again: take it at once.
        pullLocked()
        return self.puller != nil
    }

    func stopPulling() {
        pa_threaded_mainloop_lock(mainloop)
        puller = nil
        pa_threaded_mainloop_unlock(mainloop)
    }

    /// Under the mainloop's lock (libpulse's thread in the write callback, or the render
    /// thread in `startPulling`): while the server has room for a period, mixes what fits
    /// and writes it. Stops pulling, and wakes the render thread, when the puller declines
    /// or a write fails.
    private func pullLocked() {
        guard let puller else { return }
        while true {
            let writable = pa_stream_writable_size(stream) / frameBytes
            // A long buffer's request is half of it: after a flush the server may ask for
            // less than that at first, and what it asks must be filled now.
            guard writable >= (request.longBuffer ? min(periodFrames, sampleRate / 50) : periodFrames), lockedFailure() == nil else {
                if lockedFailure() != nil { handBack() }
                return
            }
            // One message, filled in place in libpulse's buffer a piece at a time. Each piece
            // but the last is counted written once the next is to be mixed (which follows
            // it); the last, with the delay after the write.
            guard let message = beginWrite(frames: writable) else {
                handBack()
                return
            }
            var filled = 0, unnoted = 0, playing = true
            while filled < message.frames {
                if unnoted > 0 {
                    puller.wrote(frames: unnoted, delay: nil, sinkPlays: false, underran: false, flushRemainder: sinkLatency)
                    unnoted = 0
                }
                guard case let (samples, frames)? = puller.mix(maxFrames: min(PulseOutput.pieceFrames, message.frames - filled)) else {
                    playing = false
                    break
                }
                store(samples, frames: frames, into: message.start, at: filled)
                filled += frames
                unnoted = frames
            }
            guard filled > 0 else {
                pa_stream_cancel_write(stream)
                handBack()
                return
            }
            noteDropoutIfRanDry()
            guard commitWrite(message.start, frames: filled, seek: takeRestart()) else {
                // The render thread writes the next period itself and meets the error.
                handBack()
                return
            }
            requestTiming()
            let delay = lockedDelay()
            noteWritten(frames: filled, delay: delay)
            let underflows = signals.underflows.load(ordering: .relaxed)
            let underran = underflows != underflowsSeen
            underflowsSeen = underflows
            puller.wrote(frames: unnoted, delay: delay, sinkPlays: lockedSinkPlays(), underran: underran, flushRemainder: sinkLatency)
            guard playing else {
                handBack()
                return
            }
        }
    }

    /// Under the lock, on libpulse's thread: new timing came. Passed on to the puller while
    /// it wants it (see ``OutputPuller/wantsTiming``).
    private func timingUpdatedLocked() {
        guard let puller, puller.wantsTiming, lockedFailure() == nil, let delay = lockedDelay() else { return }
        puller.timed(delay: delay, sinkPlays: lockedSinkPlays())
        if puller.awaitsPlayingSink { watchForPlayingSink() }
    }

    /// While the sink has not yet been heard playing a long buffer's stream: a timer asks
    /// for timing again in 10 ms, until it has. libpulse's own updates come 10, 20, 40, 80 …
    /// ms into a stream, and on a loaded machine (pipewire-pulse starting its graph late)
    /// the start was heard a quarter second before the next said so: the position stood
    /// at 0 meanwhile. A short buffer's writes, a period apart, say it anyway. Under the lock.
    private var startWatch: OpaquePointer?
    /// Until when the timer asks every 10 ms: half a second after the render thread handed
    /// the stream over. A server that holds the stream back for longer (a loaded machine's
    /// sink waking late, a stream corked for a call by a role policy) is asked twice as far
    /// apart each time after that, up to half a second: not a hundred times a second all
    /// along, and not never. libpulse's own updates are off for this stream
    /// (``timingWithRequests``): with the asks ending at half a second, the next came with
    /// the next write request, up to a second later, and the position stood still while
    /// the sound played (`SoundServerPlayTests.serverRestart`, at PulseAudio's defaults in
    /// a loaded CI pass: 0.8 s after the play it had not moved).
    private var startWatchUntil: pa_usec_t = 0
    /// The interval to the timer's next ask (see ``startWatchUntil``). Under the lock.
    private var startWatchInterval: pa_usec_t = 10_000

    private func watchForPlayingSink() {
        let now = pa_rtclock_now()
        guard request.longBuffer else { return }
        if now >= startWatchUntil { startWatchInterval = min(500_000, 2 * startWatchInterval) }
        let due = now + startWatchInterval
        if let startWatch {
            // Fired (a timer event stays until freed): set it again.
            pa_context_rttime_restart(context, startWatch, due)
            return
        }
        startWatch = pa_context_rttime_new(context, due, { _, _, _, userdata in
            // libpulse's thread, lock held; `close` frees the timer before the output goes.
            guard let userdata else { return }
            let output = Unmanaged<PulseOutput>.fromOpaque(userdata).takeUnretainedValue()
            if let operation = pa_stream_update_timing_info(output.stream, nil, nil) { pa_operation_unref(operation) }
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    func sinkPlays() -> Bool {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        return lockedSinkPlays()
    }

    /// Under the lock: whether the server's last timing says the sink plays the stream
    /// (PulseAudio's `playing`: the sink input has given the sink audio and both run).
    /// libpulse's interpolated latency moves on meanwhile: on a null sink still asleep in
    /// the block it began before the stream came, it said 450 frames played in 10 ms while
    /// the read index stood at 0 and `playing` at 0 for 2 s.
    private func lockedSinkPlays() -> Bool {
        pa_stream_get_timing_info(stream)?.pointee.playing ?? 0 != 0
    }

    /// Under the lock: writes `frames` frames of the mix (interleaved stereo Float32), the
    /// first message at `seek`, each message converted (or copied) straight into libpulse's
    /// buffer. False when libpulse refuses a write.
    private func send(_ samples: UnsafePointer<Float>, frames: Int, seek: pa_seek_mode_t) -> Bool {
        var seek = seek
        var offset = 0
        while offset < frames {
            guard let message = beginWrite(frames: frames - offset) else { return false }
            store(samples + offset * 2, frames: message.frames, into: message.start, at: 0)
            guard commitWrite(message.start, frames: message.frames, seek: seek) else { return false }
            seek = PA_SEEK_RELATIVE
            offset += message.frames
        }
        return true
    }

    /// Under the lock: libpulse's buffer for the next message, for up to `frames` frames (at
    /// most ``messageFrames``; libpulse may grant fewer), to be filled in place and passed to
    /// ``commitWrite(_:frames:seek:)``, which then does not copy it (or to
    /// `pa_stream_cancel_write`). nil when libpulse refuses.
    private func beginWrite(frames: Int) -> (start: UnsafeMutableRawPointer, frames: Int)? {
        var data: UnsafeMutableRawPointer?
        var bytes = min(frames, PulseOutput.messageFrames) * frameBytes
        guard pa_stream_begin_write(stream, &data, &bytes) >= 0, let data else { return nil }
        guard bytes >= frameBytes else {
            pa_stream_cancel_write(stream)
            return nil
        }
        return (data, bytes / frameBytes)
    }

    /// Under the lock: `frames` frames of the mix into a message's buffer at frame `offset`,
    /// converted to 16 bits for a 16-bit stream (``sixteenBit``).
    private func store(_ samples: UnsafePointer<Float>, frames: Int, into message: UnsafeMutableRawPointer, at offset: Int) {
        if sixteenBit {
            MixKernels.convertToInt16(samples, message.assumingMemoryBound(to: Int16.self) + offset * 2, samples: frames * 2)
        } else {
            (message.assumingMemoryBound(to: Float.self) + offset * 2).update(from: samples, count: frames * 2)
        }
    }

    /// Under the lock: sends a message filled in the buffer of ``beginWrite(frames:)``.
    /// False when libpulse refuses it.
    private func commitWrite(_ message: UnsafeMutableRawPointer, frames: Int, seek: pa_seek_mode_t) -> Bool {
        // After a write at the read index libpulse no longer knows the write index.
        defer { if seek != PA_SEEK_RELATIVE { askForTiming(force: true) } }
        return pa_stream_write(stream, message, frames * frameBytes, nil, 0, seek) >= 0
    }

    /// Under the lock, before a write: where it goes. The first write after a drain or a
    /// flush goes at the server's read index, which may have run past the write index
    /// (pipewire-pulse 0.3.65 keeps it moving through the underrun at a drain's end; a
    /// write at the write index then lost its first graph cycle, 5.3 ms); its underflows
    /// so far are the end of the last sound, not a dropout.
    private func takeRestart() -> pa_seek_mode_t {
        guard restarting else { return PA_SEEK_RELATIVE }
        restarting = false
        // Silent on purpose since: no dropout to look for before this write.
        dropoutAnchor = nil
        underflowsSeen = signals.underflows.load(ordering: .relaxed)
        return PA_SEEK_RELATIVE_ON_READ
    }

    /// Under the lock: the render thread takes over.
    private func handBack() {
        puller = nil
        signals.wake.signal()
    }

    /// The sink's own latency at the last timing update: what it has rendered and still
    /// plays after a flush. Under the lock (the render thread, or libpulse's while pulling).
    private var sinkLatency = 0
    var expectedFlushRemainder: Int { sinkLatency }

    func drainAndPrepare() -> Bool {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        guard lockedFailure() == nil else { return true }
        let userdata = Unmanaged.passUnretained(signals).toOpaque()
        guard let operation = pa_stream_drain(stream, { _, _, userdata in PulseOutput.signal(userdata) }, userdata) else { return true }
        defer { pa_operation_unref(operation) }
        while pa_operation_get_state(operation) == PA_OPERATION_RUNNING, lockedFailure() == nil {
            // A long buffer's drain lasts up to its length: a pause in it (of a voice whose
            // end was mixed and is not yet heard) breaks it off, and its flush follows.
            if signals.interrupted.exchange(false, ordering: .acquiringAndReleasing) {
                pa_operation_cancel(operation)
                return false
            }
            pa_threaded_mainloop_wait(mainloop)
        }
        // The drain's own underflow is the end of the sound, not a dropout.
        restarting = true
        dropoutAnchor = nil
        return true
    }

    func flush() -> Int {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        signals.interrupted.store(false, ordering: .relaxed)
        guard lockedFailure() == nil else { return 0 }
        lockedFlush()
        // On pipewire-pulse what still plays is the block the sink took for the next cycle:
        // one quantum (libpulse's latency right after the flush said 17–22 ms there, and a
        // pause put the voice that far past what was heard).
        if let clock = graphTiming?.clock, clock.isKnown { return Int(clock.quantum) }
        var usec: pa_usec_t = 0
        var negative: Int32 = 0
        guard pa_stream_get_latency(stream, &usec, &negative) >= 0, negative == 0 else { return 0 }
        return Int((Double(usec) * Double(sampleRate) / 1e6).rounded())
    }

    /// With the lock held: drops what the server holds and has not played (the flush moves
    /// its write index back to its read index), then asks for the timing after it (what the
    /// sink had already rendered, which still plays), waiting for both; the next write
    /// restarts the stream (`takeRestart`).
    private func lockedFlush() {
        let userdata = Unmanaged.passUnretained(signals).toOpaque()
        for operation in [pa_stream_flush(stream, { _, _, userdata in PulseOutput.signal(userdata) }, userdata),
                          pa_stream_update_timing_info(stream, { _, _, userdata in PulseOutput.signal(userdata) }, userdata)] {
            guard let operation else { continue }
            while pa_operation_get_state(operation) == PA_OPERATION_RUNNING, lockedFailure() == nil {
                pa_threaded_mainloop_wait(mainloop)
            }
            pa_operation_unref(operation)
        }
        // Nothing is left to play from the read index on: an underflow up to here is the
        // flush's (see `countUnderflow`).
        if let after = pa_stream_get_timing_info(stream)?.pointee, after.read_index_corrupt == 0 {
            signals.flushedAt.store(after.read_index, ordering: .relaxed)
        }
        restarting = true
        dropoutAnchor = nil
    }

    /// Render thread, while the stream runs (a long buffer restarting, see
    /// `AudioEngine.restartIfRequested`): drops what the server holds and has not played,
    /// without stopping the stream, and returns how many of the frames written will not be
    /// played: from the write index before the flush to the read index after it, where the
    /// next write goes (`takeRestart`). nil when the timing cannot say (nothing was flushed
    /// then, or the indices are unknown).
    func flushUnplayed() -> Int? {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        // As `flush`: a pause's `interruptWrite` asked for this flush.
        signals.interrupted.store(false, ordering: .relaxed)
        guard lockedFailure() == nil, let before = pa_stream_get_timing_info(stream)?.pointee,
              before.write_index_corrupt == 0 else { return nil }
        lockedFlush()
        guard let after = pa_stream_get_timing_info(stream)?.pointee, after.read_index_corrupt == 0 else { return nil }
        return Int(max(0, before.write_index - after.read_index) / Int64(frameBytes))
    }

    /// App thread, under the engine's `openOutput` lock (so never after `close`).
    func interruptWrite() {
        guard !closed.load(ordering: .acquiring) else { return }
        signals.interrupted.store(true, ordering: .releasing)
        pa_threaded_mainloop_lock(mainloop)
        pa_threaded_mainloop_signal(mainloop, 0)
        pa_threaded_mainloop_unlock(mainloop)
    }

    func failure() -> OutputWriteResult? {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        return lockedFailure()
    }

    private func lockedFailure() -> OutputWriteResult? {
        let contextState = pa_context_get_state(context)
        if contextState == PA_CONTEXT_FAILED || contextState == PA_CONTEXT_TERMINATED {
            return .serverLost(PulseClient.error(context))
        }
        let state = pa_stream_get_state(stream)
        if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED {
            let errno = pa_context_errno(context)
            // `pactl kill-sink-input` (or a policy) removed the stream.
            return .failed(errno == Int32(PA_ERR_KILLED.rawValue) || errno == 0 ? "the server removed the stream" : PulseClient.error(context))
        }
        return nil
    }

    // MARK: App threads

    func update(identity: AudioEngine.StreamIdentity) {
        guard !closed.load(ordering: .acquiring) else { return }
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        guard pa_stream_get_state(stream) == PA_STREAM_READY else { return }
        let properties = PulseClient.properties(identity, mediaName: identity.mediaName ?? identity.applicationName)
        defer { pa_proplist_free(properties) }
        if let operation = pa_stream_proplist_update(stream, PA_UPDATE_REPLACE, properties, nil, nil) {
            pa_operation_unref(operation)
        }
    }

    /// Render thread (or deinit); the engine clears its `openOutput` reference first, under
    /// the lock `update(identity:)` runs in, so no app thread is inside the output then.
    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        pa_threaded_mainloop_lock(mainloop)
        puller = nil
        if let startWatch { pa_threaded_mainloop_get_api(mainloop)?.pointee.time_free?(startWatch) }
        if let timingFollowUp { pa_threaded_mainloop_get_api(mainloop)?.pointee.time_free?(timingFollowUp) }
        graphTiming?.cancel()
        PulseOutput.disconnectAndStop(loop: loop, connection: connection, stream: stream)
        // `signals` is released with self, after libpulse's thread has stopped.
    }

    /// With the mainloop's lock held: disconnects and releases `stream` (if any) and
    /// `context`, unlocks, stops libpulse's thread and frees the mainloop. The one way an
    /// output (or an open that failed half-way) lets go of the server.
    private static func disconnectAndStop(loop: PulseMainloop, connection: PulseContext, stream: OpaquePointer?) {
        if let stream {
            clearCallbacks(stream)
            pa_stream_disconnect(stream)
            pa_stream_unref(stream)
        }
        connection.release()
        loop.unlock()
        loop.stop()
    }

    // MARK: Helpers

    private static func signal(_ userdata: UnsafeMutableRawPointer?) {
        guard let userdata else { return }
        pa_threaded_mainloop_signal(Unmanaged<Signals>.fromOpaque(userdata).takeUnretainedValue().mainloop, 0)
    }

    private static func signalAndWake(_ userdata: UnsafeMutableRawPointer?) {
        guard let userdata else { return }
        let signals = Unmanaged<Signals>.fromOpaque(userdata).takeUnretainedValue()
        pa_threaded_mainloop_signal(signals.mainloop, 0)
        signals.wake.signal()
    }

    private static func clearCallbacks(_ stream: OpaquePointer) {
        pa_stream_set_state_callback(stream, nil, nil)
        pa_stream_set_write_callback(stream, nil, nil)
        pa_stream_set_underflow_callback(stream, nil, nil)
        pa_stream_set_latency_update_callback(stream, nil, nil)
        pa_stream_set_started_callback(stream, nil, nil)
        pa_stream_set_moved_callback(stream, nil, nil)
        pa_stream_set_suspended_callback(stream, nil, nil)
    }
}
