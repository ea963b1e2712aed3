import Platform
public import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One recording into a file: an input stream (sound server or ALSA) whose capture callback
/// fills a ring, and a writer thread that takes the ring's frames and writes the ones that
/// belong to the recording through libsndfile (or FFmpeg, for AAC and Apple Lossless).
///
/// The writer thread sleeps on the capture buffer's semaphore: it wakes once per captured
/// fragment (about 20 ms) and on every command, never on a timer. The capture callback does
/// no file I/O, so a slow or full disk cannot stall the input.
///
/// What goes into the file is a list of segments of capture-frame indices: ``start(atDeviceTime:duration:)``
/// opens one at the frame captured at that time, ``pause()`` closes it at the frame captured
/// now. Segments follow each other without overlap, so a pause leaves neither a gap nor a
/// repeat. ``stop()`` ends the last one at the frame captured now, waits for the writer to
/// write up to it and finish the file, and returns.
public final class Recording: @unchecked Sendable {
    /// How a recording ended.
    public enum Ending: Sendable, Hashable {
        /// ``stop()`` or the duration was reached: the file is complete.
        case finished
        /// The file could not be written, or the input failed: the file holds what was
        /// recorded until then and is valid (when it still exists).
        case failed(RecordingError)
    }

    /// The file written.
    public let path: String
    /// What is written.
    public let format: RecordingFormat
    /// The input opened.
    public let input: AudioEngine.InputKind
    let engine: AudioEngine
    private let buffer: CaptureBuffer
    private let stream: any CaptureInput
    private let writer: any RecordingWriter

    private struct Segment {
        var start: UInt64
        var end: UInt64?
        /// A start asked for now before the input captured anything (it idles until the
        /// first start): the monotonic time, made a frame index once the capture clock is known.
        var startTime: Double?
        /// A start asked for at a time on the engine's device clock: made a monotonic time,
        /// then a frame index, only when the writer places it (the device clock then, which
        /// has waited out any stall of the output since the call).
        var startDeviceTime: Double?
        var isPending: Bool { startTime != nil || startDeviceTime != nil }
    }

    private struct Control {
        var segments: [Segment] = []
        var stopAt: UInt64?
        /// Frames of the file at which it ends by itself (``start(atDeviceTime:duration:)``).
        var limit: Int64?
        var ending: Ending?
        var onEnd: (@Sendable (Ending) -> Void)?
    }

    private let control = Mutex(Control())
    private let ended = Semaphore()
    private let isEnded = Atomic<Bool>(false)
    private let written = Atomic<Int64>(0)
    private let recordingFlag = Atomic<Bool>(false)

    // Meters, accumulated by the writer since the last `takeMeters`.
    private struct MeterState {
        var peak: [Float]
        var sumSquares: [Double]
        var frames = 0
    }
    private let meters: Mutex<MeterState>
    /// Whether the writer measures levels.
    public let isMeteringEnabled = Atomic<Bool>(false)

    /// Opens the file and the input. A sound-server input idles (its stream corked: no
    /// fragment wakes the process) until the first ``start(atDeviceTime:duration:)``; an ALSA
    /// input captures from now on. Nothing is written before a start.
    ///
    /// - Throws: ``RecordingError``: the file cannot be created, the format is not
    ///   supported, or the input cannot be opened.
    public convenience init(path: String, format: RecordingFormat, input choice: AudioEngine.InputChoice = .init(),
                            identity: AudioEngine.StreamIdentity, engine: AudioEngine = .shared) throws(RecordingError) {
        try self.init(path: path, format: format, engine: engine, openInput: { buffer throws(RecordingError) in
            do throws(AudioEngineError) {
                return try engine.openInput(choice, identity: identity, buffer: buffer)
            } catch {
                switch error {
                case .deviceUnavailable(let device, let reason): throw .inputFailed(input: device, reason: reason)
                default: throw .inputFailed(input: choice.device ?? "the default input", reason: "\(error)")
                }
            }
        })
    }

