import Synchronization

/// The engine's three threads: render (real time), reader (decoding), events (callbacks).
extension AudioEngine {
    /// Mixes one period at a time and writes it to ALSA. In the steady state it touches
    /// only preallocated memory and atomics; the one system call is the ALSA write
    /// (plus `snd_pcm_delay` for the clock, and a semaphore post when an event is due).
    func renderThread() {
        let rate = Double(configuration.sampleRate)
        let capacity = 16_384
        let mix = UnsafeMutablePointer<Float>.allocate(capacity: capacity * 2)
        var output: PCMOutput?
        var framesWritten: Int64 = 0
        var gain: Float = 1
        var gainStep: Float = 0
        var gainFramesLeft = 0
        var gainGeneration: UInt32 = 0
        let silenceThreshold = Int(configuration.silenceBeforeSoundEvent * rate)
        var silentFrames = Int.max / 2
        var idleSince: Double?

        while true {
            guard let device = output else {
                renderWake.wait()
                guard deviceState.load(ordering: .acquiring) == DeviceState.open.rawValue, let opened = pendingOutput else { continue }
                pendingOutput = nil
                output = opened
                latencyFrames.store(opened.bufferFrames, ordering: .relaxed)
                // Keep the device clock continuous across a release and a reopen: frame
                // index F is heard at device time F / rate.
                framesWritten = Int64((deviceCurrentTime * rate).rounded())
                publishClock(frames: Double(framesWritten), at: monotonicSeconds())
                idleSince = nil
                continue
            }
            let frames = min(device.periodFrames, capacity)
            mix.update(repeating: 0, count: frames * 2)

            var anyPlaying = false
            let cycle = renderEpoch.load(ordering: .relaxed)
            for slot in slots {
                let bits = slot.voice.load(ordering: .acquiring)
                guard bits != 0, let pointer = UnsafeRawPointer(bitPattern: bits) else { continue }
                let voice = Unmanaged<Voice>.fromOpaque(pointer).takeUnretainedValue()
                if voice.playState.load(ordering: .relaxed) == Voice.PlayState.playing.rawValue { anyPlaying = true }
                voice.render(into: mix, frames: frames, firstFrame: framesWritten, cycle: cycle)
            }
            renderEpoch.add(1, ordering: .releasing)

            let generation = processGainGeneration.load(ordering: .acquiring)
            if generation != gainGeneration {
                gainGeneration = generation
                let ramp = max(1, processGainRampFrames.load(ordering: .relaxed))
                gainStep = (processGainTarget.value - gain) / Float(ramp)
                gainFramesLeft = ramp
            }
            var peak: Float = 0
            for i in 0..<frames {
                if gainFramesLeft > 0 {
                    gain += gainStep
                    gainFramesLeft -= 1
                    if gainFramesLeft == 0 { gain = processGainTarget.value }
                }
                mix[2 * i] *= gain
                mix[2 * i + 1] *= gain
                peak = max(peak, abs(mix[2 * i]), abs(mix[2 * i + 1]))
            }
            if peak > 1e-4 {
                if silentFrames >= silenceThreshold {
                    soundStarts.add(1, ordering: .releasing)
                    eventSemaphore.signal()
                }
                silentFrames = 0
            } else {
                let wasSounding = silentFrames < silenceThreshold
                silentFrames += frames
                if wasSounding, silentFrames >= silenceThreshold {
                    soundStops.add(1, ordering: .releasing)
                    eventSemaphore.signal()
                }
            }

            switch device.write(mix, frames: frames) {
            case .written: break
            case .recovered: underruns.add(1, ordering: .relaxed)
            case .failed(let reason):
                device.close()
                output = nil
                publishClock(frames: Double(framesWritten), at: monotonicSeconds())
                deviceFailure.withLock { $0 = .deviceLost(device: device.device, reason: reason) }
                deviceState.store(DeviceState.closed.rawValue, ordering: .releasing)
                eventSemaphore.signal()
                continue
            }
            framesWritten += Int64(frames)
            let now = monotonicSeconds()
            if let delay = device.delay() { publishClock(frames: Double(framesWritten - Int64(delay)), at: now) }

            if anyPlaying {
                idleSince = nil
            } else if let since = idleSince {
                if now - since > configuration.idleRelease,
                   deviceState.compareExchange(expected: DeviceState.open.rawValue, desired: DeviceState.closing.rawValue,
                                               ordering: .acquiringAndReleasing).exchanged {
                    if slots.contains(where: { slot in
                        let bits = slot.voice.load(ordering: .acquiring)
                        guard bits != 0, let p = UnsafeRawPointer(bitPattern: bits) else { return false }
                        return Unmanaged<Voice>.fromOpaque(p).takeUnretainedValue().playState.load(ordering: .acquiring) == Voice.PlayState.playing.rawValue
                    }) {
                        deviceState.store(DeviceState.open.rawValue, ordering: .releasing)
                        idleSince = nil
                    } else {
                        device.close()
                        output = nil
                        publishClock(frames: Double(framesWritten - Int64(device.delay() ?? 0)), at: monotonicSeconds())
                        deviceState.store(DeviceState.closed.rawValue, ordering: .releasing)
                    }
                }
            } else {
                idleSince = now
            }
        }
    }

    private func publishClock(frames: Double, at stamp: Double) {
        clockSequence.add(1, ordering: .acquiringAndReleasing)
        clockFrames.store(frames)
        clockStamp.store(stamp)
        clockSequence.add(1, ordering: .acquiringAndReleasing)
    }

    /// Keeps every prepared voice's ring filled; releases retired voices once the
    /// render thread has certainly stopped looking at them.
    func readerThread() {
        while true {
            let epoch = renderEpoch.load(ordering: .acquiring)
            retired.withLock { $0.removeAll { epoch > $0.epoch + 1 } }
            let list = voices.withLock { Array($0.values) }
            var wrote = false
            for voice in list where voice.reader.fill(voice) { wrote = true }
            _ = readerWake.wait(seconds: wrote ? 0.002 : 0.01)
        }
    }

    /// Delivers sound-start events and voices' finished and error events.
    func eventThread() {
        var seenStarts = 0
        var seenStops = 0
        while true {
            _ = eventSemaphore.wait(seconds: 0.05)
            let starts = soundStarts.load(ordering: .acquiring)
            let stops = soundStops.load(ordering: .acquiring)
            // Starts and stops alternate (start, stop, start…): replay them in order.
            while true {
                let producing: Bool
                if seenStarts == seenStops, seenStarts < starts {
                    seenStarts += 1
                    producing = true
                } else if seenStops < seenStarts, seenStops < stops {
                    seenStops += 1
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
            for voice in voices.withLock({ Array($0.values) }) {
                if let lost, voice.state == .playing {
                    voice.pause()
                    voice.onError.withLock { $0 }?(lost)
                }
                guard voice.finishedFlag.exchange(false, ordering: .acquiring) else { continue }
                let error = voice.decodeError.withLock { $0 }
                detach(voice)
                voice.rewindAfterFinishing()
                if let error { voice.onError.withLock { $0 }?(error) }
                voice.onFinished.withLock { $0 }?(error == nil)
            }
        }
    }
}
