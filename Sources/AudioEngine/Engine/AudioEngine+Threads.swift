import Synchronization
import Platform
#if canImport(Glibc)
import Glibc
#endif

/// The engine's three threads: render (real time), reader (decoding), events (callbacks).
extension AudioEngine {
    /// The render thread's body: one ``renderPeriod(_:)`` at a time. It holds the engine only for one period's work (weakly
    /// between periods, so that releasing the engine ends the thread) and sleeps outside that
    /// scope; when the engine is gone it closes the output it holds and returns.
    ///
    /// While it plays through an output that can pull (the sound server), it hands the
    /// mixing to the output's own thread after a period (``RenderPull``) and sleeps until
    /// something changes (a play, pause, stop or failure posts `wake`; the output posts it
    /// when nothing plays any more): then it takes the mixing back for its next period.
    static func runRenderThread(_ engine: WeakEngine, wake: Semaphore, configuration: Configuration) {
        requestRealtimePriority()
        let render = RenderPull(engine: engine, state: RenderState(configuration: configuration))
        defer {
            render.state.output?.close()
            render.state.mix.deallocate()
        }
        while true {
            let next: ThreadWait
            do {
                guard let engine = engine.value else { return }
                next = engine.renderPeriod(&render.state)
            }
            if case .pull = next, let output = render.state.output, output.startPulling(render) {
                wake.wait()
                output.stopPulling()
                continue
            }
            wake.wait(next)
        }
    }