    /// Opens the file, then the input `openInput` makes for the capture buffer (the engine's,
    /// or a test's own input that needs no sound server). A file created before the input
    /// failed is removed.
    init(path: String, format: RecordingFormat, engine: AudioEngine,
         openInput: (CaptureBuffer) throws(RecordingError) -> any CaptureInput) throws(RecordingError) {
        self.path = path
        self.format = format
        self.engine = engine
        writer = try format.openWriter(path: path)
        let buffer = CaptureBuffer(sampleRate: format.sampleRate, channels: format.channels)
        self.buffer = buffer
        do throws(RecordingError) {
            stream = try openInput(buffer)
        } catch {
            try? writer.finish()
            unlink(path)
            throw error
        }
        input = stream.kind
        // The writer wakes for every 100 ms captured, not every fragment: half the wakeups
        // of the process while recording (the meters follow at that pace).
        buffer.wakeFrames.store(format.sampleRate / 10, ordering: .relaxed)
        meters = Mutex(MeterState(peak: Array(repeating: 0, count: format.channels), sumSquares: Array(repeating: 0, count: format.channels)))
        stream.onResumed { [weak self] gap in
            guard let self else { return }
            for handler in resumedHandlers.withLock({ $0 }) { handler(gap) }
        }
        let threadDone = writerDone
        let recording = Unmanaged.passUnretained(self)
        startThread(name: "earshot-writer") {
            recording.takeUnretainedValue().writerThread()
            threadDone.signal()
        }
    }

    /// Posted when the writer thread has returned (deinit waits for it: the thread holds
    /// the recording unretained).
    private let writerDone = Semaphore()

    deinit {
        _ = stop()
        writerDone.wait()
    }

    // MARK: Commands (any thread)

    /// The capture frame index of a device time (the engine's ``AudioEngine/deviceCurrentTime``), or of now.
    private func frameIndex(deviceTime: Double?) -> UInt64 {
        buffer.frameIndex(atMonotonic: monotonicTime(deviceTime: deviceTime))
    }

    /// The monotonic time of a device time, or now.
    private func monotonicTime(deviceTime: Double?) -> Double {
        let now = MonotonicClock.seconds()
        return deviceTime.map { now + ($0 - engine.deviceCurrentTime) } ?? now
    }

    /// What the writer learns from ``resolvePendingStarts(_:closing:readableEnd:settled:)``.
    private struct PendingStarts {
        /// A start waits for the capture clock to settle: nothing may be read yet.
        var hold = false
        /// Frames past what can be read now to the earliest start still waiting for its frame.
        var framesToStart: UInt64?
    }

    /// Under the control lock: gives starts asked for at a time (``start(atDeviceTime:duration:)``
    /// with a time) their frame index. When `closing` (pause, stop), at once with the clock as it
    /// is; without a clock a pending segment that is closed is dropped: nothing was captured
    /// in it. Otherwise (the writer) as late as possible, for the input's latest timing: once
    /// the clock is `settled` and the frame at that time is among those captured
    /// (below `readableEnd`); before the clock settles the writer holds its reading, so that
    /// no frame a start may want is read past.
    @discardableResult
    private func resolvePendingStarts(_ c: inout Control, closing: Bool = false, readableEnd: UInt64 = .max,
                                      settled: Bool = true) -> PendingStarts {
        let clock = buffer.hasClock
        var pending = PendingStarts()
        var kept: [Segment] = []
        for var segment in c.segments {
            if let time = segment.startDeviceTime.map({ monotonicTime(deviceTime: $0) }) ?? segment.startTime {
                if closing {
                    guard clock else { continue }
                    segment.start = max(buffer.frameIndex(atMonotonic: time), kept.last?.end ?? 0)
                    (segment.startTime, segment.startDeviceTime) = (nil, nil)
                } else if !clock || !settled {
                    pending.hold = true
                } else {
                    let index = buffer.frameIndex(atMonotonic: time)
                    if index >= readableEnd {
                        pending.framesToStart = min(pending.framesToStart ?? .max, index - readableEnd)
                    } else {
                        segment.start = max(index, kept.last?.end ?? 0)
                        (segment.startTime, segment.startDeviceTime) = (nil, nil)
                    }
                }
            }
            kept.append(segment)
        }
        c.segments = kept
        return pending
    }

