internal import CFFmpeg
import Glibc
import Platform
import Synchronization

/// Audio from an `http://` or `https://` URL (a progressive file or an endless radio stream),
/// read and decoded by FFmpeg on a thread of its own, so that a slow or stalled server never
/// holds up the engine's reader thread (which fills every voice), its render thread or a bus thread.
///
/// The stream thread decodes ahead into a buffer of ``bufferSeconds`` seconds; the engine's
/// reader takes frames from it without waiting. When the buffer is empty but the stream has not
/// ended, a read returns 0 and ``isWaitingForFrames`` is true: the voice then reports itself
/// starved, and the reader is woken again when frames arrive.
///
/// Opening (the HTTP exchange and the first packets) happens in ``init(url:)``, on the caller's
/// thread, and gives up after ``NetworkTimeouts/open`` seconds. FFmpeg reconnects a dropped
/// connection (with a range request where the server allows it) for a few seconds before the
/// stream ends with an error naming the URL and the reason.
///
/// ICY metadata (Icecast, SHOUTcast): each new `StreamTitle` goes to the handler given to
/// ``onTitleChange(_:)``, on the stream thread.
///
/// `@unchecked Sendable`: reads and seeks come from one thread at a time (the engine's reader);
/// everything shared with the stream thread is atomic or behind a Mutex.
public final class NetworkStream: FrameSource, @unchecked Sendable {
    /// Seconds of decoded audio the stream thread keeps ahead of playback.
    public static let bufferSeconds = 5

    /// The decoded format; no frame count for an endless stream (a radio), an estimate for a
    /// file whose container does not say it exactly.
    public let format: AudioFileFormat
    /// The URL, as given.
    public let source: String
    /// The tags the container carries (an MP3's ID3, an Ogg stream's comments); an ICY station
    /// name, when the server sends one, is the album.
    public let tags: AudioFileTags
    /// Whether the server lets the stream be repositioned (it honours ranges and gave a
    /// length). An endless stream never is; seeking one is ignored.
    public let isSeekable: Bool
    /// Whether the stream has no known end (a radio stream): its ``format`` has no frame count.
    public var isEndless: Bool { format.frameCount == nil }

    private let core: StreamCore
    /// Set by ``read(into:frames:)`` when it returned 0 for want of frames (reader thread only).
    private var waited = false

    /// Whether `text` names a stream this type opens (`http:` or `https:`, any case).
    public static func handles(_ text: String) -> Bool {
        let lower = text.prefix(8).lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://")
    }

    /// The certificate authorities HTTPS servers are checked against by default: the PEM file
    /// `SSL_CERT_FILE` names (OpenSSL's convention), or nil for the system's trust store.
    public static var defaultCertificateAuthorities: String? {
        getenv("SSL_CERT_FILE").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Connects to `url` and reads its header; the stream thread then starts reading ahead.
    ///
    /// An `https://` server must show a valid certificate for the URL's host, signed by an
    /// authority in `certificateAuthorities` (a PEM file; by default
    /// ``defaultCertificateAuthorities``, else the system's trust store).
    ///
    /// - Throws: ``AudioFileError`` naming the URL: ``AudioFileError/Reason/networkFailed(_:)``
    ///   when the server cannot be reached, answers with an error or shows a certificate that
    ///   is not trusted, ``AudioFileError/Reason/unsupportedFormat(_:)`` when what it sends is
    ///   not audio FFmpeg decodes.
    public init(url: String, certificateAuthorities: String? = NetworkStream.defaultCertificateAuthorities) throws(AudioFileError) {
        let interrupt = NetworkInterrupt()
        let decoder: FFmpegDecoder
        do {
            decoder = try FFmpegDecoder(url: url, certificateAuthorities: certificateAuthorities, interrupt: interrupt)
        } catch {
            throw NetworkStream.describe(error.error, url: url, interrupt: interrupt)
        }
        source = url
        format = decoder.format
        isSeekable = decoder.isSeekable && decoder.format.frameCount != nil
        var tags = decoder.tags
        if let headers = decoder.icyMetadataHeaders, let name = ICYMetadata.stationName(headers), tags.album == nil {
            tags.album = name
        }
        self.tags = tags
        core = StreamCore(decoder: decoder, interrupt: interrupt, bufferSeconds: Self.bufferSeconds)
        let core = core
        startThread(name: "earshot-stream") { core.run() }
    }

    deinit { core.close() }

    /// Calls `handler` with each new ICY `StreamTitle`, on the stream thread (the current
    /// title, if one was already received, at once on the caller's thread).
    public func onTitleChange(_ handler: @escaping @Sendable (String) -> Void) {
        let current = core.titles.withLock { state -> String? in
            state.handler = handler
            return state.current
        }
        if let current { handler(current) }
    }

    /// The last ICY `StreamTitle` received, if any.
    public var streamTitle: String? { core.titles.withLock { $0.current } }

    /// Stops the stream thread and abandons any network call in progress (also done when the
    /// stream is released). Reads then return what was buffered, then 0.
    public func close() { core.close() }

    // MARK: - FrameSource (the engine's reader thread)

    /// Takes up to `frames` buffered frames. Returns 0 at the end, or when nothing is buffered
    /// yet (then ``isWaitingForFrames`` is true). Throws, once everything before it was
    /// delivered, the error that ended the stream.
    public func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
        waited = false
        if let got = try core.take(into: buffer, frames: frames) { return got }
        // Nothing there: ask to be woken, then look again (frames may have come in between).
        core.readerWaiting.store(true, ordering: .sequentiallyConsistent)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if let got = try core.take(into: buffer, frames: frames) { return got }
        waited = true
        return 0
    }

