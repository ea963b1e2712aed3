import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One source in the engine: a decoded file on its way to the mix.
///
/// Three threads share it without locks. The app's thread sets the controls (atomics);
/// the engine's reader thread decodes, resamples and stretches into ``ring``; the render
/// thread mixes from the ring, applies gain and pan, meters, and publishes the position.
/// ``AudioPlayer`` is the public face; `Voice` is what the engine schedules.
public final class Voice: @unchecked Sendable {
    /// A point on the timeline: the ring frame where media time `mediaTime` begins.
    struct Mark: BitwiseCopyable {
        var ringFrame: UInt64
        var mediaTime: Double
        /// Media seconds per ring frame (1/engine rate × playback rate).
        var mediaPerFrame: Double
        var isEnd: Bool
        /// The first mark after a loop's wrap (the media time went back to the start).
        var isWrap = false
    }

    enum PlayState: Int {
        case stopped = 0, playing = 1, paused = 2
        /// Waiting to start on the frame where its predecessor ends (gapless).
        case queued = 3
    }

    public let file: any FrameSource
    unowned let engine: AudioEngine
    let ring: FrameRing
    let marks: ValueRing<Mark>

    // App → render and reader.
    let playState = Atomic<Int>(PlayState.stopped.rawValue)
    /// Engine frame at which playback starts; `Int64.min` for “now”.
    let startFrame = Atomic<Int64>(Int64.min)
    let targetVolume = AtomicFloat(1)
    let fadeFrames = Atomic<Int>(0)
    let volumeGeneration = Atomic<UInt32>(0)
    let pan = AtomicFloat(0)
    let meteringEnabled = Atomic<Bool>(false)
    let numberOfLoops = Atomic<Int>(0)
    let seekTarget = AtomicDouble(0)
    let seekGeneration = Atomic<UInt32>(0)
    let rate = AtomicFloat(1)
    let rateEnabled = Atomic<Bool>(false)
    /// Whether the reader keeps the ring filled (set by prepare and play, cleared by stop).
    let prepared = Atomic<Bool>(false)
    let resetLoopsRequested = Atomic<Bool>(false)
    /// Paused while nothing else played: when the engine drops the buffered audio, the
    /// voice goes back to what was heard.
    let rewindOnFlush = Atomic<Bool>(false)
    /// Plays that found the voice not playing (counted by ``play(atDeviceTime:)``, before it
    /// says playing): each is a start, to be heard, even where the mixer never saw the
    /// pause before it (see ``renderPlaysSeen``).
    let playsFromStill = Atomic<UInt64>(0)
    /// Until that rewind: the position the pause expects to stop at (what is heard now, plus
    /// what the output will still play after its flush), for ``currentTime``.
    let pausedPosition = AtomicDouble(0)
    /// 0 free, 1 the render thread mixes from the ring, 2 the reader thread resets it.
    let ringOwner = Atomic<Int>(0)
    /// The reader has buffered the engine's `primeFrames` (or the whole rest of the file,
    /// or half the ring) since the ring was last reset: the voice may start. A stopped
    /// stream takes a whole output buffer (2304 frames by default) in one burst when it
    /// starts; a voice that started on the reader's first block would run dry inside that
    /// burst and leave a hole in its sound.
    let primed = Atomic<Bool>(false)

