internal import CPulse
import Platform
internal import PulseSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One record stream on a PulseAudio-protocol sound server (PulseAudio, or PipeWire through
/// pipewire-pulse), through libpulse: its own context on a `pa_threaded_mainloop`.
///
/// The server's read requests run on libpulse's thread, which is the capture callback: it
/// copies each fragment into the ``CaptureBuffer``'s ring, stamps the capture clock from the
/// stream's latency (the age of the oldest unread frame: the source's latency plus what
/// waits in the stream's buffer, interpolated by libpulse), and wakes the consumer. It
/// never touches a file. A hole in the stream (`pa_stream_peek` without data) becomes
/// silence of the same length, so frame indices stay right.
///
/// `@unchecked Sendable`: the libpulse objects are used under the mainloop's lock only.
final class PulseInput: CaptureInput, @unchecked Sendable {
    /// What libpulse's callbacks reach: the buffer to fill and a scratch block for holes.
    final class Context: @unchecked Sendable {
        let mainloop: OpaquePointer
        let buffer: CaptureBuffer
        let scratch: UnsafeMutablePointer<Float>
        let scratchFrames = 1024
        /// Whether libpulse's timing describes the stream as it runs now: false from an
        /// uncork until the answer to a timing request sent after it. Before that,
        /// `pa_stream_get_latency` interpolates from a snapshot taken while the stream was
        /// corked, and was measured 0.15–1.5 ms off (the first fragments' ages against the
        /// fresh ones, four runs on PulseAudio 16.1), enough to start a recording asked for
        /// at a device time that much off; such reads give no age.
        let timingFresh = Atomic<Bool>(true)
        /// Set once the stream is ready: from then on a failed stream or context fails the buffer
        /// (or, when the server itself went away and `onLost` is set, calls it instead, once).
        let running = Atomic<Bool>(false)
        let onLost: (@Sendable (String) -> Void)?
        /// On pipewire-pulse, whose timing moves in graph cycles: the capture position from
        /// its snapshots fitted across cycles (``GraphCycleClock``), as the output's play
        /// position is, instead of libpulse's interpolation (which wandered −1 … −2 ms/s).
        /// Nil elsewhere. Used under the lock only.
        var graphTiming: GraphCycleTiming?
        init(mainloop: OpaquePointer, buffer: CaptureBuffer, onLost: (@Sendable (String) -> Void)?) {
            self.mainloop = mainloop
            self.buffer = buffer
            self.onLost = onLost
            scratch = .allocate(capacity: scratchFrames * buffer.channels)
        }
        deinit { scratch.deallocate() }

        /// The server went away: tell `onLost`, or fail the buffer.
        func lose(_ reason: String) {
            if let onLost { onLost(reason) } else { buffer.fail(reason) }
        }
    }

    private let mainloop: PulseMainloop
    private let context: PulseContext
    private let stream: OpaquePointer
    private let callbacks: Context
    private let closed = Atomic<Bool>(false)
    let server: String
    let source: String
    var kind: AudioEngine.InputKind { .soundServer(server: server, source: source) }

    /// Connects to `address` (or libpulse's default server) and opens a record stream of
    /// `buffer.channels` Float32 channels at `buffer.sampleRate` on `device` (a source name;
    /// nil for the server's default source), asking for a fragment of `fragmentFrames`.
    /// `onLost` is called (on libpulse's thread, once) instead of failing the buffer when the
    /// connection to the server is lost while capturing: the server went away. A stream
    /// opened `corked` delivers nothing (and wakes nobody) until ``resume()``.
    init(server address: String?, device: String?, identity: AudioEngine.StreamIdentity, buffer: CaptureBuffer,
         fragmentFrames: Int, connectTimeout: Double = 3, corked: Bool = false,
         onLost: (@Sendable (String) -> Void)? = nil) throws(AudioEngineError) {
        let place = device ?? "default source"
        // Named before it starts: libpulse names the thread that calls it once the loop runs.
        guard let mainloop = PulseMainloop(name: "earshot-capture") else { throw .deviceUnavailable(device: place, reason: "pa_threaded_mainloop_new failed") }
        let callbacks = Context(mainloop: mainloop.pointer, buffer: buffer, onLost: onLost)
        let userdata = Unmanaged.passUnretained(callbacks).toOpaque()
        let contextProperties = PulseClient.properties(identity, mediaName: nil)
        defer { pa_proplist_free(contextProperties) }
        guard let context = PulseContext(on: mainloop, name: identity.applicationName, properties: contextProperties) else {
            mainloop.stop()
            throw .deviceUnavailable(device: place, reason: "pa_context_new failed")
        }
        context.onStateChange { [callbacks] state in
            if state.isOver, callbacks.running.exchange(false, ordering: .acquiringAndReleasing) {
                callbacks.lose("the sound server went away (\(context.lastError))")
            }
        }
        do { try context.start(server: address) } catch {
            throw .deviceUnavailable(device: "sound server", reason: "no server answered: \(error.reason)")
        }
        mainloop.lock()
        let deadline = context.deadline(after: connectTimeout)
        func fail(_ stream: OpaquePointer?, _ device: String, _ reason: String) -> AudioEngineError {
            deadline.cancel()
            PulseInput.teardown(mainloop: mainloop, context: context, stream: stream)
            return .deviceUnavailable(device: device, reason: reason)
        }
        switch context.waitUntilReady(deadline) {
        case .ready: break
        case .failed(let reason): throw fail(nil, "sound server", "no server answered: \(reason)")
        case .timedOut: throw fail(nil, "sound server", "the server did not answer within \(connectTimeout) s")
        }
        let serverName = context.serverName(within: deadline) ?? "unknown server"

        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(buffer.sampleRate), channels: UInt8(buffer.channels))
        var map = pa_channel_map()
        pa_channel_map_init_extend(&map, UInt32(buffer.channels), PA_CHANNEL_MAP_DEFAULT)
        let streamProperties = PulseClient.properties(identity, mediaName: identity.mediaName ?? "Recording")
        defer { pa_proplist_free(streamProperties) }
        guard let stream = pa_stream_new_with_proplist(context.pointer, identity.mediaName ?? "Recording", &spec, &map, streamProperties) else {
            throw fail(nil, place, context.lastError)
        }
        pa_stream_set_state_callback(stream, { stream, userdata in
            guard let userdata, let stream else { return }
            let callbacks = Unmanaged<Context>.fromOpaque(userdata).takeUnretainedValue()
            let state = pa_stream_get_state(stream)
            if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED, callbacks.running.exchange(false, ordering: .acquiringAndReleasing) {
                // The stream fails with its context when the server goes away: that is a loss.
                let context = pa_stream_get_context(stream)
                if context.map({ pa_context_get_state($0) != PA_CONTEXT_READY }) ?? true {
                    callbacks.lose("the sound server went away (\(PulseContext.errorText(of: context)))")
                } else {
                    callbacks.buffer.fail("the sound server ended the record stream")
                }
            }
            pa_threaded_mainloop_signal(callbacks.mainloop, 0)
        }, userdata)
        pa_stream_set_read_callback(stream, { stream, _, userdata in
            guard let userdata, let stream else { return }
            PulseInput.read(stream, Unmanaged<Context>.fromOpaque(userdata).takeUnretainedValue())
        }, userdata)
        pa_stream_set_moved_callback(stream, { _, userdata in
            guard let userdata else { return }
            pa_threaded_mainloop_signal(Unmanaged<Context>.fromOpaque(userdata).takeUnretainedValue().mainloop, 0)
        }, userdata)
        let frameBytes = UInt32(buffer.channels * MemoryLayout<Float>.size)
        var attributes = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max, minreq: UInt32.max,
                                        fragsize: UInt32(fragmentFrames) * frameBytes)
        let flags = pa_stream_flags_t(rawValue: PA_STREAM_INTERPOLATE_TIMING.rawValue | PA_STREAM_AUTO_TIMING_UPDATE.rawValue
                                      | PA_STREAM_ADJUST_LATENCY.rawValue | (corked ? PA_STREAM_START_CORKED.rawValue : 0))
        let connectedStream = device.map { pa_stream_connect_record(stream, $0, &attributes, flags) }
            ?? pa_stream_connect_record(stream, nil, &attributes, flags)
        guard connectedStream >= 0 else { throw fail(stream, place, context.lastError) }
        while true {
            let state = pa_stream_get_state(stream)
            if state == PA_STREAM_READY { break }
            if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED || deadline.passed {
                let reason = deadline.passed ? "the server did not answer within \(connectTimeout) s" : context.lastError
                throw fail(stream, place, reason)
            }
            mainloop.wait()
        }
        deadline.cancel()
        if serverName.contains("PipeWire") { callbacks.graphTiming = GraphCycleTiming(rate: buffer.sampleRate) }
        callbacks.running.store(true, ordering: .releasing)
        let sourceName = pa_stream_get_device_name(stream).map { String(cString: $0) } ?? place
        mainloop.unlock()

        self.mainloop = mainloop
        self.context = context
        self.stream = stream
        self.callbacks = callbacks
        self.corked = Atomic(corked)
        callbacks.timingFresh.store(!corked, ordering: .releasing)
        self.server = serverName
        self.source = sourceName
    }

    deinit { close() }

    private let corked: Atomic<Bool>

    /// Starts delivering, if the stream was opened corked. Any thread but libpulse's.
    func resume() {
        guard corked.exchange(false, ordering: .acquiringAndReleasing), !closed.load(ordering: .acquiring) else { return }
        mainloop.lock()
        callbacks.timingFresh.store(false, ordering: .releasing)
        // Snapshots of the corked stream say nothing of the running one.
        callbacks.graphTiming?.reset()
        if let operation = pa_stream_cork(stream, 0, nil, nil) { pa_operation_unref(operation) }
        // The server answers in order: this timing is taken after the uncork.
        let userdata = Unmanaged.passUnretained(callbacks).toOpaque()
        if let operation = pa_stream_update_timing_info(stream, { _, success, userdata in
            guard let userdata, success != 0 else { return }
            Unmanaged<Context>.fromOpaque(userdata).takeUnretainedValue().timingFresh.store(true, ordering: .releasing)
        }, userdata) {
            pa_operation_unref(operation)
        }
        mainloop.unlock()
    }

    /// The capture callback (libpulse's thread, the mainloop's lock held).
    private static func read(_ stream: OpaquePointer, _ callbacks: Context) {
        let buffer = callbacks.buffer
        let frameBytes = buffer.channels * MemoryLayout<Float>.size
        while pa_stream_readable_size(stream) > 0 {
            // The age of the oldest unread frame, before it is taken. Negative on a monitor
            // source: libpulse takes the sink's latency off, and a block the sink rendered
            // (and the monitor posted) is heard only that much later.
            var usec: pa_usec_t = 0
            var negative: Int32 = 0
            let fresh = callbacks.timingFresh.load(ordering: .acquiring)
            let age: Double? = callbacks.graphTiming != nil ? (fresh ? graphAge(stream, callbacks) : nil)
                : fresh && pa_stream_get_latency(stream, &usec, &negative) >= 0
                ? (negative != 0 ? -Double(usec) / 1e6 : Double(usec) / 1e6) : nil
            var data: UnsafeRawPointer?
            var bytes = 0
            guard pa_stream_peek(stream, &data, &bytes) >= 0, bytes > 0 else { return }
            let frames = bytes / frameBytes
            if let data {
                buffer.push(data.assumingMemoryBound(to: Float.self), frames: frames, age: age)
            } else {
                buffer.pushSilence(frames: frames, age: age, scratch: callbacks.scratch, scratchFrames: callbacks.scratchFrames)
            }
            pa_stream_drop(stream)
        }
    }

    /// The capture callback on pipewire-pulse: takes the latest snapshot into the clock, asks
    /// for the next one (one at a time: one a fragment until the clock has narrowed, then
    /// every 0.1 s), and returns the age of the
    /// oldest unread frame by the clock; nil before the clock has a snapshot.
    private static func graphAge(_ stream: OpaquePointer, _ callbacks: Context) -> Double? {
        guard var timing = callbacks.graphTiming else { return nil }
        timing.requestSnapshot(of: stream)
        defer { callbacks.graphTiming = timing }
        guard let info = pa_stream_get_timing_info(stream)?.pointee else { return nil }
        let frameBytes = Int64(callbacks.buffer.channels * MemoryLayout<Float>.size)
        timing.take(info, index: Int64(info.write_index) / frameBytes, valid: info.write_index_corrupt == 0)
        guard info.read_index_corrupt == 0, let captured = timing.clock.position(at: MonotonicClock.seconds()) else { return nil }
        return (captured - Double(Int64(info.read_index) / frameBytes)) / Double(callbacks.buffer.sampleRate)
    }

    /// Any thread; once.
    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        callbacks.running.store(false, ordering: .releasing)
        mainloop.lock()
        callbacks.graphTiming?.cancel()
        PulseInput.teardown(mainloop: mainloop, context: context, stream: stream)
    }

    /// With the lock held: releases the stream and context, unlocks, stops libpulse's thread
    /// and frees the mainloop.
    private static func teardown(mainloop: PulseMainloop, context: PulseContext, stream: OpaquePointer?) {
        if let stream {
            pa_stream_set_state_callback(stream, nil, nil)
            pa_stream_set_read_callback(stream, nil, nil)
            pa_stream_set_moved_callback(stream, nil, nil)
            pa_stream_disconnect(stream)
            pa_stream_unref(stream)
        }
        context.release()
        mainloop.unlock()
        mainloop.stop()
    }
}