    /// Asks the stream thread to move to `frame` (without waiting for it): until it has,
    /// reads find nothing. Ignored when the stream is not seekable.
    public func seek(toFrame frame: Int64) throws(AudioFileError) {
        guard isSeekable else { return }
        core.requestSeek(to: frame)
    }

    /// After a read returned 0: true when frames are still to come (see ``read(into:frames:)``).
    var isWaitingForFrames: Bool { waited }

    /// Who to wake (the engine's reader) when frames arrive after a read found none.
    func setArrivalHandler(_ handler: @escaping @Sendable () -> Void) {
        core.arrival.withLock { $0 = handler }
    }

    // MARK: - Errors

    /// An open failure in the words of the network: what FFmpeg's code and log mean for a URL.
    static func describe(_ error: AudioFileError, url: String, interrupt: NetworkInterrupt) -> AudioFileError {
        func network(_ detail: String) -> AudioFileError { AudioFileError(source: url, reason: .networkFailed(detail)) }
        switch error.reason {
        case .readFailed(let detail), .decodeFailed(let detail):
            if interrupt.isClosed { return network("closed before the server answered") }
            if detail.contains(FFmpegError.text(earshot_averror_exit())) || detail.contains("Immediate exit") {
                return network("no answer within \(Int(NetworkTimeouts.open)) s")
            }
            let lower = detail.lowercased()
            if let range = detail.firstRange(of: "Server returned ") {
                var status = detail[range.upperBound...].prefix { $0 != "(" && $0 != ";" }
                while status.last == " " { status.removeLast() }
                return network("the server answered \(status)")
            }
            for (needle, words) in [
                ("connection refused", "connection refused"),
                ("redirect", "too many redirects (more than 8)"),
                ("timed out", "no answer within \(Int(NetworkTimeouts.read)) s"),
                ("name or service not known", "the host name does not resolve"),
                ("failed to resolve", "the host name does not resolve"),
                ("network is unreachable", "the network is unreachable"),
                ("no route to host", "no route to host"),
                ("connection reset", "the server reset the connection"),
                ("peer certificate failed verification", "the server's certificate is not trusted (not signed by a known authority, expired or not yet valid)"),
                ("does not match hostname", "the server's certificate is for another host name"),
            ] where lower.contains(needle) {
                return network(words)
            }
            // FFmpeg's http protocol says nothing but "Input/output error" when it stops following
            // redirects (after `max_redirects`) or the server closes before its headers.
            if detail == "FFmpeg: \(FFmpegError.text(-EIO))" {
                return network("no usable answer (an input/output error, as after more than 8 redirects, or a connection closed before the headers)")
            }
            if case .readFailed = error.reason { return network(detail) }
            return error
        case .notFound:
            return network("the server answered 404 Not Found")
        case .permissionDenied:
            return network("the server refused access (403 Forbidden or 401 Unauthorized)")
        default:
            return error
        }
    }
}

/// What the stream thread and the engine's reader share.
final class StreamCore: @unchecked Sendable {
    /// Used by the stream thread only, once the stream is open.
    private let decoder: FFmpegDecoder
    let interrupt: NetworkInterrupt
    private let ring: FrameRing
    private let channels: Int
    private let rate: Int
    /// The stream thread sleeps on it when the buffer is full, or the stream ended.
    private let wake = Semaphore()
    private let roomWanted = Atomic<Bool>(false)
    /// Set by the reader when it found nothing; the stream thread then calls `arrival`.
    let readerWaiting = Atomic<Bool>(false)
    let arrival = Mutex<(@Sendable () -> Void)?>(nil)
    private let requestedSeek = Atomic<UInt32>(0)
    private let seekFrame = Atomic<Int64>(0)
    private let appliedSeek = Atomic<UInt32>(0)
    /// The stream ended (for the current seek), cleanly or with `failure`.
    private let finished = Atomic<Bool>(false)
    private let failure = Mutex<AudioFileError?>(nil)
    let titles = Mutex<(current: String?, handler: (@Sendable (String) -> Void)?)>((nil, nil))