    // Render → app.
    /// The media time of the ring's read position: what was last *mixed*.
    let position = AtomicDouble(0)
    /// Media time against engine frames, for the position that is *heard*.
    let clock = VoiceClock()
    let meterPeakLeft = AtomicFloat(0)
    let meterPeakRight = AtomicFloat(0)
    let meterMeanSquareLeft = AtomicFloat(0)
    let meterMeanSquareRight = AtomicFloat(0)
    let finishedFlag = Atomic<Bool>(false)
    /// Started by the render thread on its predecessor's end (``play(after:)``), and not
    /// played, paused or stopped by a call since, nor its end heard: it plays, or has already
    /// ended in the mix (a voice shorter than a long buffer) while its predecessor's end is
    /// still to be heard. See ``startedByPredecessor``.
    let startedBySuccession = Atomic<Bool>(false)
    /// The engine frame just after the voice's last frame (when it will have been heard).
    let endFrame = Atomic<Int64>(0)
    /// Set by the render thread as it mixes the voice's last frame; taken (cleared) by the
    /// event thread once that frame is heard, which then reports the finish, or before then
    /// by a call that takes the end back (see ``takeBackUnheardEnd()``): a pause, seek, play
    /// or stop meant for what the listener still hears. While set, the voice has ended in
    /// the mix and its end is still to be heard (up to a long buffer later): its ring, clock
    /// and position stay as the end left them.
    let endUnheard = Atomic<Bool>(false)
    /// How many ends were taken back: a finish the event thread holds from an earlier count
    /// is not reported.
    let endsTakenBack = Atomic<UInt64>(0)
    let dropouts = Atomic<Int>(0)
    /// Slot index in the engine's render table, or -1.
    let slot = Atomic<Int>(-1)
    /// The voice to start where this one ends (unretained; its owner keeps it alive).
    let successor = Atomic<UInt>(0)
    /// The render cycle this voice was last mixed in (so a successor started mid-period
    /// is not mixed twice).
    var lastRenderedCycle: UInt64 = .max

    // Render-thread state.
    var renderGain: Float = 1
    var renderGainStep: Float = 0
    var renderGainFramesLeft = 0
    var renderVolumeGeneration: UInt32 = 0
    var renderMark = Mark(ringFrame: 0, mediaTime: 0, mediaPerFrame: 0, isEnd: false)
    /// The last non-zero media seconds per frame (an end mark has none).
    var renderPerFrame: Double
    /// Whether the voice has mixed a frame since it was (re)started: until then it waits
    /// for the reader to have ``primed`` the ring (a play without prepare starts a little
    /// late, as with AVAudioPlayer), and an empty ring is not a dropout.
    var renderHasStarted = false
    /// ``playsFromStill`` as the mixer last started the voice. A pause and a play that both
    /// come before the mixer looks (an interruption that begins and ends within a few
    /// milliseconds) leave the voice started in the mix, with no flush and no rewind to
    /// start it again; the count tells the mixer that a start is owed all the same, so
    /// that the start handler is called for every play (a session waits for a resumed
    /// player to be heard before it reports its sound).
    var renderPlaysSeen: UInt64 = 0
    /// The engine frame just after the last frame mixed from the ring, and the engine frame
    /// since which the ring's frames were mixed without a gap (one ring frame per engine
    /// frame): a rewind to an engine frame in between goes back in the ring by the same
    /// count (see ``rewind(toEngineFrame:)``).
    var renderEndFrame: Int64 = .min
    var renderContiguousFrom: Int64 = .max
    /// The engine frame of the first frame mixed since the voice's (re)start, and whether
    /// that start was scheduled (`play(atDeviceTime:)`) rather than "now": a restart that
    /// goes back before it un-mixes the voice (see ``rewind(toEngineFrame:dryRun:)``).
    var renderStartedAt: Int64 = .min
    var renderStartWasScheduled = false
    var renderPeak: (Float, Float) = (0, 0)
    var renderMeanSquare: (Float, Float) = (0, 0)

    // Reader-thread state lives in `Voice+Reader.swift`.
    let reader: VoiceReader

    /// The engine frame where the voice began to sound after its last (re)start, until the
    /// event thread has reported it heard; `Int64.min` when nothing is pending.
    let heardStartFrame = Atomic<Int64>(Int64.min)
    /// Whether the voice's next start (its first play, or a play after a seek, a rate change
    /// or its end: whenever its ring starts again) has not been heard yet. Set by whoever
    /// starts the ring again (the app's seek, the reader's restart, the render thread at the
    /// end); cleared by the event thread when it reports the start heard. Until then a playing
    /// voice's position stands still (the output is opening, the sink waking, or the ring
    /// filling), so ``isWaitingToBeHeard`` tells an owner not to extrapolate it yet.
    let awaitingStart = Atomic<Bool>(true)
    /// The engine frame where the last wrap of a looping play sounds, until the event thread
    /// has reported it heard; `Int64.min` when nothing is pending. Set by the render thread.
    let heardWrapFrame = Atomic<Int64>(Int64.min)
    /// Set by the render thread when a pause's flush put the voice back to the frame the
    /// listener reached (``currentTime`` is exact from then on, where it was the pause call's
    /// estimate before), until the event thread has reported it.
    let pauseSettled = Atomic<Bool>(false)