    /// Starts (or continues, after ``pause()``) writing with the frame captured at `time` on
    /// the engine's device clock (now when nil), for `duration` seconds of file when given.
    /// Returns false when the recording has ended.
    ///
    /// A start at a time is placed when the frame captured then arrives: by the input's
    /// timing then (on a sound server, timing taken after the stream started, not the
    /// corked stream's) and by the device clock then, so that an output that stalled
    /// meanwhile (its clock waited) moves the start with it.
    @discardableResult
    public func start(atDeviceTime time: Double? = nil, duration: Double? = nil) -> Bool {
        let target = monotonicTime(deviceTime: time)
        let clock = buffer.hasClock
        let index = buffer.frameIndex(atMonotonic: target)
        let started: Bool = control.withLock { c in
            guard c.ending == nil, c.stopAt == nil else { return false }
            if let last = c.segments.last, last.end == nil { return true }
            let start = max(index, c.segments.last?.end ?? 0)
            // A start at a time waits in the writer for the frame captured then: the
            // capture clock it is placed by is the freshest when that frame arrives.
            c.segments.append(Segment(start: start, end: nil, startTime: clock || time != nil ? nil : target, startDeviceTime: time))
            if let duration, duration.isFinite, duration >= 0 {
                c.limit = written.load(ordering: .acquiring) + Int64((duration * Double(format.sampleRate)).rounded())
            } else {
                c.limit = nil
            }
            return true
        }
        if started {
            stream.resume()
            recordingFlag.store(true, ordering: .releasing)
            // Until the first frames are written, every fragment wakes the writer: a start
            // is in the file within a fragment, then the writer batches again.
            buffer.wakeFrames.store(0, ordering: .relaxed)
        }
        buffer.wake.signal()
        return started
    }

    /// Stops writing at the frame captured now; ``start(atDeviceTime:duration:)`` continues
    /// the same file.
    public func pause() {
        let index = frameIndex(deviceTime: nil)
        control.withLock { c in
            resolvePendingStarts(&c, closing: true)
            guard let last = c.segments.indices.last, c.segments[last].end == nil else { return }
            c.segments[last].end = max(index, c.segments[last].start)
        }
        recordingFlag.store(false, ordering: .releasing)
        buffer.wake.signal()
    }

    /// Ends the recording at the frame captured now, waits until the file is complete on
    /// disk, closes the input, and says how it ended. Later calls return the same ending.
    @discardableResult
    public func stop() -> Ending {
        let index = frameIndex(deviceTime: nil)
        control.withLock { c in
            guard c.stopAt == nil else { return }
            resolvePendingStarts(&c, closing: true)
            if let last = c.segments.indices.last, c.segments[last].end == nil { c.segments[last].end = max(index, c.segments[last].start) }
            c.stopAt = index
        }
        // Every fragment up to the stop point wakes the writer now.
        buffer.wakeFrames.store(0, ordering: .relaxed)
        recordingFlag.store(false, ordering: .releasing)
        buffer.wake.signal()
        if !isEnded.load(ordering: .acquiring) {
            ended.wait()
            ended.signal()
        }
        return control.withLock { $0.ending } ?? .finished
    }

    private let resumedHandlers = Mutex<[@Sendable (Double) -> Void]>([])

    /// Calls `handler` with the gap in seconds each time the input resumes after the sound
    /// server went away and came back (``AudioEngine/InputChoice/reconnectTimeout``): the
    /// file goes on, without the time the server was away. On the input's reconnecting thread.
    public func onInputResumed(_ handler: @escaping @Sendable (Double) -> Void) {
        resumedHandlers.withLock { $0.append(handler) }
    }

    /// Calls `handler` once, on the writer thread, when the recording ends (by ``stop()``, the
    /// duration, or a failure).
    public func onEnd(_ handler: @escaping @Sendable (Ending) -> Void) {
        let ending: Ending? = control.withLock { c in
            if c.ending == nil { c.onEnd = handler }
            return c.ending
        }
        if let ending { handler(ending) }
    }

    // MARK: State

    /// Whether frames are being written (started and not paused or ended).
    public var isRecording: Bool { recordingFlag.load(ordering: .acquiring) }
    /// Whether the recording has ended (the file is closed).
    public var hasEnded: Bool { isEnded.load(ordering: .acquiring) }
    /// Frames in the file so far.
    public var framesWritten: Int64 { written.load(ordering: .acquiring) }
    /// Seconds in the file so far.
    public var duration: Double { Double(framesWritten) / Double(format.sampleRate) }
    /// Frames the input lost because the writer fell behind.
    public var framesDropped: UInt64 { buffer.framesDropped.load(ordering: .relaxed) }

    /// The peak and RMS levels (dBFS, −160…0) per channel of the frames written since the
    /// last call; nil when none were.
    public func takeMeters() -> [(peak: Float, average: Float)]? {
        meters.withLock { m in
            guard m.frames > 0 else { return nil }
            defer {
                m.frames = 0
                for c in m.peak.indices { m.peak[c] = 0; m.sumSquares[c] = 0 }
            }
            return m.peak.indices.map { c in
                (Recording.dBFS(m.peak[c]), Recording.dBFS(Float((m.sumSquares[c] / Double(m.frames)).squareRoot())))
            }
        }
    }

    static func dBFS(_ amplitude: Float) -> Float {
        amplitude > 0 ? max(-160, min(0, 20 * log10f(amplitude))) : -160
    }

