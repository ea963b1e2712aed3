#if canImport(Glibc)
import Glibc
#endif

/// The controls a player uses; callable from any thread.
extension Voice {
    /// The file's duration in seconds (0 when unknown).
    public var duration: Double { file.format.duration ?? 0 }

    /// Starts decoding into the buffer so that `play` starts at once.
    public func prepare() {
        prepared.store(true, ordering: .releasing)
        engine.readerWake.signal()
    }

    /// Plays now, or at `deviceTime` on ``AudioEngine/deviceCurrentTime``'s clock
    /// (sample-accurate: voices given the same time start on the same frame).
    ///
    /// - Throws: ``AudioEngineError`` when the device cannot be opened or too many
    ///   sources play; the voice is then paused.
    public func play(atDeviceTime deviceTime: Double? = nil) throws(AudioEngineError) {
        startedBySuccession.store(false, ordering: .releasing)
        rewindOnFlush.store(false, ordering: .releasing)
        // Ended in the mix, its end not yet heard: a replay starts from the top, as one
        // after the end was heard does, and now (not after the drain of the old end).
        if takeBackUnheardEnd() {
            rewindAfterFinishing()
            engine.breakOffDrain()
        }
        prepare()
        try engine.attach(self)
        let frame = deviceTime.map { Int64(($0 * Double(reader.engineRate)).rounded()) } ?? Int64.min
        startFrame.store(frame, ordering: .relaxed)
        let wasPlaying = isPlaying
        if !wasPlaying {
            // A start to be heard, whether or not the mixer saw the pause before it.
            awaitingStart.store(true, ordering: .releasing)
            playsFromStill.add(1, ordering: .releasing)
        }
        playState.store(PlayState.playing.rawValue, ordering: .releasing)
        // Started beside others on a long buffer: heard now, not behind what is queued.
        if !wasPlaying, deviceTime == nil { engine.requestRestart() }
        engine.renderWake.signal()
        do {
            try engine.start()
        } catch {
            playState.store(PlayState.paused.rawValue, ordering: .releasing)
            throw error
        }
    }

    /// Whether the engine started this voice on its predecessor's end (``play(after:)``) and
    /// nothing has played, paused or stopped it since, nor has its end been heard. Such a
    /// voice is playing as far as the listener goes, even when (shorter than a long buffer)
    /// it has already ended in the mix: its owner does not play it again.
    package var startedByPredecessor: Bool { startedBySuccession.load(ordering: .acquiring) }