    /// Events, called on the engine's event thread.
    let onStarted = Mutex<(@Sendable () -> Void)?>(nil)
    let onWrapped = Mutex<(@Sendable () -> Void)?>(nil)
    let onPauseSettled = Mutex<(@Sendable () -> Void)?>(nil)
    let onFinished = Mutex<(@Sendable (_ successfully: Bool) -> Void)?>(nil)
    let onError = Mutex<(@Sendable (any Error) -> Void)?>(nil)
    /// A decode error met by the reader, reported when the voice finishes.
    let decodeError = Mutex<AudioFileError?>(nil)
    /// The seek generation the reader has applied (so `currentTime` can show a pending seek).
    let appliedSeekGeneration = Atomic<UInt32>(0)
    /// Whether a seek was asked for that the reader has not applied yet: the ring and the
    /// render's mark still belong to the old place. Any thread.
    var seekPending: Bool {
        seekGeneration.load(ordering: .acquiring) != appliedSeekGeneration.load(ordering: .acquiring)
    }
    /// Set by a seek asked while the voice did not play, cleared by the reader as it applies
    /// a seek: until then nothing of the old place is mixed. (A voice sought while it plays
    /// plays on at the old place until the new one is ready; a paused one's ring still holds
    /// what came after the pause, which is not to be heard once it was sought away.)
    let soughtWhileStill = Atomic<Bool>(false)
    /// Whether the source has run dry (see `Voice+Supply.swift`): set by the reader, reported
    /// by the event thread, which remembers in `supplyReported` what it last said.
    let supplyStarved = Atomic<Bool>(false)
    let supplyReported = Atomic<Bool>(false)
    let onSupplyChange = Mutex<(@Sendable (_ starved: Bool) -> Void)?>(nil)

    /// The fewest ring frames one mark stands for: the reader writes a mark per block of at
    /// least half ``VoiceReader/blockFrames`` input frames, which become fewer ring frames
    /// when converted down to the engine's rate and played at the fastest rate (2). A ring
    /// whose marks ran out before its frames could never hold what a start needs (a 384 kHz
    /// file on a two-second buffer waited for it forever), so the marks are sized from this.
    /// At most 128: the time-stretcher hands its output over in pieces of its own size,
    /// each with a mark of its own.
    static func fewestFramesPerMark(fileRate: Int, engineRate: Int) -> Int {
        let down = min(1, Double(engineRate) / Double(max(1, fileRate)))
        return max(1, min(128, Int(Double(VoiceReader.blockFrames / 2) * down / 2)))
    }

    init(file: any FrameSource, engine: AudioEngine) throws {
        self.file = file
        self.engine = engine
        let rate = engine.sampleRate
        let retain = engine.voiceRetainFrames(rate: rate)
        let ringFrames = engine.voiceRingFrames(rate: rate)
        ring = FrameRing(channels: 2, capacityFrames: ringFrames, retainFrames: retain)
        // A mark per block the reader writes: room for a mark for every block a full ring
        // holds, and enough kept marks to go back over every kept frame.
        let perMark = Voice.fewestFramesPerMark(fileRate: file.format.sampleRate, engineRate: rate)
        marks = ValueRing<Mark>(capacity: ringFrames / perMark + 16, retain: retain > 0 ? retain / perMark + 4 : 0)
        renderPerFrame = 1 / Double(rate)
        reader = try VoiceReader(file: file, engineRate: rate)
        if let stream = file as? NetworkStream {
            let wake = engine.readerWake
            stream.setArrivalHandler { wake.signal() }
        }
    }

    var state: PlayState { PlayState(rawValue: playState.load(ordering: .acquiring)) ?? .stopped }

    // MARK: Render thread