    // MARK: Writer thread

    private func writerThread() {
        var next: UInt64 = 0
        var ending: Ending?
        let channels = format.channels
        while ending == nil {
            let stopping = control.withLock { $0.stopAt != nil }
            if stopping {
                // Wait for the frames up to the stop point, but not forever (a stalled input).
                if !buffer.wake.wait(seconds: 0.5) { ending = .finished }
            } else {
                buffer.wake.wait()
            }
            next &+= buffer.takeDropped()
            var failure: RecordingError?
            // Frames in the ring mean the clock is known (it is stamped before they are
            // written): a start at a time is placed once the clock has settled and the
            // frame captured then is in the ring, before it is read.
            let available = buffer.ring.availableToRead
            // A clock that does not settle (an input that never tells its timing) does not
            // hold the writer for more than half a second of frames.
            let settled = buffer.isClockSettled || available >= format.sampleRate / 2
            let plan = control.withLock { c in
                let pending = resolvePendingStarts(&c, readableEnd: next &+ UInt64(available), settled: settled)
                return (c.segments.filter { !$0.isPending }, c.limit, c.stopAt, pending)
            }
            if plan.3.hold, !buffer.failed.load(ordering: .acquiring) {
                buffer.wakeFrames.store(0, ordering: .relaxed)
                continue
            }
            let segments = plan.0
            let limit = plan.1
            var written = self.written.load(ordering: .relaxed)
            var limitReached = false
            _ = buffer.ring.read(frames: available) { pointer, count, _ in
                let chunkStart = next
                let chunkEnd = next &+ UInt64(count)
                next = chunkEnd
                guard failure == nil, !limitReached else { return }
                for segment in segments {
                    let from = max(segment.start, chunkStart)
                    var to = min(segment.end ?? UInt64.max, chunkEnd)
                    guard from < to else { continue }
                    if let limit, written + Int64(to - from) >= limit {
                        to = from + UInt64(max(0, limit - written))
                        limitReached = true
                    }
                    let frames = Int(to - from)
                    guard frames > 0 else { continue }
                    let samples = pointer + Int(from - chunkStart) * channels
                    do throws(RecordingError) {
                        try writer.write(samples, frames: frames)
                    } catch {
                        failure = error
                        return
                    }
                    written += Int64(frames)
                    if isMeteringEnabled.load(ordering: .relaxed) { measure(samples, frames: frames) }
                    if limitReached { return }
                }
            }
            if written > self.written.load(ordering: .relaxed), plan.2 == nil {
                buffer.wakeFrames.store(format.sampleRate / 10, ordering: .relaxed)
            } else if let frames = plan.3.framesToStart, plan.2 == nil {
                // A start ahead: wake when its frame is captured (or in 100 ms at most).
                buffer.wakeFrames.store(Int(min(frames + 1, UInt64(format.sampleRate / 10))), ordering: .relaxed)
            }
            self.written.store(written, ordering: .releasing)
            if failure == nil {
                do throws(RecordingError) { try writer.checkStillLinked() } catch { failure = error }
            }
            if let failure {
                ending = .failed(failure)
            } else if buffer.failed.load(ordering: .acquiring) {
                let reason = buffer.failureReason.withLock { $0 } ?? "the input failed"
                ending = .failed(.inputFailed(input: "\(input)", reason: reason))
            } else if limitReached {
                ending = .finished
            } else if let stopAt = plan.2, next >= stopAt {
                ending = .finished
            }
        }
        recordingFlag.store(false, ordering: .releasing)
        stream.close()
        var final = ending ?? .finished
        do throws(RecordingError) {
            try writer.finish()
        } catch {
            if case .finished = final { final = .failed(error) }
        }
        let handler: (@Sendable (Ending) -> Void)? = control.withLock { c in
            c.ending = final
            if c.stopAt == nil { c.stopAt = next }
            defer { c.onEnd = nil }
            return c.onEnd
        }
        isEnded.store(true, ordering: .releasing)
        ended.signal()
        handler?(final)
    }

    private func measure(_ samples: UnsafePointer<Float>, frames: Int) {
        let channels = format.channels
        meters.withLock { m in
            for c in 0..<channels {
                var peak = m.peak[c]
                var sum = 0.0
                var i = c
                for _ in 0..<frames {
                    let x = samples[i]
                    peak = max(peak, abs(x))
                    sum += Double(x * x)
                    i += channels
                }
                m.peak[c] = peak
                m.sumSquares[c] += sum
            }
            m.frames += frames
        }
    }
}
