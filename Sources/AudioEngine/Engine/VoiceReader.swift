internal import CLibraryLoader
internal import CRubberBand
import Synchronization
import Glibc

/// The reader thread's side of a ``Voice``: decodes the file, maps its channels to
/// stereo, converts its rate to the engine's, stretches time when the playback rate is
/// not 1 (keeping the pitch, with Rubber Band), and writes into the voice's ring with a
/// timeline mark per block. Runs on the engine's reader thread only.
final class VoiceReader: @unchecked Sendable {
    static let blockFrames = 1024
    /// The most a stereo file at the engine's rate decodes at a time, straight into the ring:
    /// 16 KB of a 16-bit file, one `read` (where 1024 frames took one 4 KB `read` each).
    static let directBlockFrames = 4096

    let file: any FrameSource
    /// `file` when it is a network stream (whose reads may find nothing yet), cast once.
    private let stream: NetworkStream?
    let engineRate: Int
    private let fileChannels: Int
    private let converter: SampleRateConverter?
    private var stretcher: OpaquePointer?
    private var stretchRate: Float = 1

    private let decoded: UnsafeMutablePointer<Float>
    private let stereo: UnsafeMutablePointer<Float>
    private let converted: UnsafeMutablePointer<Float>
    private let convertedCapacity: Int
    private let planar: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>)
    private let stretched: UnsafeMutablePointer<Float>
    private let stretchedCapacity: Int

    private var generation: UInt32 = 0
    private var rateSeen: Float = 1
    private var mediaTime = 0.0
    /// The media time of the next frame written to the ring.
    private var outputMediaTime = 0.0
    /// Output frames still to drop for the stretcher's start delay.
    private var stretchDelay = 0
    /// Frames given to the stretcher since its start (its start pad not counted), and frames
    /// taken from it into the ring (its start delay not counted): at the end it is played
    /// out until the second is the first at the rate (see ``playOutStretcher(_:)``).
    private var stretchedIn = 0
    private var stretchedOut = 0
    /// While the stretcher is played out: the most frames it may still give.
    private var stretchedLimit = Int.max
    /// What the stretcher owes in all for the input it was given: that input's length at the rate.
    private var stretchedDue: Int { Int((Double(stretchedIn) / Double(stretchRate)).rounded()) }
    private var loopsDone = 0
    /// The next mark pushed is the first after a loop's wrap.
    private var wrapPending = false
    private(set) var ended = false
    /// Between crossing the low-water mark and the ring being full again.
    private var refilling = false
    private(set) var failure: AudioFileError?

    init(file: any FrameSource, engineRate: Int) throws {
        self.file = file
        stream = file as? NetworkStream
        self.engineRate = engineRate
        fileChannels = file.format.channelCount
        converter = file.format.sampleRate == engineRate ? nil
            // The cheapest design (the polyphase filter's 48 taps; speexdsp at quality 3 for an
            // odd ratio): resampling was most of a player's CPU (bench/audio).
            : try SampleRateConverter(channels: 2, inputRate: Double(file.format.sampleRate), outputRate: Double(engineRate),
                                      quality: .fastest)
        let block = VoiceReader.blockFrames
        decoded = .allocate(capacity: block * max(1, fileChannels))
        stereo = .allocate(capacity: block * 2)
        convertedCapacity = Int((Double(block) * Double(engineRate) / Double(file.format.sampleRate)).rounded(.up)) + 64
        converted = .allocate(capacity: convertedCapacity * 2)
        stretchedCapacity = convertedCapacity * 4 + 8192
        planar = (.allocate(capacity: stretchedCapacity), .allocate(capacity: stretchedCapacity))
        stretched = .allocate(capacity: stretchedCapacity * 2)
    }

    deinit {
        if let stretcher { rubberBand.rubberband_delete(stretcher) }
        decoded.deallocate()
        stereo.deallocate()
        converted.deallocate()
        planar.0.deallocate()
        planar.1.deallocate()
        stretched.deallocate()
    }

    /// Adds up to `maxBlocks` blocks to `voice`'s ring. Returns true when it wrote
    /// something. The reader calls it round-robin, so that many voices starting at once
    /// all get their first audio quickly.
    func fill(_ voice: Voice, maxBlocks: Int = .max) -> Bool {
        if voice.resetLoopsRequested.exchange(false, ordering: .acquiring) { loopsDone = 0 }
        guard voice.prepared.load(ordering: .acquiring) else { return false }
        let requested = voice.seekGeneration.load(ordering: .acquiring)
        let rate = voice.rateEnabled.load(ordering: .relaxed) ? voice.rate.value : 1
        if requested != generation || rate != rateSeen {
            // A seek or a rate change: restart from the current (or requested) position.
            if requested != generation, voice.engine.configuration.seekDelayForTesting > 0 {
                usleep(useconds_t(voice.engine.configuration.seekDelayForTesting * 1_000_000))
            }
            guard voice.ringOwner.compareExchange(expected: 0, desired: 2, ordering: .acquiring).exchanged else { return false }
            let target = requested != generation ? voice.seekTarget.value : voice.position.value
            voice.primed.store(false, ordering: .releasing)
            voice.ring.reset()
            voice.marks.reset()
            voice.renderMark = Voice.Mark(ringFrame: voice.ring.framesWritten, mediaTime: target, mediaPerFrame: 0, isEnd: false)
            wrapPending = false
            voice.renderHasStarted = false
            if requested != generation { voice.soughtWhileStill.store(false, ordering: .releasing) }
            voice.awaitingStart.store(true, ordering: .releasing)
            voice.renderEndFrame = .min
            voice.position.store(target)
            voice.clock.clear()
            voice.ringOwner.store(0, ordering: .releasing)
            generation = requested
            rateSeen = rate
            restart(at: target, rate: rate)
            voice.decodeError.withLock { $0 = failure }
            voice.appliedSeekGeneration.store(requested, ordering: .releasing)
        }
        guard !ended, failure == nil else { return false }
        // Refill only below half full, then in large blocks: topping the ring up a few
        // hundred frames at a time cost more than the decoding itself.
        guard voice.ring.availableToRead < voice.ring.capacity / 2 || refilling else { return false }
        refilling = true

        var wrote = false
        var blocks = 0
        while !voice.marks.isFull, blocks < maxBlocks {
            blocks += 1
            let ratio = Double(engineRate) / Double(file.format.sampleRate) / Double(rateSeen)
            let room = voice.ring.availableToWrite - 256
            let inputFrames = min(VoiceReader.blockFrames, Int(Double(room) / ratio) - 64)
            guard inputFrames >= VoiceReader.blockFrames / 2 else {
                refilling = false
                break
            }
            let read: Int
            var inPlace = false
            do {
                // A stereo file at the engine's rate, neither converted nor stretched: decoded
                // straight into the ring, a larger block at a time (see ``directBlockFrames``).
                let direct = fileChannels == 2 && converter == nil && stretcher == nil
                let span = direct ? voice.ring.writableSpan(maxFrames: min(VoiceReader.directBlockFrames, room)) : (start: decoded, frames: 0)
                if span.frames >= VoiceReader.blockFrames / 2 {
                    read = try file.read(into: span.start, frames: span.frames)
                    inPlace = true
                } else {
                    read = try file.read(into: decoded, frames: inputFrames)
                }
            } catch {
                fail(voice, error)
                return wrote
            }
            if read == 0 {
                if let stream, stream.isWaitingForFrames {
                    // Nothing yet: the stream wakes the reader when frames arrive.
                    setStarved(voice, true)
                    return wrote
                }
                let loops = voice.numberOfLoops.load(ordering: .relaxed)
                if loops < 0 || loopsDone < loops {
                    loopsDone += 1
                    wrapPending = true
                    do { try file.seek(toFrame: 0) } catch { fail(voice, error); return wrote }
                    mediaTime = 0
                    outputMediaTime = 0
                    continue
                }
                guard drain(voice) else {
                    // The stretcher's rest needs more room in the ring: again on the next refill.
                    refilling = false
                    return wrote
                }
                endStream(voice)
                return true
            }
            if inPlace {
                pushMark(voice, frames: read)
                voice.ring.commitWrite(frames: read)
                notePrimed(voice)
            } else {
                write(voice, toStereo(frames: read), frames: read, endOfInput: false)
            }
            mediaTime += Double(read) / Double(file.format.sampleRate)
            wrote = true
            if voice.ring.availableToRead >= voice.ring.capacity / 2 { setStarved(voice, false) }
        }
        // Marks are sized so that this does not happen (``Voice/fewestFramesPerMark``), but a
        // ring that can take no more is as primed as it can be: the voice starts with what it
        // holds rather than wait for frames no refill can add before it plays.
        if voice.marks.isFull { notePrimed(voice, ringTakesNoMore: true) }
        return wrote
    }

    /// Records that the source ran dry (or has refilled the ring to half), for the event
    /// thread to report (see `Voice+Supply.swift`).
    private func setStarved(_ voice: Voice, _ starved: Bool) {
        guard voice.supplyStarved.load(ordering: .relaxed) != starved else { return }
        voice.supplyStarved.store(starved, ordering: .releasing)
        voice.engine.eventSemaphore.signal()
    }

    /// Whether `fill` has something to do for `voice` now: a seek or rate change to apply, or
    /// a ring below half full with more to decode. The reader thread sleeps when no voice has.
    func needsWork(_ voice: Voice) -> Bool {
        guard voice.prepared.load(ordering: .acquiring) else { return false }
        let rate = voice.rateEnabled.load(ordering: .relaxed) ? voice.rate.value : 1
        if voice.seekGeneration.load(ordering: .acquiring) != generation || rate != rateSeen { return true }
        // A network stream with nothing buffered wakes the reader itself when frames arrive.
        if let stream, stream.isWaitingForFrames { return false }
        return !ended && failure == nil && !voice.marks.isFull && voice.ring.availableToRead < voice.ring.capacity / 2
    }

    private func restart(at seconds: Double, rate: Float) {
        ended = false
        failure = nil
        let frame = Int64((seconds * Double(file.format.sampleRate)).rounded())
        do { try file.seek(toFrame: max(0, frame)) } catch { failure = error }
        mediaTime = seconds
        outputMediaTime = seconds
        converter?.reset()
        if let stretcher { rubberBand.rubberband_delete(stretcher) }
        stretcher = nil
        stretchRate = rate
        (stretchedIn, stretchedOut, stretchedLimit) = (0, 0, .max)
        if rate != 1, case .failure(let unavailable) = LoadedLibraries.rubberBand {
            failure = AudioFileError(source: file.source, reason: .decodeFailed("cannot play at rate \(rate): \(unavailable)"))
        } else if rate != 1 {
            let options = Int32(RubberBandOptionProcessRealTime.rawValue | RubberBandOptionEngineFiner.rawValue | RubberBandOptionChannelsTogether.rawValue)
            let created = rubberBand.rubberband_new(UInt32(engineRate), 2, options, 1.0 / Double(rate), 1.0)
            rubberBand.rubberband_set_max_process_size(created, UInt32(max(convertedCapacity, 8192)))
            // Real-time protocol: feed the preferred padding of silence first, then drop
            // the start delay from the output, so the first frame out is the first frame in.
            let pad = Int(rubberBand.rubberband_get_preferred_start_pad(created))
            planar.0.update(repeating: 0, count: min(pad, stretchedCapacity))
            planar.1.update(repeating: 0, count: min(pad, stretchedCapacity))
            var padding: [UnsafePointer<Float>?] = [UnsafePointer(planar.0), UnsafePointer(planar.1)]
            padding.withUnsafeMutableBufferPointer { rubberBand.rubberband_process(created, $0.baseAddress, UInt32(min(pad, stretchedCapacity)), 0) }
            stretchDelay = Int(rubberBand.rubberband_get_start_delay(created))
            stretcher = created
        }
    }

    /// The `frames` frames just decoded, as stereo: `decoded` itself for a stereo file.
    private func toStereo(frames: Int) -> UnsafeMutablePointer<Float> {
        switch fileChannels {
        case 1:
            for i in 0..<frames { stereo[2 * i] = decoded[i]; stereo[2 * i + 1] = decoded[i] }
        case 2:
            return decoded
        default:
            // More than two channels: the first two are front left and right.
            for i in 0..<frames {
                stereo[2 * i] = decoded[i * fileChannels]
                stereo[2 * i + 1] = decoded[i * fileChannels + 1]
            }
        }
        return stereo
    }

    /// Converts and stretches `frames` stereo frames and writes them with a mark.
    private func write(_ voice: Voice, _ input: UnsafeMutablePointer<Float>, frames: Int, endOfInput: Bool) {
        var output = input
        var count = frames
        if let converter {
            var consumed = 0
            count = 0
            repeat {
                let step = converter.process(input: input + consumed * 2, inputFrames: frames - consumed,
                                             output: converted + count * 2, outputCapacity: convertedCapacity - count,
                                             endOfInput: endOfInput)
                consumed += step.consumed
                count += step.produced
                if step.consumed == 0 && step.produced == 0 { break }
            } while consumed < frames || (endOfInput && count < convertedCapacity)
            output = converted
        }
        guard stretcher != nil else {
            push(voice, output, frames: count)
            return
        }
        for i in 0..<count { planar.0[i] = output[2 * i]; planar.1[i] = output[2 * i + 1] }
        stretch(voice, frames: count)
    }

    /// Gives the stretcher the `frames` frames in `planar` and takes everything it has into
    /// the ring (up to ``stretchedLimit``). Never with the final flag: see
    /// ``playOutStretcher(_:)``.
    private func stretch(_ voice: Voice, frames: Int) {
        guard let stretcher else { return }
        var inputs: [UnsafePointer<Float>?] = [UnsafePointer(planar.0), UnsafePointer(planar.1)]
        inputs.withUnsafeMutableBufferPointer { rubberBand.rubberband_process(stretcher, $0.baseAddress, UInt32(frames), 0) }
        stretchedIn += frames
        while true {
            let available = Int(rubberBand.rubberband_available(stretcher))
            guard available > 0 else { break }
            var outputs: [UnsafeMutablePointer<Float>?] = [planar.0, planar.1]
            let got = outputs.withUnsafeMutableBufferPointer {
                Int(rubberBand.rubberband_retrieve(stretcher, $0.baseAddress, UInt32(min(available, stretchedCapacity))))
            }
            // The first `stretchDelay` frames are the stretcher's own delay, not audio.
            let skip = min(stretchDelay, got)
            stretchDelay -= skip
            let taken = min(got - skip, stretchedLimit - stretchedOut)
            for i in 0..<taken { stretched[2 * i] = planar.0[skip + i]; stretched[2 * i + 1] = planar.1[skip + i] }
            push(voice, stretched, frames: taken)
            stretchedOut += taken
            if got == 0 { break }
        }
    }

    /// Plays out what the stretcher holds at the end of the input. In real-time mode it keeps
    /// its delay's worth of input until more comes, and the final flag did not give it back:
    /// a one-second file at rate 2 was heard for 0.438 s of its 0.5 s (the last 120 ms of
    /// media lost). So it is given silence until what it gave since its start is the input's
    /// length at the rate, and its output is cut there.
    private func playOutStretcher(_ voice: Voice) {
        guard stretcher != nil else { return }
        let expected = stretchedDue
        stretchedLimit = expected
        let silence = VoiceReader.blockFrames
        planar.0.update(repeating: 0, count: silence)
        planar.1.update(repeating: 0, count: silence)
        // At most a second of silence (the delay is about a tenth of that): a stretcher that
        // gives nothing for it does not hold the reader.
        var fed = 0
        while stretchedOut < expected, fed < engineRate {
            stretch(voice, frames: silence)
            fed += silence
        }
    }

    /// Writes frames into the ring with a timeline mark for their media time.
    private func push(_ voice: Voice, _ frames: UnsafeMutablePointer<Float>, frames count: Int) {
        guard count > 0 else { return }
        pushMark(voice, frames: count)
        var written = 0
        while written < count {
            let n = voice.ring.write(frames + written * 2, frames: count - written)
            if n == 0 { break }
            written += n
        }
        notePrimed(voice)
    }

    /// The timeline mark for `count` frames about to be written at the ring's write index.
    private func pushMark(_ voice: Voice, frames count: Int) {
        let perFrame = Double(stretchRate) / Double(engineRate)
        _ = voice.marks.push(Voice.Mark(ringFrame: voice.ring.framesWritten, mediaTime: outputMediaTime, mediaPerFrame: perFrame,
                                        isEnd: false, isWrap: wrapPending))
        wrapPending = false
        outputMediaTime += Double(count) * perFrame
    }

    /// After a write: the voice is primed once its ring holds what a start needs.
    private func notePrimed(_ voice: Voice, ringTakesNoMore: Bool = false) {
        if !voice.primed.load(ordering: .relaxed),
           ringTakesNoMore || voice.ring.availableToRead >= min(voice.engine.primeFrames, voice.ring.capacity - 2 * VoiceReader.blockFrames) {
            voice.primed.store(true, ordering: .releasing)
            // A restart, or a long buffer's start, waits for the voices it plays (see
            // `AudioEngine.playingVoicesReady`). Only then: a stray wake would take the
            // render thread out of a long buffer's pulling.
            voice.engine.wakeRenderIfAwaitingVoices()
        }
    }

    /// Flushes what the converter and stretcher still hold. Returns false, and does nothing,
    /// while the ring has no room for all of it (frames it has no room for are lost); a
    /// refill starts below half full, with room for seconds.
    private func drain(_ voice: Voice) -> Bool {
        if stretcher != nil {
            let owed = stretchedDue - stretchedOut
            let tail = (converter == nil ? 0 : convertedCapacity) + VoiceReader.blockFrames
            guard voice.ring.availableToWrite >= owed + Int(Double(tail) / Double(stretchRate)) + 256 else { return false }
        }
        if converter != nil { write(voice, stereo, frames: 0, endOfInput: true) }
        playOutStretcher(voice)
        return true
    }

    private func fail(_ voice: Voice, _ error: AudioFileError) {
        failure = error
        voice.decodeError.withLock { $0 = error }
        endStream(voice)
    }

    private func endStream(_ voice: Voice) {
        ended = true
        setStarved(voice, false)
        defer {
            voice.primed.store(true, ordering: .releasing)
            voice.engine.wakeRenderIfAwaitingVoices()
        }
        let duration = file.format.duration ?? mediaTime
        _ = voice.marks.push(Voice.Mark(ringFrame: voice.ring.framesWritten, mediaTime: failure == nil ? duration : mediaTime,
                                        mediaPerFrame: 0, isEnd: true))
    }
}