    /// Mixes this voice into `mix` (interleaved stereo, `frames` long) whose first frame
    /// is engine frame `firstFrame`. Allocates nothing, takes no lock, never waits.
    @inline(__always)
    func render(into mix: UnsafeMutablePointer<Float>, frames: Int, firstFrame: Int64, cycle: UInt64) {
        guard lastRenderedCycle != cycle else { return }
        lastRenderedCycle = cycle
        guard ringOwner.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged else { return }
        defer { ringOwner.store(0, ordering: .releasing) }
        guard playState.load(ordering: .acquiring) == PlayState.playing.rawValue else { return }

        var offset = 0
        let start = startFrame.load(ordering: .relaxed)
        if start != Int64.min {
            if start > firstFrame {
                guard start < firstFrame + Int64(frames) else { return }
                offset = Int(start - firstFrame)
            }
            startFrame.store(Int64.min, ordering: .relaxed)
        }

        let generation = volumeGeneration.load(ordering: .acquiring)
        if generation != renderVolumeGeneration {
            renderVolumeGeneration = generation
            let target = targetVolume.value
            let fade = max(1, fadeFrames.load(ordering: .relaxed))
            renderGainStep = (target - renderGain) / Float(fade)
            renderGainFramesLeft = fade
        }
        let p = pan.value
        let panLeft: Float = p > 0 ? 1 - p : 1
        let panRight: Float = p < 0 ? 1 + p : 1
        let metering = meteringEnabled.load(ordering: .relaxed)
        var levels = MixKernels.Levels()

        // Not started until it has something of its new place: a voice whose seek the reader
        // has not applied yet has only the old place's ring and mark. Started then, a voice
        // that had ended in the mix (its end mark still the render's) ended again at once,
        // and its item's rest was lost: a queue's seek in an item's last buffer, under load,
        // once the stream's start had waited its half second. Nor, once started, while a seek
        // asked when it did not play is on its way (``soughtWhileStill``).
        let holds = renderHasStarted
            ? soughtWhileStill.load(ordering: .acquiring) && seekPending
            : seekPending || (!primed.load(ordering: .acquiring) && !renderMark.isEnd)
        if holds {
            if start != Int64.min { startFrame.store(start, ordering: .relaxed) }
            return
        }
        // After the `playing` load above: a play counts before it says playing.
        let plays = playsFromStill.load(ordering: .acquiring)
        if !renderHasStarted || plays != renderPlaysSeen {
            renderPlaysSeen = plays
            heardStartFrame.store(firstFrame + Int64(offset), ordering: .releasing)
            engine.eventSemaphore.signal()
            renderStartedAt = firstFrame + Int64(offset)
            renderStartWasScheduled = start != Int64.min
        }
        renderHasStarted = true
        var out = mix + offset * 2
        let wanted = frames - offset
        let wasAboveHalf = ring.availableToRead >= ring.capacity / 2
        // The loop works on locals: class properties touched per frame pay for Swift's
        // dynamic exclusivity checks, which cost more than the mixing.
        var gain = renderGain
        let gainStep = renderGainStep
        var gainFramesLeft = renderGainFramesLeft
        let target = targetVolume.value
        let readStart = firstFrame + Int64(offset)
        if readStart != renderEndFrame { renderContiguousFrom = readStart }
        let got = ring.read(frames: wanted) { span, count, _ in
            // A volume ramp, frame by frame; then the rest at one gain, four samples at a time.
            let ramped = min(count, gainFramesLeft)
            for i in 0..<ramped {
                gain += gainStep
                gainFramesLeft -= 1
                if gainFramesLeft == 0 { gain = target }
                let l = span[2 * i] * gain * panLeft
                let r = span[2 * i + 1] * gain * panRight
                out[0] += l
                out[1] += r
                out += 2
                if metering {
                    levels.peak = SIMD2(max(levels.peak.x, abs(l)), max(levels.peak.y, abs(r)))
                    levels.sumSquares += SIMD2(l * l, r * r)
                }
            }
            let steady = count - ramped
            guard steady > 0 else { return }
            let gains = SIMD2(gain * panLeft, gain * panRight)
            if metering {
                MixKernels.addMeasuring(span + 2 * ramped, to: out, frames: steady, gains: gains, levels: &levels)
            } else {
                MixKernels.add(span + 2 * ramped, to: out, frames: steady, gains: gains)
            }
            out += 2 * steady
        }
        // The reader sleeps until a ring falls below half full: wake it once per crossing.
        if wasAboveHalf, ring.availableToRead < ring.capacity / 2 { engine.readerWake.signal() }
        renderGain = gain
        renderGainStep = gainStep
        renderGainFramesLeft = gainFramesLeft
        renderEndFrame = got == wanted ? readStart + Int64(got) : .min
        if metering, got > 0 { publishMeters(levels, frames: got) }
        publishPosition(readStartFrame: firstFrame + Int64(offset), read: got)
        if got > 0 {
            if renderMark.mediaPerFrame > 0 { renderPerFrame = renderMark.mediaPerFrame }
            clock.record(VoiceClock.Anchor(endFrame: firstFrame + Int64(offset + got), endMedia: position.value,
                                           perFrame: renderPerFrame, frames: Int64(got)))
        }

        if got < wanted {
            if renderMark.isEnd, ring.availableToRead == 0 {
                // At the end of what was mixed; unless a seek asked before it is on its way.
                guard !seekPending else { return }
                renderHasStarted = false
                // Mixed without a gap up to its end: a restart before the end is heard can
                // mix it again from there (see `rewind(toEngineFrame:dryRun:)`).
                renderEndFrame = firstFrame + Int64(offset + got)
                awaitingStart.store(true, ordering: .releasing)
                playState.store(PlayState.stopped.rawValue, ordering: .releasing)
                endFrame.store(firstFrame + Int64(offset + got), ordering: .relaxed)
                endUnheard.store(true, ordering: .releasing)
                finishedFlag.store(true, ordering: .releasing)
                startSuccessor(at: firstFrame + Int64(offset + got), mix: mix, frames: frames, firstFrame: firstFrame, cycle: cycle)
                engine.eventSemaphore.signal()
            } else {
                dropouts.add(1, ordering: .relaxed)
            }
        }
    }