    /// One period: mixes and writes it (in the steady state touching only preallocated
    /// memory and atomics; the system calls are the output's write (for the sound server:
    /// under libpulse's lock, sleeping until the server asks for more) and its delay for the
    /// clock, plus a semaphore post when an event is due), or takes a new output, or decides
    /// how long to sleep.
    ///
    /// Three states: *released* (no device: it waits to be handed one), *idle* (the
    /// device is open but nothing plays: once the buffer has played out the stream stops,
    /// so nothing is written and the next sound starts at once rather than behind queued
    /// silence), and *running* (mixing and writing). After a period written it returns
    /// ``ThreadWait/pull``: the output may take over the next periods.
    func renderPeriod(_ state: inout RenderState) -> ThreadWait {
        do {
            guard var device = state.output else {
                // A pause with no output (it failed, and the route monitor paused a queue for the
                // lost device after the render thread had seen the failure): there is nothing to
                // flush, and nothing plays on. The voice goes back from the pause's estimate (what
                // was heard and the sink's latency, see `Voice.pause`) to the clock: the heard
                // frame, and the moments since.
                if flushRequested.exchange(false, ordering: .acquiringAndReleasing) {
                    rewindPausedVoices(toFrame: deviceCurrentTime * Double(state.rate))
                    eventSemaphore.signal()
                }
                guard deviceState.load(ordering: .acquiring) == DeviceState.open.rawValue, let opened = pendingOutput else { return .untilSignalled }
                pendingOutput = nil
                take(opened, into: &state)
                return .none
            }
            // A change made in steps (see `holdingChanges`): nothing is mixed, flushed or
            // restarted until it is whole, while the long buffer plays on.
            if state.running, changesHeld.load(ordering: .acquiring) > 0 { return .untilSignalled }
            // The clock and the frames written count at the output's rate.
            let rate = Double(state.rate)

            /// The output failed: close it, keep the clock at what was heard, and let the
            /// event thread pause the voices there and tell the app.
            func fail(_ result: OutputWriteResult) {
                openOutput.withLock { $0 = nil }
                device.close()
                state.output = nil
                state.running = false
                // What had been heard by now: the clock interpolated from the last timing,
                // never past what was written.
                let heard = min(deviceCurrentTime * rate, Double(state.framesWritten))
                streamRunning.store(false, ordering: .releasing)
                // (Heard at the last write that had a delay: a floor under it. None since the
                // output was taken, as when a long buffer's first write is all there was: a
                // missing delay is not "nothing buffered", which put a paused position at the
                // end of what was written instead of at what was heard.)
                let heardAtLastWrite = state.lastDelay.map { Double(state.framesWritten - Int64($0)) } ?? 0
                let heardFrame = max(heard, heardAtLastWrite)
                publishClock(frames: heardFrame, at: MonotonicClock.seconds())
                // A voice paused just before (the route monitor saw the server go, and a queue
                // pauses for a lost device) asked for a flush that will not come: its position
                // is the pause's estimate, which counts on the sink's latency playing on (see
                // `Voice.pause`): 0.3–0.6 s past what was heard on a null sink at PulseAudio's
                // defaults (`serverRestart`). Nothing more will play: it goes back to what was
                // heard.
                flushRequested.store(false, ordering: .releasing)
                rewindPausedVoices(toFrame: heardFrame)
                let error: AudioEngineError
                switch result {
                case .serverLost(let reason):
                    error = .soundServerLost(server: device.name, reason: reason)
                    serverLost.store(true, ordering: .releasing)
                case .failed(let reason):
                    error = .deviceLost(device: device.name, reason: reason)
                case .written, .recovered, .interrupted:
                    return
                }
                deviceFailure.withLock { $0 = error }
                deviceState.store(DeviceState.closed.rawValue, ordering: .releasing)
                eventSemaphore.signal()
            }

            guard anyVoicePlaying() else {
                if let failure = device.failure() {
                    fail(failure)
                    return .none
                }
                let now = MonotonicClock.seconds()
                let flush = flushRequested.exchange(false, ordering: .acquiringAndReleasing)
                if state.running, flush {
                    // Paused or stopped: drop what is buffered, so the pause is heard now, and
                    // put the paused voices back to the last frame the listener will hear.
                    let heard = deviceCurrentTime * rate
                    let before = MonotonicClock.seconds()
                    // The server's read index after the flush says exactly what still plays
                    // (the clock was last set up to a request ago, a long buffer's half), where
                    // the sink cannot take back what it rendered: paused positions matched the
                    // capture to 0.1 ms with the short buffer too, at 48 kHz and on PipeWire
                    // (with the latency estimate: −0.4 … 0 ms and +0.3 … +4.3 ms). Where it
                    // cannot say, the estimate.
                    let unplayed = device.flushUnplayed()
                    let remaining: Int, end: Double, clock: Double, after: Double
                    if let unplayed {
                        after = MonotonicClock.seconds()
                        end = Double(state.framesWritten - Int64(unplayed))
                        remaining = max(0, Int(end - heard))
                        clock = min(heard + (after - before) * rate, end)
                    } else {
                        remaining = device.flush()
                        after = MonotonicClock.seconds()
                        end = heard + (after - before) * rate + Double(remaining)
                        clock = end - Double(remaining)
                    }
                    flushRemainder.store(remaining, ordering: .relaxed)
                    state.flushedOnce = true
                    publishClock(frames: clock, at: after)
                    state.running = false
                    streamRunning.store(false, ordering: .releasing)
                    rewindPausedVoices(toFrame: end)
                    eventSemaphore.signal()
                    state.idleSince = after
                    state.silence.lastIdleCheck = after
                } else if state.running {
                    // A change in the last voice's last buffer (its end mixed, not heard: a
                    // volume change) mixes that voice again from what is heard (see
                    // `Voice.rewind`): it plays again, and nothing is drained.
                    if restartRequested.load(ordering: .acquiring) {
                        if voiceTable.forEach({ !$0.endUnheard.load(ordering: .acquiring) }) {
                            // Nothing to play again: what is buffered plays out.
                            restartRequested.store(false, ordering: .releasing)
                        } else {
                            if let wait = restartIfRequested(&state, device: device) { return wait }
                            if anyVoicePlaying() { return .none }
                        }
                    }
                    // Let what is buffered play out (the end of the last sound), then stop.
                    // A voice started meanwhile waits at most this drain; a pause, a restart
                    // or a voice played on breaks it off (see `breakOffDrain`).
                    // (Sequentially consistent with `requestRestart`: either this thread sees
                    // the request, or the request sees the drain and breaks it off.)
                    draining.store(true, ordering: .sequentiallyConsistent)
                    if restartRequested.load(ordering: .sequentiallyConsistent) {
                        draining.store(false, ordering: .releasing)
                        return .none
                    }
                    let drained = device.drainAndPrepare()
                    draining.store(false, ordering: .releasing)
                    guard drained else { return .none }
                    publishClock(frames: Double(state.framesWritten), at: MonotonicClock.seconds())
                    eventSemaphore.signal()
                    state.running = false
                    streamRunning.store(false, ordering: .releasing)
                    state.idleSince = now
                    state.silence.lastIdleCheck = now
                }
                if state.silence.accountIdle(until: now, rate: rate) { soundStopped() }
                let since = state.idleSince ?? now
                state.idleSince = since
                if now - since > configuration.idleRelease, releaseDevice(device) {
                    state.output = nil
                    return .none
                }
                // Sleep until a voice starts, the output fails, or something is due: the
                // sound-stopped event or the release. Nothing wakes while nothing changes.
                var due = since + configuration.idleRelease - now
                if let silentIn = state.silence.secondsUntilStopped(rate: rate) { due = min(due, silentIn) }
                return .seconds(max(0.001, due + 0.001))
            }
            state.idleSince = nil
            // A pause's flush this thread did not get to before a voice played again (a pause
            // and a play in quick succession, as a queue's seek in an item's last buffer
            // makes): a stopped stream has nothing to drop, and a running long buffer is
            // mixed again from what is heard, as after any change. Left pending, it dropped
            // the end of the next sound to stop (0.4 s of a queue's last item) for a drain.
            if flushRequested.exchange(false, ordering: .acquiringAndReleasing), state.running,
               longBufferActive.load(ordering: .acquiring) {
                restartRequested.store(true, ordering: .releasing)
            }
            if !state.running {
                // The stream starts after silence: if the engine now asks for another format
                // (a preferred period or rate), the output is opened again with it first.
                let wanted = outputRequest()
                if device.request != wanted {
                    openOutput.withLock { $0 = nil }
                    device.close()
                    state.output = nil
                    do {
                        let reopened = try openOutputStream(wanted)
                        noteGranted(reopened)
                        openOutput.withLock { $0 = reopened }
                        take(reopened, into: &state)
                        device = reopened
                    } catch {
                        // As a lost output: the event thread pauses the voices and says why.
                        streamRunning.store(false, ordering: .releasing)
                        deviceFailure.withLock { $0 = error }
                        deviceState.store(DeviceState.closed.rawValue, ordering: .releasing)
                        eventSemaphore.signal()
                        return .none
                    }
                }
                // A long buffer's first write is the whole buffer in one burst: a voice whose
                // reader has not primed it yet would sit that burst out and start up to a
                // buffer (a second) late, after silence (`earshot play` of one FLAC file was
                // heard 1.09 s after the command). So the stream waits for the voices that
                // play, a while at most; a short buffer's first period costs little.
                if device.request.longBuffer, !playingVoicesReady() {
                    let now = MonotonicClock.seconds()
                    let deadline = state.startDeadline ?? now + AudioEngine.longBufferPrimeWait
                    state.startDeadline = deadline
                    if now < deadline {
                        // Looked at again once the reader can see the wait: a voice primed in
                        // between would not wake this thread (the reader wakes it only while it
                        // waits), and the start waited the whole half second (a queue's item
                        // played on from near its end at another rate, primed at once).
                        startAwaitsVoices.store(true, ordering: .releasing)
                        atomicMemoryFence(ordering: .sequentiallyConsistent)
                        if !playingVoicesReady() { return .seconds(deadline - now) }
                    }
                }
                state.startDeadline = nil
                startAwaitsVoices.store(false, ordering: .releasing)
                let rate = Double(state.rate)
                // Frame index F is heard at device time F / rate, across stops and reopens.
                state.framesWritten = Int64((deviceCurrentTime * rate).rounded())
                publishClock(frames: Double(state.framesWritten), at: MonotonicClock.seconds())
                streamHeard.store(false, ordering: .releasing)
                state.running = true
                streamRunning.store(true, ordering: .releasing)
                // The stream starts from nothing buffered: nothing to restart.
                restartRequested.store(false, ordering: .releasing)
                state.restartAskedAt = nil
            } else if restartRequested.load(ordering: .acquiring) {
                if let wait = restartIfRequested(&state, device: device) { return wait }
            }

            let frames = min(device.periodFrames, state.capacity)
            mixPeriod(&state, frames: frames)
            switch device.write(state.mix, frames: frames) {
            case .written: break
            case .recovered: underruns.add(1, ordering: .relaxed)
            case .interrupted(let written):
                // A pause or a play cut the write short: the flush or restart comes next, and
                // the clock stays as the server last told it. What was mixed and not written
                // is taken back, so that the next write goes on from the first frame not
                // written. Left mixed, it was lost: a queue's seek in an item's last buffer
                // skipped the first 0.34 s of the rest (a 1 s buffer's period, mixed into a
                // write that the pause's interrupt cut off before it wrote anything; the
                // restart after it had nothing to drop). Where a voice cannot go back, a long
                // buffer is mixed again from what is heard.
                state.framesWritten += Int64(written)
                if !takeBackUnwritten(from: state.framesWritten), longBufferActive.load(ordering: .acquiring) {
                    restartRequested.store(true, ordering: .releasing)
                }
                return .none
            case let failure:
                fail(failure)
                return .none
            }
            noteWritten(&state, frames: frames, delay: device.delayAfterWrite(), sinkPlays: device.sinkPlays(), flushRemainder: device.expectedFlushRemainder)
            return .pull
        }
    }

