internal import CFFmpeg
internal import CFFmpegLoader
import Glibc
import Platform
import Synchronization

/// What lets a blocked FFmpeg network call give up: libavformat asks its interrupt callback
/// between reads, connects, reconnects and waits, and abandons the call when it says so.
///
/// It says so when the stream is closed (a player stopped or disposed), or when a deadline
/// passes (the open has one: a server that accepts the connection and answers nothing).
final class NetworkInterrupt: Sendable {
    private let closed = Atomic<Bool>(false)
    /// Monotonic seconds after which calls give up; 0 for none.
    private let deadline = AtomicDouble(0)

    /// Makes every blocked and later call give up.
    func close() { closed.store(true, ordering: .releasing) }
    var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Gives up after `seconds` from now (nil: no deadline).
    func setDeadline(seconds: Double?) { deadline.store(seconds.map { MonotonicClock.seconds() + $0 } ?? 0) }

    /// Whether a call should give up now; also says whether it was the deadline.
    var shouldStop: Bool {
        if isClosed { return true }
        let limit = deadline.value
        return limit > 0 && MonotonicClock.seconds() > limit
    }

    /// The callback structure for `AVFormatContext.interrupt_callback`; valid while this object lives.
    var callback: AVIOInterruptCB {
        AVIOInterruptCB(callback: { opaque in
            guard let opaque else { return 0 }
            return Unmanaged<NetworkInterrupt>.fromOpaque(opaque).takeUnretainedValue().shouldStop ? 1 : 0
        }, opaque: Unmanaged.passUnretained(self).toOpaque())
    }
}

/// How long a network stream may be silent before it counts as failed.
enum NetworkTimeouts {
    /// Connecting, the HTTP exchange and the first packets, together.
    static let open = 15.0
    /// No byte at all from the server, within one read (FFmpeg's `rw_timeout`).
    static let read = 10.0
    /// How long FFmpeg keeps trying to reconnect a dropped connection (its back-off doubles up to this).
    static let reconnect = 4
}

extension FFmpegDecoder {
    /// Opens an `http://` or `https://` URL through FFmpeg's own protocols, reconnecting dropped
    /// connections, asking for ICY metadata, giving up when `interrupt` says so.
    ///
    /// HTTPS servers must show a certificate for the URL's host signed by an authority in
    /// `certificateAuthorities` (a PEM file) or, when nil, in the system's trust store
    /// (FFmpeg's default is not to verify at all: `tls_verify` 0).
    ///
    /// Blocks the calling thread for the HTTP exchange and the first packets (at most
    /// ``NetworkTimeouts/open`` seconds, or until `interrupt` is closed).
    convenience init(url: String, certificateAuthorities: String?, interrupt: NetworkInterrupt) throws(OpenFailure) {
        interrupt.setDeadline(seconds: NetworkTimeouts.open)
        defer { interrupt.setDeadline(seconds: nil) }
        try self.init(source: url, input: nil) { context in
            context = ff.avformat_alloc_context()
            guard let allocated = context else { return FFmpegError.outOfMemory }
            allocated.pointee.interrupt_callback = interrupt.callback
            var options: OpaquePointer?
            defer { ff.av_dict_free(&options) }
            let settings: [(String, String)] = [
                ("reconnect", "1"), ("reconnect_streamed", "1"),
                ("reconnect_delay_max", "\(NetworkTimeouts.reconnect)"),
                ("rw_timeout", "\(Int(NetworkTimeouts.read * 1_000_000))"),
                ("icy", "1"), ("max_redirects", "8"),
                ("user_agent", "Earshot"),
                // Only the web's protocols, whatever a redirect or a playlist names (no file:, no pipes).
                ("protocol_whitelist", "http,https,tcp,tls"),
                // Verify the server's certificate and host name (a redirect to https too).
                ("tls_verify", "1"),
            ] + (certificateAuthorities.map { [("ca_file", $0)] } ?? [])
            for (key, value) in settings { _ = ff.av_dict_set(&options, key, value, 0) }  // fails only out of memory
            return ff.avformat_open_input(&context, url, nil, &options)
        }
    }

    /// Whether the byte stream can be repositioned (the server honours ranges and said how
    /// long the resource is): false for endless radio streams.
    var isSeekable: Bool {
        guard let io = formatContext?.pointee.pb else { return false }
        return io.pointee.seekable & AVIO_SEEKABLE_NORMAL != 0
    }

    /// The last ICY metadata block the server sent (`StreamTitle='…';`), nil before any.
    /// Bytes as sent: servers use UTF-8 or Latin-1.
    var icyMetadataPacket: [UInt8]? { ioOption("icy_metadata_packet") }
    /// The ICY response headers (`icy-name: …` lines), nil when the server sent none.
    var icyMetadataHeaders: String? { ioOption("icy_metadata_headers").map { String(decoding: $0, as: UTF8.self) } }

    /// The error the byte stream met, if it met one (a read that failed after reconnecting).
    var ioError: Int32? {
        guard let io = formatContext?.pointee.pb, io.pointee.error < 0 else { return nil }
        return io.pointee.error
    }

    private func ioOption(_ name: String) -> [UInt8]? {
        guard let io = formatContext?.pointee.pb else { return nil }
        var value: UnsafeMutablePointer<UInt8>?
        guard ff.av_opt_get(UnsafeMutableRawPointer(io), name, Int32(AV_OPT_SEARCH_CHILDREN), &value) >= 0, let value else { return nil }
        defer { ff.av_free(value) }
        let bytes = Array(UnsafeBufferPointer(start: value, count: strlen(UnsafeRawPointer(value).assumingMemoryBound(to: CChar.self))))
        return bytes.isEmpty ? nil : bytes
    }
}
