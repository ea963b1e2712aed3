/// What a sink plays: the bits of its samples and its rate. A client that writes at the
/// sink's rate is not resampled by the server.
package struct SinkFormat: Sendable, Equatable {
    /// The bits of a sample: 8 (`u8`, A-law, µ-law), 16, 24 (`s24`, `s24-32`, and `float32`,
    /// whose mantissa holds 24), or 32; nil for a format not listed.
    package var bits: Int?
    /// Frames a second.
    package var sampleRate: Int

    /// The default sink's format on `server` (nil: libpulse's default server), asked over a
    /// connection of its own that is gone when this returns; nil when no server answers
    /// within `timeout` seconds or it has no default sink. Blocks the caller for a round trip
    /// or two (about a millisecond on a local server).
    package static func ofDefaultSink(server: String?, clientName: String, timeout: Double) -> SinkFormat? {
        guard let loop = PulseMainloop(name: "earshot-sinkq") else { return nil }
        guard let context = PulseContext(on: loop, name: clientName) else {
            loop.stop()
            return nil
        }
        guard context.connect(server: server), loop.start() else {
            context.release()
            loop.stop()
            return nil
        }
        loop.lock()
        let deadline = context.deadline(after: timeout)
        let format = context.waitUntilReady(deadline) == .ready
            ? PulseContext.defaultSinkFormat(context.pointer, mainloop: loop.pointer) { deadline.passed } : nil
        deadline.cancel()
        context.release()
        loop.unlock()
        loop.stop()
        return format
    }
}