    /// Mixes the next `frames` of every playing voice into `state.mix`, with the process
    /// gain, and tracks sound starts and stops: preallocated memory, atomics and semaphore
    /// posts only. On the render thread, or on the output's thread while it pulls.
    func mixPeriod(_ state: inout RenderState, frames: Int) {
        let mix = state.mix
        mix.update(repeating: 0, count: frames * 2)
        let cycle = renderEpoch.load(ordering: .relaxed)
        let firstFrame = state.framesWritten
        _ = voiceTable.forEach { voice in
            voice.render(into: mix, frames: frames, firstFrame: firstFrame, cycle: cycle)
            return true
        }
        renderEpoch.add(1, ordering: .releasing)

        let generation = processGainGeneration.load(ordering: .acquiring)
        if generation != state.gainGeneration {
            state.gainGeneration = generation
            let ramp = max(1, processGainRampFrames.load(ordering: .relaxed))
            state.gainStep = (processGainTarget.value - state.gain) / Float(ramp)
            state.gainFramesLeft = ramp
        }
        var gain = state.gain
        let gainStep = state.gainStep
        var gainFramesLeft = state.gainFramesLeft
        let threshold: Float = 1e-4
        var audible = false
        // A gain ramp, frame by frame; then the rest at one gain (none to apply at unity).
        let ramped = min(frames, gainFramesLeft)
        for i in 0..<ramped {
            gain += gainStep
            gainFramesLeft -= 1
            if gainFramesLeft == 0 { gain = processGainTarget.value }
            mix[2 * i] *= gain
            mix[2 * i + 1] *= gain
            if abs(mix[2 * i]) > threshold || abs(mix[2 * i + 1]) > threshold { audible = true }
        }
        let rest = mix + 2 * ramped, restSamples = 2 * (frames - ramped)
        if gain != 1 { MixKernels.scale(rest, samples: restSamples, by: gain) }
        if !audible { audible = MixKernels.anyAbove(threshold, in: rest, samples: restSamples) }
        state.gain = gain
        state.gainFramesLeft = gainFramesLeft
        switch state.silence.account(frames: frames, audible: audible) {
        case .started: soundStarted()
        case .stopped: soundStopped()
        case .none: break
        }
    }

    /// After `frames` were written: the frame count, and the clock from the output's delay.
    func noteWritten(_ state: inout RenderState, frames: Int, delay: Int?, sinkPlays: Bool, flushRemainder remainder: Int) {
        state.framesWritten += Int64(frames)
        if let delay {
            state.lastDelay = delay
            if !state.flushedOnce { flushRemainder.store(remainder, ordering: .relaxed) }
            noteTiming(&state, delay: delay, sinkPlays: sinkPlays)
        }
    }

    /// The output's timing said `delay` (frames written and not yet heard): the clock; and,
    /// when it also says the sink plays the stream (``AudioOutput/sinkPlays()``), that the
    /// stream is heard since it started: the event thread is told then, once.
    func noteTiming(_ state: inout RenderState, delay: Int, sinkPlays: Bool) {
        publishClock(frames: Double(state.framesWritten - Int64(delay)), at: MonotonicClock.seconds())
        guard sinkPlays, !streamHeard.load(ordering: .relaxed) else { return }
        streamHeard.store(true, ordering: .releasing)
        eventSemaphore.signal()
    }