    init(decoder: FFmpegDecoder, interrupt: NetworkInterrupt, bufferSeconds: Int) {
        self.decoder = decoder
        self.interrupt = interrupt
        channels = decoder.format.channelCount
        rate = decoder.format.sampleRate
        ring = FrameRing(channels: channels, capacityFrames: rate * bufferSeconds)
    }

    func close() {
        interrupt.close()
        wake.signal()
    }

    func requestSeek(to frame: Int64) {
        seekFrame.store(frame, ordering: .relaxed)
        requestedSeek.add(1, ordering: .releasing)
        wake.signal()
    }

    /// The reader's side: frames if there are any, 0 at the end, nil when there are none yet.
    func take(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int? {
        guard appliedSeek.load(ordering: .acquiring) == requestedSeek.load(ordering: .acquiring) else { return nil }
        let done = finished.load(ordering: .acquiring)
        let channels = channels
        let got = ring.read(frames: frames) { span, count, offset in
            (buffer + offset * channels).update(from: span, count: count * channels)
        }
        if got > 0 {
            if roomWanted.exchange(false, ordering: .acquiringAndReleasing) { wake.signal() }
            return got
        }
        guard done else { return interrupt.isClosed ? 0 : nil }
        if let error = failure.withLock({ $0 }) { throw error }
        return 0
    }

    /// The stream thread: decode ahead until the buffer is full, wait for room, apply seeks.
    func run() {
        let block = 2048
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: block * channels)
        defer { buffer.deallocate() }
        var generation: UInt32 = 0
        var lastPacket: [UInt8]?
        while !interrupt.isClosed {
            let requested = requestedSeek.load(ordering: .acquiring)
            if requested != generation {
                generation = requested
                finished.store(false, ordering: .relaxed)
                failure.withLock { $0 = nil }
                do {
                    try decoder.seek(toFrame: seekFrame.load(ordering: .relaxed))
                } catch {
                    failure.withLock { $0 = error }
                    finished.store(true, ordering: .releasing)
                }
                // The reader reads nothing until the seek is applied: the ring is ours to empty.
                ring.reset()
                appliedSeek.store(requested, ordering: .releasing)
                announceArrival()
                continue
            }
            if finished.load(ordering: .acquiring) {
                wake.wait()
                continue
            }
            if ring.availableToWrite < block {
                roomWanted.store(true, ordering: .sequentiallyConsistent)
                atomicMemoryFence(ordering: .sequentiallyConsistent)
                if ring.availableToWrite < block { wake.wait() }
                continue
            }
            let count: Int
            do {
                count = try decoder.read(into: buffer, frames: block)
            } catch {
                if interrupt.isClosed { break }
                failure.withLock { $0 = describeReadFailure(error) }
                finished.store(true, ordering: .releasing)
                announceArrival()
                continue
            }
            if count > 0 { _ = ring.write(buffer, frames: count) }
            if count == 0 { finished.store(true, ordering: .releasing) }
            let packet = decoder.icyMetadataPacket
            if packet != lastPacket {
                lastPacket = packet
                if let packet, let title = ICYMetadata.streamTitle(packet) { publish(title: title) }
            }
            announceArrival()
        }
    }

    private func announceArrival() {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if readerWaiting.exchange(false, ordering: .sequentiallyConsistent) { arrival.withLock { $0 }?() }
    }

    private func publish(title: String) {
        let handler = titles.withLock { state -> (@Sendable (String) -> Void)? in
            guard state.current != title else { return nil }
            state.current = title
            return state.handler
        }
        handler?(title)
    }

    /// A failure in the middle of the stream, named as the network's when the connection failed.
    private func describeReadFailure(_ error: AudioFileError) -> AudioFileError {
        guard let code = decoder.ioError else { return error }
        let seconds = AudioFileError.format(seconds: Double(decoder.position) / Double(rate))
        let reason = FFmpegError.text(code)
        return AudioFileError(source: error.source, reason: .readFailed("the connection failed at \(seconds) s and did not come back (\(reason))"))
    }
}

extension NetworkStream {
    /// ``isWaitingForFrames``, for tests that read a stream as the engine's reader does.
    package var isWaitingForFramesForTests: Bool { isWaitingForFrames }
}