    /// Render thread, for a restart (the output dropped what it had not played): goes back
    /// to engine frame `frame`, so that the next mix reads the voice from there again: the
    /// ring's kept frames are read again, the timeline mark in force there comes back, and
    /// the heard position ends there until the next mix. With `dryRun`, only says whether it
    /// could. Returns false, changing nothing, when it cannot: the voice was not mixed
    /// without a gap since `frame`, or the ring no longer keeps those frames. A voice not
    /// mixed since its (re)start, or whose ring the reader is about to reset for a seek, has
    /// nothing to undo. A voice that started after `frame` (mixed ahead, into what the
    /// restart drops: it began to play while the render thread was filling a long buffer) is
    /// un-mixed whole and starts again on the next mix, "now" or at its scheduled frame.
    /// A voice whose end was mixed after `frame` and is not yet heard (nor taken back, see
    /// ``endUnheard``) plays again from there, as if it had not ended: a change in its last
    /// buffer is heard at once, and its end comes again on the same frame.
    /// Takes no lock, allocates nothing.
    func rewind(toEngineFrame requested: Int64, dryRun: Bool) -> Bool {
        guard ringOwner.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged else { return false }
        defer { ringOwner.store(0, ordering: .releasing) }
        let revive = !renderHasStarted && renderEndFrame != .min && endUnheard.load(ordering: .acquiring)
            && playState.load(ordering: .acquiring) == PlayState.stopped.rawValue
        guard renderHasStarted || revive, !seekPending else { return true }
        guard renderEndFrame != .min else { return false }
        let unstart = requested < renderStartedAt && renderContiguousFrom == renderStartedAt
        let frame = unstart ? renderStartedAt : requested
        let back = renderEndFrame - frame
        guard back > 0 else { return true }
        guard frame >= renderContiguousFrom, back <= Int64(ring.rewindable) else { return false }
        let target = ring.framesRead &- UInt64(back)
        var found: (index: UInt64, mark: Mark)?
        marks.forEachKept { index, mark in
            guard mark.ringFrame <= target else { return true }
            found = (index, mark)
            return false
        }
        guard let found else { return false }
        if dryRun { return true }
        if revive {
            // Claimed before the ring moves. A pause, seek, play or stop that took the end back
            // meanwhile has put the voice elsewhere (and sets its state): it is left alone.
            guard playState.compareExchange(expected: PlayState.stopped.rawValue, desired: PlayState.playing.rawValue,
                                            ordering: .acquiringAndReleasing).exchanged,
                  endUnheard.exchange(false, ordering: .acquiringAndReleasing) else { return true }
            renderHasStarted = true
            awaitingStart.store(false, ordering: .releasing)
        }
        ring.rewind(by: Int(back))
        marks.rewind(to: found.index &+ 1)
        renderMark = found.mark
        renderEndFrame = frame
        publishPosition(readStartFrame: frame, read: 0)
        clock.record(VoiceClock.Anchor(endFrame: frame, endMedia: position.value, perFrame: renderPerFrame, frames: 0))
        if unstart {
            // As before its first mix: the next one starts it and reports where.
            renderHasStarted = false
            renderEndFrame = .min
            renderContiguousFrom = .max
            heardStartFrame.store(Int64.min, ordering: .releasing)
            startFrame.store(renderStartWasScheduled ? renderStartedAt : Int64.min, ordering: .relaxed)
        }
        return true
    }