    /// Render thread, while the stream runs with a long buffer and something changed what
    /// is heard (a voice started, paused, stopped or sought, a volume, pan, rate or process
    /// gain changed): drops what the server has not played and puts every voice back to the
    /// engine frame the next write lands on, so that the change is heard at once. Waits
    /// first (returning how long; the reader wakes it sooner) until the voices that play are
    /// ready: a sought or new voice primed, a voice given a new rate primed through the
    /// stretcher again, so that nothing stops while it decodes. The old buffer plays on
    /// meanwhile, so the wait loses nothing but time: it lasts at most
    /// ``longBufferPrimeWait``. Does nothing when a voice cannot go back that far (one ended in
    /// the part not yet heard, or was not mixed without a gap): the change is then heard
    /// when the buffer has played, as without a long buffer. Atomics and the output's
    /// flush only.
    func restartIfRequested(_ state: inout RenderState, device: any AudioOutput) -> ThreadWait? {
        let now = MonotonicClock.seconds()
        let asked = state.restartAskedAt ?? now
        state.restartAskedAt = asked
        let rate = Double(state.rate)
        if !playingVoicesReady() {
            // A voice not ready would sit the write out (see `Voice.render`): with a long
            // buffer, up to a period of silence where it should play. Waiting costs at most
            // the time it takes: the old buffer plays on, or, once it has run out, silence
            // until the voices can play, where a write now would add a period of it. (A rate
            // change in an item's last buffer stretches that item and the next again: a debug
            // build's stretcher took 0.3 s, and a restart that went ahead after 50 ms, as it
            // did, wrote silence for both, a 0.74 s gap before the next item at PulseAudio's
            // defaults in 4 of 6 runs.)
            let limit = asked + AudioEngine.longBufferPrimeWait
            if now < limit { return .seconds(limit - now) }
        }
        state.restartAskedAt = nil
        restartRequested.store(false, ordering: .releasing)
        // The earliest frame the flush can leave the next write at: what is heard now, less
        // the interpolation's error.
        let earliest = Int64(deviceCurrentTime * rate) - Int64(rate * 0.02)
        // A voice whose end is mixed and not yet heard is mixed again from the frame the
        // restart goes back to (see `Voice.rewind`); one whose end was taken back (paused,
        // sought or played again in that time) has been put where it is to be heard next,
        // and what was mixed of it goes with the flush.
        guard voiceTable.forEach({ $0.rewind(toEngineFrame: earliest, dryRun: true) }),
              let dropped = device.flushUnplayed(), dropped > 0 else { return nil }
        let resume = max(earliest, state.framesWritten - Int64(dropped))
        _ = voiceTable.forEach { $0.rewind(toEngineFrame: resume, dryRun: false) || true }
        state.framesWritten = resume
        state.timingWatchUntil = MonotonicClock.seconds() + AudioEngine.restartTimingWatch
        return nil
    }

    /// Render thread, after a write cut short: puts every voice back to engine frame `frame`,
    /// the first one not written (see `Voice.rewind`). Returns false, changing nothing, when
    /// a voice cannot go back that far.
    private func takeBackUnwritten(from frame: Int64) -> Bool {
        guard voiceTable.forEach({ $0.rewind(toEngineFrame: frame, dryRun: true) }) else { return false }
        _ = voiceTable.forEach { $0.rewind(toEngineFrame: frame, dryRun: false) || true }
        return true
    }

    /// How long after a restart the timing that comes between a long buffer's writes goes
    /// on setting the clock. The timing taken with the flush does not yet say where the sink
    /// goes on from; with only the writes to correct it, a two-second buffer's clock (and the
    /// MPRIS position) ran 0.38 s behind the sink for a second, until its next write
    /// (PulseAudio at its defaults, a seek then a volume change); the replies to the asks
    /// that follow a restart put it right within the half second.
    static let restartTimingWatch = 0.5

    /// How long a long buffer's first write waits for the playing voices to be primed
    /// before it goes ahead with what they have (see `primeFrames`): decoding a buffer and a
    /// half of FLAC and resampling it took 10–30 ms in a release build here.
    static let longBufferPrimeWait = 0.5

    /// Whether every playing voice has what a stream start or restart needs: its seek
    /// applied and its ring primed (or nothing to decode). A voice queued to follow another
    /// (`Voice.play(after:)`) counts too: the first write of a long buffer can reach the end
    /// of the voice before it (a queue's item played on from near its end, its next item
    /// sent back to the start and given a new rate: the next started 0.4 s late, unprimed).
    private func playingVoicesReady() -> Bool {
        voiceTable.forEach { voice in
            let state = voice.playState.load(ordering: .acquiring)
            guard state == Voice.PlayState.playing.rawValue || state == Voice.PlayState.queued.rawValue else { return true }
            return !voice.seekPending && voice.primed.load(ordering: .acquiring)
        }
    }

    /// Any thread: makes the changes `body` makes to voices (a pause, a seek, a play, a rate)
    /// one change to the render thread: while it runs, a running stream is neither mixed
    /// nor flushed nor restarted, so that a restart after it sees every voice where `body`
    /// left it, and the long buffer plays on meanwhile. Without it, a queue that paused an
    /// item in its last buffer to play it on at a new rate had the stream flushed at the
    /// pause (every voice was ready then), and restarted again, with nothing buffered, at
    /// the play, when neither item was primed: silence until both were. `body` must not
    /// wait for the render thread.
    package func holdingChanges<T>(_ body: () throws -> T) rethrows -> T {
        changesHeld.add(1, ordering: .sequentiallyConsistent)
        defer {
            changesHeld.subtract(1, ordering: .sequentiallyConsistent)
            renderWake.signal()
        }
        return try body()
    }