    /// Queues this voice to start on the exact frame where `predecessor` ends: gapless
    /// when both are prepared. ``play(atDeviceTime:)`` on a queued voice starts it at once.
    public func play(after predecessor: Voice) throws(AudioEngineError) {
        if takeBackUnheardEnd() { rewindAfterFinishing() }
        prepare()
        try engine.attach(self)
        playState.store(PlayState.queued.rawValue, ordering: .releasing)
        predecessor.successor.store(UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque()), ordering: .releasing)
    }

    /// Forgets a voice queued with ``play(after:)``.
    public func clearSuccessor() {
        let bits = successor.exchange(0, ordering: .acquiringAndReleasing)
        guard bits != 0, let pointer = UnsafeRawPointer(bitPattern: bits) else { return }
        let next = Unmanaged<Voice>.fromOpaque(pointer).takeUnretainedValue()
        _ = next.playState.compareExchange(expected: PlayState.queued.rawValue, desired: PlayState.paused.rawValue,
                                           ordering: .acquiringAndReleasing)
    }

    /// Pauses, keeping the position. When nothing else plays, the sound stops at once: the
    /// render thread drops what the output buffered (a sink's last rendered block still
    /// plays) and puts the voice back to what was heard. The call does not wait for that:
    /// ``currentTime`` meanwhile says where the sound is expected to stop. While other
    /// voices play, what was mixed of it still plays out.
    public func pause() {
        startedBySuccession.store(false, ordering: .releasing)
        if pauseBeforeUnheardEnd() { return }
        let state = playState.load(ordering: .acquiring)
        guard state == PlayState.playing.rawValue || state == PlayState.queued.rawValue else { return }
        guard state == PlayState.playing.rawValue, !engine.anyVoicePlaying(besides: self) else {
            if state == PlayState.playing.rawValue {
                settlePaused(at: expectedPausePosition())
                engine.requestRestart()
            } else {
                playState.store(PlayState.paused.rawValue, ordering: .releasing)
            }
            return
        }
        let position = expectedPausePosition()
        pausedPosition.store(position)
        rewindOnFlush.store(true, ordering: .releasing)
        engine.silenceNow { settlePaused(at: position) }
    }

    /// Where a pause now is expected to leave the listener: what is heard, plus what the
    /// output still plays after it drops the rest (the last flush's remainder).
    private func expectedPausePosition() -> Double {
        clock.mediaTime(atFrame: expectedPauseFrame()) ?? position.value
    }

    /// The engine frame a pause now is expected to leave the listener at (see
    /// ``expectedPausePosition()``).
    private func expectedPauseFrame() -> Double {
        engine.deviceCurrentTime * Double(reader.engineRate) + Double(engine.flushRemainder.load(ordering: .relaxed))
    }

    /// Playing → paused. The render thread may have mixed the voice's end since the pause
    /// looked (it is stopped then, its end unheard): the end is taken back and the voice
    /// paused at `position`, so that the end is neither reported nor lost.
    private func settlePaused(at position: Double) {
        if playState.compareExchange(expected: PlayState.playing.rawValue, desired: PlayState.paused.rawValue,
                                     ordering: .acquiringAndReleasing).exchanged { return }
        guard takeBackUnheardEnd() else { return }
        seek(to: position, keepingRewind: false)
        playState.store(PlayState.paused.rawValue, ordering: .releasing)
    }

    /// Stops, rewinds to the start, forgets the loops done, and releases the buffers.
    public func stop() {
        startedBySuccession.store(false, ordering: .releasing)
        clearSuccessor()
        // Ended in the mix, its end not yet heard: that end is silenced as a playing voice's
        // sound would be, and not reported.
        let wasPlaying = isPlaying || takeBackUnheardEnd()
        if wasPlaying, !engine.anyVoicePlaying(besides: self) {
            engine.silenceNow { playState.store(PlayState.stopped.rawValue, ordering: .releasing) }
        } else {
            playState.store(PlayState.stopped.rawValue, ordering: .releasing)
            if wasPlaying { engine.requestRestart() }
        }
        prepared.store(false, ordering: .releasing)
        resetLoopsRequested.store(true, ordering: .releasing)
        seek(to: 0)
        engine.detach(self)
    }

    public var isPlaying: Bool { playState.load(ordering: .acquiring) == PlayState.playing.rawValue }

    /// Whether the voice has ended in the mix and its end is still to be heard: with a long
    /// buffer, up to the buffer's length after ``isPlaying`` turned false. The listener still
    /// hears it play, ``currentTime`` still moves, and a ``pause()`` or a seek is still for
    /// what is heard: it takes the end back (the finish is then not reported).
    public var isEndingUnheard: Bool { endUnheard.load(ordering: .acquiring) }

    /// Takes back an end mixed and not yet heard, so that the event thread does not report
    /// the finish: returns whether there was one. Whoever calls it puts the voice where the
    /// listener is to hear it next (a pause's position, a seek's, the start).
    func takeBackUnheardEnd() -> Bool {
        guard endUnheard.exchange(false, ordering: .acquiringAndReleasing) else { return false }
        endsTakenBack.add(1, ordering: .releasing)
        return true
    }

    /// A pause while the voice's end is mixed but not heard (the last buffer of a long one):
    /// the voice is paused at what the listener will have heard once the output drops what
    /// it has not played, its end taken back. Returns false, doing nothing, when the voice's
    /// end is not pending.
    private func pauseBeforeUnheardEnd() -> Bool {
        guard playState.load(ordering: .acquiring) == PlayState.stopped.rawValue, endUnheard.load(ordering: .acquiring) else { return false }
        let position = clock.mediaTime(atFrame: min(expectedPauseFrame(), Double(endFrame.load(ordering: .relaxed)))) ?? duration
        guard takeBackUnheardEnd() else { return false }
        seek(to: position, keepingRewind: false)
        if engine.anyVoicePlaying(besides: self) {
            playState.store(PlayState.paused.rawValue, ordering: .releasing)
            engine.requestRestart()
        } else {
            engine.silenceNow { playState.store(PlayState.paused.rawValue, ordering: .releasing) }
        }
        return true
    }

    /// Whether the voice plays but its first frame since it (re)started (a first play, a play
    /// after a seek, a rate change or its end, a seek while playing) has not been heard yet:
    /// the output may still be opening, the sink waking, the ring filling. Meanwhile
    /// ``currentTime`` stands still; it moves on from the moment the start handler (see
    /// ``setStartHandler(_:)``) is called. A now-playing center that extrapolates the position
    /// from the time of an update should not extrapolate it before then.
    public var isWaitingToBeHeard: Bool { isPlaying && awaitingStart.load(ordering: .acquiring) }

    /// The playback position in seconds of the file's timeline: what is heard now, by the
    /// output's timing (a sound server's includes its latency), not what was last mixed.
    public var currentTime: Double {
        if seekPending { return seekTarget.value }
        if rewindOnFlush.load(ordering: .acquiring), playState.load(ordering: .acquiring) == PlayState.paused.rawValue {
            return pausedPosition.value
        }
        let heard = engine.deviceCurrentTime * Double(reader.engineRate)
        return clock.mediaTime(atFrame: heard) ?? position.value
    }

    /// Moves the position (also while playing); clamped to 0…duration.
    public func seek(to seconds: Double) {
        // Ended in the mix, its end not yet heard: as far as the listener goes it plays, and
        // plays on from the seek's target.
        if takeBackUnheardEnd() {
            seek(to: seconds, keepingRewind: false)
            if (try? play()) == nil { playState.store(PlayState.paused.rawValue, ordering: .releasing) }
            return
        }
        seek(to: seconds, keepingRewind: false)
        if isPlaying { engine.requestRestart() }
    }

    /// A seek by the app replaces the position a pause was going back to.
    func seek(to seconds: Double, keepingRewind: Bool) {
        if !keepingRewind { rewindOnFlush.store(false, ordering: .releasing) }
        let target = seconds.isFinite ? min(max(0, seconds), max(0, duration)) : 0
        // The reader starts the ring again from the target: the next start is to be heard.
        awaitingStart.store(true, ordering: .releasing)
        if playState.load(ordering: .acquiring) != PlayState.playing.rawValue { soughtWhileStill.store(true, ordering: .releasing) }
        seekTarget.store(target)
        seekGeneration.add(1, ordering: .releasing)
        engine.readerWake.signal()
    }

    /// 0 plays once, n plays n + 1 times, a negative number loops until stopped.
    public var loops: Int {
        get { numberOfLoops.load(ordering: .relaxed) }
        set { numberOfLoops.store(newValue, ordering: .relaxed) }
    }

    /// The gain, 0…1.
    public var volume: Float { targetVolume.value }

    /// Sets the gain, ramped over `fadeDuration` seconds (a few milliseconds at least, so
    /// that a change never clicks).
    /// Setting the volume it has changes nothing (a long buffer is not restarted).
    public func setVolume(_ volume: Float, fadeDuration: Double = 0) {
        let target = max(0, min(1, volume.isFinite ? volume : 0))
        guard target != targetVolume.value else { return }
        targetVolume.store(target)
        let frames = max(Int(0.003 * Double(reader.engineRate)),
                         Int((fadeDuration.isFinite ? max(0, fadeDuration) : 0) * Double(reader.engineRate)))
        fadeFrames.store(frames, ordering: .relaxed)
        volumeGeneration.add(1, ordering: .releasing)
        // Ended in the mix, its end not yet heard: the restart plays it again from what is
        // heard, at the new volume (see `rewind(toEngineFrame:dryRun:)`).
        if isPlaying || isEndingUnheard { engine.requestRestart() }
    }

    /// Stereo balance, −1 (left only) … 0 (center) … 1 (right only): the far channel is
    /// attenuated linearly, the near one kept. Setting the pan it has changes nothing.
    public var panPosition: Float {
        get { pan.value }
        set {
            let position = max(-1, min(1, newValue.isFinite ? newValue : 0))
            guard position != pan.value else { return }
            pan.store(position)
            if isPlaying || isEndingUnheard { engine.requestRestart() }
        }
    }

    /// Whether ``playbackRate`` applies (set before playing, as with AVAudioPlayer).
    public var isRateEnabled: Bool {
        get { rateEnabled.load(ordering: .relaxed) }
        set {
            rateChange { rateEnabled.store(newValue, ordering: .relaxed) }
        }
    }

    /// The playback rate, 0.5…2, with the pitch kept.
    public var playbackRate: Float {
        get { rate.value }
        set {
            rateChange { rate.store(max(0.5, min(2, newValue.isFinite ? newValue : 1))) }
        }
    }

    /// Applies a rate change. The reader starts again at the new rate from what was mixed;
    /// on a long buffer that is far ahead of what is heard, so a playing voice starts
    /// again from what is heard instead, and the engine restarts from there. A change that
    /// leaves the rate the reader uses as it was (rate enabled at 1, or a rate set while
    /// disabled) changes nothing heard, and nothing is done: a queue's next item, started
    /// gaplessly, is given the queue's rate as it becomes current, and a restart then would
    /// have played its start again.
    private func rateChange(_ change: () -> Void) {
        let effective = { self.rateEnabled.load(ordering: .relaxed) ? self.rate.value : 1 }
        let before = effective()
        let ending = !isPlaying && isEndingUnheard
        let restart = (isPlaying || ending) && engine.longBufferActive.load(ordering: .acquiring)
        let heard = restart ? currentTime : 0
        change()
        guard effective() != before else { return }
        if restart, ending {
            // Ended in the mix, its end not yet heard: it plays on from what is heard, at the
            // new rate (the end is taken back; see `seek(to:)`).
            seek(to: heard)
        } else if restart {
            seek(to: heard, keepingRewind: false)
            engine.requestRestart()
        }
        engine.readerWake.signal()
    }

    public var isMeteringEnabled: Bool {
        get { meteringEnabled.load(ordering: .relaxed) }
        set { meteringEnabled.store(newValue, ordering: .relaxed) }
    }

    /// The peak and average (RMS) power of `channel` (0 left, 1 right) in dBFS,
    /// −160…0, as the render thread last measured them after gain and pan.
    public func power(channel: Int) -> (peak: Float, average: Float) {
        let (peak, meanSquare) = channel == 0
            ? (meterPeakLeft.value, meterMeanSquareLeft.value)
            : (meterPeakRight.value, meterMeanSquareRight.value)
        func decibels(_ amplitude: Float) -> Float { amplitude > 1e-8 ? max(-160, min(0, 20 * log10f(amplitude))) : -160 }
        return (decibels(peak), decibels(meanSquare.squareRoot()))
    }

    /// Times the ring ran dry while playing (the reader could not keep up).
    public var dropoutCount: Int { dropouts.load(ordering: .relaxed) }

    /// Sets the callback called (on the engine's event thread) when the voice's first frame
    /// after a play or resume is heard.
    public func setStartHandler(_ handler: (@Sendable () -> Void)?) {
        onStarted.withLock { $0 = handler }
    }

    /// Sets the callback called (on the engine's event thread) when a looping play's wrap
    /// is heard: the position went back to the start.
    public func setWrapHandler(_ handler: (@Sendable () -> Void)?) {
        onWrapped.withLock { $0 = handler }
    }

    /// Sets the callback called (on the engine's event thread) when a pause has settled:
    /// the output dropped what it had not played and the voice went back to the frame the
    /// listener reached. ``currentTime`` is then what was heard, where until then it was the
    /// pause call's estimate (with a long server buffer, the device clock's interpolation
    /// can be some milliseconds off). An owner that published the estimate publishes again.
    public func setPauseSettledHandler(_ handler: (@Sendable () -> Void)?) {
        onPauseSettled.withLock { $0 = handler }
    }

    /// Sets the callbacks, called on the engine's event thread.
    public func setHandlers(onFinished: (@Sendable (Bool) -> Void)?, onError: (@Sendable (any Error) -> Void)?) {
        self.onFinished.withLock { $0 = onFinished }
        self.onError.withLock { $0 = onError }
    }

    /// Removes the voice from the engine for good.
    public func dispose() {
        clearSuccessor()
        playState.store(PlayState.stopped.rawValue, ordering: .releasing)
        prepared.store(false, ordering: .releasing)
        // A network stream stops reading at once (a blocked read is abandoned), whoever still holds the voice.
        (file as? NetworkStream)?.close()
        engine.dispose(self)
    }

    /// After the end: back to the start, buffers refilled for the next play.
    func rewindAfterFinishing() {
        resetLoopsRequested.store(true, ordering: .releasing)
        seek(to: 0)
    }
}