    /// Starts the queued successor on `frame` and mixes its part of this period now.
    @inline(__always)
    private func startSuccessor(at frame: Int64, mix: UnsafeMutablePointer<Float>, frames: Int, firstFrame: Int64, cycle: UInt64) {
        let bits = successor.exchange(0, ordering: .acquiringAndReleasing)
        guard bits != 0, let pointer = UnsafeRawPointer(bitPattern: bits) else { return }
        let next = Unmanaged<Voice>.fromOpaque(pointer).takeUnretainedValue()
        guard next.playState.compareExchange(expected: PlayState.queued.rawValue, desired: PlayState.playing.rawValue,
                                             ordering: .acquiringAndReleasing).exchanged else { return }
        next.startFrame.store(frame, ordering: .relaxed)
        next.startedBySuccession.store(true, ordering: .releasing)
        if next.lastRenderedCycle == cycle { next.lastRenderedCycle = cycle &- 1 }
        next.render(into: mix, frames: frames, firstFrame: firstFrame, cycle: cycle)
    }

    /// Advances the timeline mark to the ring's read position and stores the media time.
    @inline(__always)
    ///
    /// A wrap mark read in this period records the engine frame where it sounds
    /// (`readStartFrame` is the engine frame of the period's first frame read from the
    /// ring, `read` how many were read) for the event thread, and wakes it: atomics and a
    /// semaphore post, nothing that allocates or locks.
    private func publishPosition(readStartFrame: Int64, read: Int) {
        let readFrame = ring.framesRead
        while let next = marks.peek(), next.ringFrame <= readFrame {
            renderMark = next
            marks.pop()
            if next.isWrap {
                let into = Int64(bitPattern: next.ringFrame &- (readFrame &- UInt64(read)))
                heardWrapFrame.store(readStartFrame + max(0, into), ordering: .releasing)
                engine.eventSemaphore.signal()
            }
        }
        if renderMark.isEnd {
            position.store(renderMark.mediaTime)
        } else {
            position.store(renderMark.mediaTime + Double(readFrame &- renderMark.ringFrame) * renderMark.mediaPerFrame)
        }
    }

    /// Meters follow AVAudioPlayer's: a peak that falls back over about a second and
    /// a mean square averaged over about 300 ms.
    @inline(__always)
    private func publishMeters(_ levels: MixKernels.Levels, frames: Int) {
        let peak = (levels.peak.x, levels.peak.y), sumSquares = (levels.sumSquares.x, levels.sumSquares.y)
        let seconds = Float(frames) / Float(reader.engineRate)
        let decay = max(0, 1 - seconds / 1.0)
        let smoothing = min(1, seconds / 0.3)
        renderPeak = (max(peak.0, renderPeak.0 * decay), max(peak.1, renderPeak.1 * decay))
        let ms = (sumSquares.0 / Float(frames), sumSquares.1 / Float(frames))
        renderMeanSquare = (renderMeanSquare.0 + (ms.0 - renderMeanSquare.0) * smoothing,
                            renderMeanSquare.1 + (ms.1 - renderMeanSquare.1) * smoothing)
        meterPeakLeft.store(renderPeak.0)
        meterPeakRight.store(renderPeak.1)
        meterMeanSquareLeft.store(renderMeanSquare.0)
        meterMeanSquareRight.store(renderMeanSquare.1)
    }
}