    /// Any thread, as the last playing voice pauses or stops (`change` stores its new state):
    /// the render thread drops what the output buffered, so that the silence is heard at once.
    /// The request comes before the change, so that the render thread, seeing no voice play,
    /// finds it; then a write in progress is broken off and the render thread woken. Unwoken,
    /// it could sleep while the output pulls, and the output pulls only when the server asks
    /// for more: on a sink rendering far ahead (a null sink at PulseAudio's defaults) a stopped
    /// sound's last write was still queued when the next sound started, and heard before it.
    func silenceNow(changing change: () -> Void) {
        flushRequested.store(true, ordering: .releasing)
        change()
        openOutput.withLock { $0?.interruptWrite() }
        renderWake.signal()
    }

    /// Any thread, as a voice whose end was mixed and not yet heard plays on (sought or
    /// played again): if nothing else played, the render thread is draining the stream
    /// (up to a long buffer's length); the drain is broken off, and the restart that the
    /// voice's play asked for drops the old end, so that the voice is heard at once.
    func breakOffDrain() {
        guard draining.load(ordering: .sequentiallyConsistent) else { return }
        openOutput.withLock { $0?.interruptWrite() }
    }

    /// Any thread: something changed what is heard. With a long buffer playing, the render
    /// thread restarts the stream from the frame heard (see `restartIfRequested`);
    /// otherwise the change is heard within the short buffer and nothing is done.
    func requestRestart() {
        guard longBufferActive.load(ordering: .acquiring), streamRunning.load(ordering: .acquiring) else { return }
        restartRequested.store(true, ordering: .sequentiallyConsistent)
        renderWake.signal()
        // Draining after the last voice's end was mixed: the restart can still play it on.
        breakOffDrain()
    }

    /// Reader thread, as a voice becomes primed: wakes the render thread if a restart or a
    /// long buffer's start waits for the voices.
    func wakeRenderIfAwaitingVoices() {
        // After the voice's `primed` store: either this sees the wait, or the render thread,
        // looking again after it says it waits, sees the voice primed.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if restartRequested.load(ordering: .acquiring) || startAwaitsVoices.load(ordering: .acquiring) { renderWake.signal() }
    }

    private func soundStarted() {
        soundStarts.add(1, ordering: .releasing)
        eventSemaphore.signal()
    }

    private func soundStopped() {
        soundStops.add(1, ordering: .releasing)
        eventSemaphore.signal()
    }

    /// After a flush: each voice paused since it last played goes back to the media time
    /// heard at `frame`, so that it resumes where the listener left it, with nothing lost.
    /// Atomics and a semaphore post only (the seek is applied by the reader).
    private func rewindPausedVoices(toFrame frame: Double) {
        _ = voiceTable.forEach { voice in
            guard voice.rewindOnFlush.load(ordering: .acquiring),
                  voice.playState.load(ordering: .acquiring) == Voice.PlayState.paused.rawValue,
                  let time = voice.clock.mediaTime(atFrame: frame) else { return true }
            // The seek first: `currentTime` shows a pending seek before the pause's estimate.
            voice.seek(to: time, keepingRewind: true)
            voice.rewindOnFlush.store(false, ordering: .releasing)
            voice.pauseSettled.store(true, ordering: .releasing)
            return true
        }
    }

    /// Whether a voice other than `voice` is playing: what the render thread mixes. A voice
    /// queued to follow another (`Voice.play(after:)`) is not counted: it sounds only once
    /// the voice before it ends in the mix, and then it plays; queued behind `voice`, it does
    /// not start while `voice` pauses. Counted, it sent a queue's pause to a restart that the
    /// render thread, finding no voice playing, let drain instead: the paused item was heard
    /// for the rest of a long buffer, 1.1-1.9 s (issue 32).
    func anyVoicePlaying(besides voice: Voice) -> Bool {
        !voiceTable.forEach { other in
            other === voice || other.playState.load(ordering: .acquiring) != Voice.PlayState.playing.rawValue
        }
    }

    /// Whether a voice is playing (a queued one is not: see ``anyVoicePlaying(besides:)``).
    func anyVoicePlaying() -> Bool {
        !voiceTable.forEach { $0.playState.load(ordering: .acquiring) != Voice.PlayState.playing.rawValue }
    }

    /// Closes the device after the idle time unless a voice started meanwhile (a
    /// `start()` on another thread then waits for the close and opens it again).
    private func releaseDevice(_ device: any AudioOutput) -> Bool {
        guard deviceState.compareExchange(expected: DeviceState.open.rawValue, desired: DeviceState.closing.rawValue,
                                          ordering: .acquiringAndReleasing).exchanged else { return false }
        if anyVoicePlaying() {
            deviceState.store(DeviceState.open.rawValue, ordering: .releasing)
            return false
        }
        openOutput.withLock { $0 = nil }
        device.close()
        deviceState.store(DeviceState.closed.rawValue, ordering: .releasing)
        return true
    }

    /// Asks for `SCHED_FIFO` so that a loaded machine does not starve playback. Without the
    /// privilege (most desktop users, unless rtkit grants it) the thread keeps its normal
    /// priority.
    private static func requestRealtimePriority() {
        var parameters = sched_param()
        parameters.sched_priority = 10
        _ = pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &parameters)
    }

    fileprivate func publishClock(frames: Double, at stamp: Double, rate: Int? = nil) {
        clockSequence.add(1, ordering: .acquiringAndReleasing)
        clockFrames.store(frames)
        clockStamp.store(stamp)
        if let rate { clockRate.store(rate, ordering: .relaxed) }
        clockSequence.add(1, ordering: .acquiringAndReleasing)
    }

    /// The render thread takes `output` (just opened, stream stopped); at a new rate the
    /// clock goes on at the same time, counted in the new rate's frames.
    private func take(_ output: any AudioOutput, into state: inout RenderState) {
        state.output = output
        longBufferActive.store(output.request.longBuffer, ordering: .releasing)
        latencyFrames.store(output.bufferFrames, ordering: .relaxed)
        state.running = false
        state.idleSince = nil
        state.lastDelay = nil
        state.flushedOnce = false
        let rate = output.request.sampleRate
        if rate != state.rate {
            publishClock(frames: deviceCurrentTime * Double(rate), at: MonotonicClock.seconds(), rate: rate)
            state.rate = rate
        }
    }

    /// Records what an output granted, for ``ioBufferDuration`` (any thread).
    func noteGranted(_ output: any AudioOutput) {
        grantedRate.store(output.request.sampleRate, ordering: .relaxed)
        grantedPeriodFrames.store(output.periodFrames, ordering: .relaxed)
    }

    /// The reader thread's body: holds the engine for one round of decoding (weakly
    /// between rounds) and sleeps outside that hold; returns when the engine is gone.
    ///
    /// It runs 5 nice steps below the process's other threads: the decoding that a new
    /// item starts (filling its ring, and its successor's) then yields the CPU to the bus
    /// thread, which in a process hosting the arbiter serves every other session, instead
    /// of sharing it evenly. Measured on 2 loaded cores: four bursts of 50 MPRIS `Next` or
    /// `Previous` calls spent 130 ms of CPU on this thread, at the bus thread's priority
    /// (SessionBusThreadTests). The ring still
    /// keeps its lead: a refill starts when half of it (a quarter second at least) is
    /// left, and a core free for a moment is enough; the render thread keeps its own
    /// priority (real time where granted).
    static func runReaderThread(_ engine: WeakEngine, wake: Semaphore) {
        lowerCurrentThreadPriority(by: 5)
        while true {
            let busy: Bool
            do {
                guard let engine = engine.value else { return }
                busy = engine.readRound()
            }
            // Sleep until woken (a prepare, play, seek or rate change; the render thread when a
            // ring falls below half), unless a voice still has work that could not be done
            // (its ring was being mixed): then try again shortly. Nothing wakes while idle.
            wake.wait(busy ? .seconds(0.002) : .untilSignalled)
        }
    }

    /// Keeps every prepared voice's ring filled; releases retired voices once the
    /// render thread has certainly stopped looking at them. Returns whether a voice still
    /// has work that could not be done now.
    func readRound() -> Bool {
        let epoch = renderEpoch.load(ordering: .acquiring)
        retired.withLock { $0.removeAll { epoch > $0.epoch + 1 } }
        let list = voices.withLock { Array($0.values) }
        // Round-robin, two blocks a voice a round, so that voices starting together
        // all get audio before any is filled to the brim.
        var wroteThisRound = true
        while wroteThisRound {
            wroteThisRound = false
            for voice in list where voice.reader.fill(voice, maxBlocks: 2) { wroteThisRound = true }
        }
        return list.contains(where: { $0.reader.needsWork($0) })
    }

    /// The event thread's body: holds the engine for one round of deliveries (weakly
    /// between rounds, so a handler may release the last reference: the engine goes when
    /// the round ends) and sleeps outside that hold; returns when the engine is gone.
    static func runEventThread(_ engine: WeakEngine, wake: Semaphore) {
        var state = EventState()
        while true {
            let next: ThreadWait
            do {
                guard let engine = engine.value else { return }
                next = engine.eventRound(&state)
            }
            wake.wait(next)
        }
    }

    /// The event thread's state across rounds.
    struct EventState {
        var seenStarts = 0
        var seenStops = 0
        /// Voices whose end is mixed, until it is heard: with the count of ends taken back
        /// when the end was seen (a later count: taken back, not reported).
        var finishing: [Finishing] = []
    }

    /// A voice's end, mixed and not yet reported.
    struct Finishing {
        let voice: Voice
        let endFrame: Int64
        let error: AudioFileError?
        let takenBack: UInt64
    }

    /// Delivers sound-start and sound-stop events, and voices' finished and error events.
    /// A voice's finish is delivered once its last frame has been heard (the device clock
    /// has passed it), not when it was mixed. Returns how long to sleep: until signalled
    /// (a sound start or stop, a finished voice, a failure, a drain) or until the next
    /// finish or start is due to be heard; nothing wakes while idle.
    func eventRound(_ state: inout EventState) -> ThreadWait {
        let rate = Double(sampleRate)
        let starts = soundStarts.load(ordering: .acquiring)
        let stops = soundStops.load(ordering: .acquiring)
        // Starts and stops alternate (start, stop, start…): replay them in order.
        while true {
            let producing: Bool
            if state.seenStarts == state.seenStops, state.seenStarts < starts {
                state.seenStarts += 1
                producing = true
            } else if state.seenStops < state.seenStarts, state.seenStops < stops {
                state.seenStops += 1
                producing = false
            } else {
                break
            }
            for observer in soundObservers.withLock({ Array($0.values) }) { observer(producing) }
        }
        let lost = deviceFailure.withLock { failure -> AudioEngineError? in
            defer { failure = nil }
            return failure
        }
        // Pause where the listener was: the render thread left the clock at what had
        // been heard, so a voice's position is there, not at what was mixed.
        let pausedAt = lost == nil ? [] : voices.withLock { Array($0.values) }.filter { $0.state == .playing || $0.state == .queued }
            .map { (voice: $0, time: $0.currentTime) }
        for (voice, time) in pausedAt {
            // The output is gone: nothing to flush or wait for.
            voice.playState.store(Voice.PlayState.paused.rawValue, ordering: .releasing)
            voice.seek(to: time)
        }
        if let lost {
            if configuration.logsOutputChoice {
                let times = pausedAt.map { String(Int($0.time * 1000)) + " ms" }.joined(separator: ", ")
                let line = "earshot: audio output lost: \(lost)" + (pausedAt.isEmpty ? "" : "; paused at \(times)") + "\n"
                _ = line.withCString { write(2, $0, strlen($0)) }
            }
            for (voice, _) in pausedAt { voice.onError.withLock { $0 }?(lost) }
            if serverLost.exchange(false, ordering: .acquiringAndReleasing) {
                for observer in resetObservers.withLock({ Array($0.values) }) { observer() }
            }
        }
        let heardNow = deviceCurrentTime * rate
        // A start is heard once the sink is (see `streamHeard`); a stream stopped since
        // follows the monotonic clock.
        let sinkPlays = streamHeard.load(ordering: .acquiring) || !streamRunning.load(ordering: .acquiring)
        for voice in voices.withLock({ Array($0.values) }) {
            let startFrame = voice.heardStartFrame.load(ordering: .acquiring)
            if startFrame != Int64.min, sinkPlays, Double(startFrame) <= heardNow + 1,
               voice.heardStartFrame.compareExchange(expected: startFrame, desired: Int64.min, ordering: .acquiringAndReleasing).exchanged {
                // Before the handler: an owner that republishes its position there sees it moving.
                voice.awaitingStart.store(false, ordering: .releasing)
                voice.onStarted.withLock { $0 }?()
            }
            let starved = voice.supplyStarved.load(ordering: .acquiring)
            if voice.supplyReported.exchange(starved, ordering: .acquiringAndReleasing) != starved {
                voice.onSupplyChange.withLock { $0 }?(starved)
            }
            let wrapFrame = voice.heardWrapFrame.load(ordering: .acquiring)
            if wrapFrame != Int64.min, Double(wrapFrame) <= heardNow + 1,
               voice.heardWrapFrame.compareExchange(expected: wrapFrame, desired: Int64.min, ordering: .acquiringAndReleasing).exchanged {
                voice.onWrapped.withLock { $0 }?()
            }
            if voice.pauseSettled.exchange(false, ordering: .acquiringAndReleasing) {
                voice.onPauseSettled.withLock { $0 }?()
            }
            if voice.finishedFlag.exchange(false, ordering: .acquiring) {
                // Reported, rewound and detached when heard: until then the voice stays as
                // its end left it (its clock says what is heard), and a pause or seek meant
                // for what is heard takes the end back (see `Voice.takeBackUnheardEnd`).
                state.finishing.append(Finishing(voice: voice, endFrame: voice.endFrame.load(ordering: .relaxed),
                                                 error: voice.decodeError.withLock { $0 },
                                                 takenBack: voice.endsTakenBack.load(ordering: .acquiring)))
            }
        }
        // When nothing else plays, the render thread drains the device and stops the
        // stream: then everything written has been heard. While other voices keep it
        // running, the device clock says when the end was played.
        let drained = !streamRunning.load(ordering: .acquiring)
        let heard = deviceCurrentTime * rate
        let othersPlaying = anyVoicePlaying()
        let isDue: (Finishing) -> Bool = { entry in
            drained || (othersPlaying && Double(entry.endFrame) <= heard)
        }
        let due = state.finishing.filter(isDue)
        state.finishing.removeAll(where: isDue)
        for entry in due {
            let voice = entry.voice
            // An end taken back since is not reported (the voice was put elsewhere).
            guard voice.endsTakenBack.load(ordering: .acquiring) == entry.takenBack,
                  voice.endUnheard.exchange(false, ordering: .acquiringAndReleasing) else { continue }
            detach(voice)
            // Rewound before the report: a replay from the handler starts from the top.
            voice.rewindAfterFinishing()
            voice.startedBySuccession.store(false, ordering: .releasing)
            if let error = entry.error { voice.onError.withLock { $0 }?(error) }
            voice.onFinished.withLock { $0 }?(entry.error == nil)
        }
        let now = deviceCurrentTime
        var dues = state.finishing.map { Double($0.endFrame) / rate - now }
        for voice in voices.withLock({ Array($0.values) }) {
            // Until the sink plays, its first timing that shows it signals this thread.
            let start = voice.heardStartFrame.load(ordering: .acquiring)
            if start != Int64.min, sinkPlays { dues.append(Double(start) / rate - now) }
            let wrap = voice.heardWrapFrame.load(ordering: .acquiring)
            if wrap != Int64.min { dues.append(Double(wrap) / rate - now) }
        }
        guard let next = dues.min() else { return .untilSignalled }
        // Past due but waiting for the drain: the render thread signals when it is done.
        return .seconds(next > 0 ? min(next + 0.0005, 1) : 0.1)
    }
}

/// The render thread's state across periods: its own, never shared.
struct RenderState {
    let capacity = 16_384
    /// The mix buffer, allocated once when the thread starts.
    let mix: UnsafeMutablePointer<Float>
    /// The open output, once taken from the engine; the thread closes it when it ends.
    var output: (any AudioOutput)?
    var running = false
    var framesWritten: Int64 = 0
    /// The last delay the output reported with a write (nil: none since the output was
    /// taken): on a failure, what had been heard by then.
    var lastDelay: Int?
    /// Until a flush measures it, a pause's expected remainder comes from the sink's latency.
    var flushedOnce = false
    var gain: Float = 1
    var gainStep: Float = 0
    var gainFramesLeft = 0
    var gainGeneration: UInt32 = 0
    var silence: SilenceTracker
    var idleSince: Double?
    /// While a restart waits for its voices: when it was first looked at (it goes ahead
    /// regardless after ``AudioEngine/longBufferPrimeWait``).
    var restartAskedAt: Double?
    /// While a long buffer's start waits for its voices: when it goes ahead regardless.
    var startDeadline: Double?
    /// After a long buffer's restart: until when timing that comes between writes still
    /// sets the clock (see ``AudioEngine/restartTimingWatch``).
    var timingWatchUntil: Double = 0
    /// The rate of the output taken last: the clock and `framesWritten` count in it.
    var rate: Int

    init(configuration: AudioEngine.Configuration) {
        rate = AudioEngine.supportedSampleRate(configuration.sampleRate)
        mix = .allocate(capacity: capacity * 2)
        silence = SilenceTracker(threshold: Int(configuration.silenceBeforeSoundEvent * Double(configuration.sampleRate)))
    }
}

/// The render thread's state, and what an output's thread renders through while it pulls
/// (``AudioOutput/startPulling(_:)``).
///
/// `@unchecked Sendable`: `state` belongs to one thread at a time. The render thread owns it
/// except between a `startPulling` that returned true and the `stopPulling` after it; in
/// between only the output's thread touches it, under the output's lock, which both calls
/// take (so each hand-over is ordered by that lock).
final class RenderPull: OutputPuller, @unchecked Sendable {
    let engine: WeakEngine
    var state: RenderState

    init(engine: WeakEngine, state: RenderState) {
        self.engine = engine
        self.state = state
    }

    func mix(maxFrames: Int) -> (samples: UnsafePointer<Float>, frames: Int)? {
        // Held (see `AudioEngine.holdingChanges`): handed back to the render thread, which waits.
        guard let engine = engine.value, engine.changesHeld.load(ordering: .acquiring) == 0, engine.anyVoicePlaying() else { return nil }
        let frames = min(maxFrames, state.capacity)
        engine.mixPeriod(&state, frames: frames)
        return (UnsafePointer(state.mix), frames)
    }

    func wrote(frames: Int, delay: Int?, sinkPlays: Bool, underran: Bool, flushRemainder: Int) {
        guard let engine = engine.value else { return }
        if underran { engine.underruns.add(1, ordering: .relaxed) }
        engine.noteWritten(&state, frames: frames, delay: delay, sinkPlays: sinkPlays, flushRemainder: flushRemainder)
    }

    var awaitsPlayingSink: Bool { state.running && engine.value?.streamHeard.load(ordering: .relaxed) == false }

    var wantsTiming: Bool { awaitsPlayingSink || (state.running && MonotonicClock.seconds() < state.timingWatchUntil) }

    func timed(delay: Int, sinkPlays: Bool) {
        guard let engine = engine.value else { return }
        engine.noteTiming(&state, delay: delay, sinkPlays: sinkPlays)
    }
}

/// What an engine thread does after a round of work, outside its hold on the engine.
enum ThreadWait {
    /// Goes round again at once.
    case none
    /// The render thread after a written period: hands the mixing to the output if it can
    /// pull, else goes round again at once.
    case pull
    /// Sleeps until its semaphore is signalled.
    case untilSignalled
    /// Sleeps until signalled or for this many seconds.
    case seconds(Double)
}

extension Semaphore {
    func wait(_ wait: ThreadWait) {
        switch wait {
        case .none, .pull: break
        case .untilSignalled: self.wait()
        case .seconds(let seconds): _ = self.wait(seconds: seconds)
        }
    }
}

/// How an engine thread refers to its engine between rounds: weakly, so that the engine's
/// release is not held up by its own threads, and a thread sees nil once it is going.
final class WeakEngine: Sendable {
    weak let value: AudioEngine?
    init(_ engine: AudioEngine) { value = engine }
}

/// When the mix goes audible after silence, and silent after sound, for the engine's
/// sound-started and sound-stopped events. Idle time (nothing written) counts as silence.
struct SilenceTracker {
    enum Change { case started, stopped, none }
    let threshold: Int
    var silentFrames: Int
    var lastIdleCheck: Double = 0

    init(threshold: Int) {
        self.threshold = threshold
        silentFrames = Int.max / 2
    }

    mutating func account(frames: Int, audible: Bool) -> Change {
        if audible {
            defer { silentFrames = 0 }
            return silentFrames >= threshold ? .started : .none
        }
        return addSilence(frames)
    }

    /// Adds the idle time since the last call; returns true when that ends a sound.
    mutating func accountIdle(until now: Double, rate: Double) -> Bool {
        let frames = Int(max(0, now - lastIdleCheck) * rate)
        lastIdleCheck = now
        return addSilence(frames) == .stopped
    }

    /// While idle: seconds until the silence that ends a sound is complete, or nil when no
    /// sound is going on.
    func secondsUntilStopped(rate: Double) -> Double? {
        silentFrames < threshold ? Double(threshold - silentFrames) / rate : nil
    }

    private mutating func addSilence(_ frames: Int) -> Change {
        let wasSounding = silentFrames < threshold
        silentFrames = min(silentFrames + frames, Int.max / 2)
        return wasSounding && silentFrames >= threshold ? .stopped : .none
    }
}
