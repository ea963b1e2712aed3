internal import CPulse
internal import PulseSupport
import Platform
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A PulseAudio-protocol server's sample cache (PulseAudio, or PipeWire through
/// pipewire-pulse), as libcanberra uses it: a sound is uploaded once under a name
/// (`pa_stream_connect_upload`), then played by name (`pa_context_play_sample_with_proplist`):
/// the server mixes it at once, with no stream to set up and nothing to decode. Samples
/// stay in the server until it exits, so a later process finds them there.
///
/// A play ends when the server removes its sink input; its completion is then delayed by the
/// sink's latency (asked of the sink then), so that it is reported after the last frame
/// is heard, not when the server has merely mixed it. The subscription to sink-input events
/// that tells this is asked for only while a play is under way: an idle connection hears
/// nothing and does not wake.
///
/// One connection per server address for the process (``connection(server:identity:)``),
/// on its own `pa_threaded_mainloop`. Every libpulse call is made with the mainloop's lock
/// held (the public methods take it; the callbacks run with it), and the bookkeeping
/// (`plays`, `byIndex`, `removedEarly`) is only touched under it too: `@unchecked Sendable`
/// for that reason. Completions run on a thread of their own, never on libpulse's.
public final class PulseSampleCache: @unchecked Sendable {
    /// Why the cache could not be used; the caller falls back to its own stream.
    public enum CacheError: Error, Sendable, CustomStringConvertible {
        /// No server answered (or the connection failed).
        case noServer(String)
        /// The server answered but refused or failed the request for `sample`.
        case failed(sample: String, reason: String)

        /// A sentence naming the sample (or the server) and the reason.
        public var description: String {
            switch self {
            case .noServer(let reason): "no sound server answered: \(reason)"
            case .failed(let sample, let reason): "the sound server's sample cache failed for “\(sample)”: \(reason)"
            }
        }
    }

    /// A sample the server holds.
    public struct SampleInfo: Sendable, Hashable {
        /// Its name in the cache.
        public var name: String
        /// Its length in seconds.
        public var duration: Double
        /// Its sample rate and channel count.
        public var sampleRate: Int
        /// Its channel count.
        public var channels: Int
        /// Its properties (`media.filename`, `event.id`, …).
        public var properties: [String: String]
    }

    /// How a play ended.
    public enum PlayEnd: Sendable, Hashable {
        /// The server removed the play's sink input (it played to its end, or someone killed
        /// it) and the sink's latency has passed since.
        case finished
        /// The play did not start, or the connection went away while it played.
        case failed(String)
    }

    /// A play started by ``play(sample:properties:completion:)``; give it to ``stop(_:)``.
    public struct Play: Sendable, Hashable {
        /// Its `earshot.event_id` property, unique in the process.
        public let eventID: UInt64
    }

    /// The server's address (`/run/user/1000/pulse/native`), as libpulse connected to it.
    public var server: String { serverName.withLock { $0 } }
    private let serverName = Mutex<String>("unknown server")

    private let loop: PulseMainloop
    private let connection: PulseContext
    /// The `pa_threaded_mainloop` and `pa_context` of ``loop`` and ``connection``.
    private var mainloop: OpaquePointer { loop.pointer }
    private var context: OpaquePointer { connection.pointer }
    private let isAlive = Atomic<Bool>(true)
    private let uploadCount = Atomic<Int>(0)
    /// Plays not yet ended, by event id; under the mainloop's lock.
    private var plays: [UInt64: PlayRecord] = [:]
    /// Plays by their sink input's index, once known; under the lock.
    private var byIndex: [UInt32: PlayRecord] = [:]
    /// Sink inputs removed while some play did not know its index yet; under the lock.
    private var removedEarly: Set<UInt32> = []

    /// Seconds a request may take before the server counts as hung.
    static let timeout: Double = 3
    /// libpulse's `PA_INVALID_INDEX` (a macro Swift does not import).
    static let invalidIndex = UInt32.max
    /// The property that tells a play's sink input from every other.
    static let eventIDProperty = "earshot.event_id"
    private static let nextEventID = Atomic<UInt64>(1)
    private static let connections = Mutex<[String: PulseSampleCache]>([:])

    /// Samples this process uploaded, to any server.
    public static var uploads: Int { totalUploads.load(ordering: .relaxed) }
    private static let totalUploads = Atomic<Int>(0)

    /// The process's connection to `server` (nil: libpulse's default server), made at the
    /// first call and kept; a connection that failed since is made again.
    public static func connection(server address: String?, identity: AudioEngine.StreamIdentity) throws(CacheError) -> PulseSampleCache {
        let key = address ?? ""
        if let existing = connections.withLock({ $0[key] }), existing.isAlive.load(ordering: .acquiring) { return existing }
        let made = try PulseSampleCache(server: address, identity: identity)
        connections.withLock { $0[key] = made }
        return made
    }

    /// Connects to `address` (nil: libpulse's default) and subscribes to sink-input events.
    private init(server address: String?, identity: AudioEngine.StreamIdentity) throws(CacheError) {
        guard let loop = PulseMainloop(name: "earshot-scache") else { throw .noServer("pa_threaded_mainloop_new failed") }
        let properties = PulseClient.properties(identity, mediaName: nil)
        defer { pa_proplist_free(properties) }
        guard let connection = PulseContext(on: loop, name: identity.applicationName, properties: properties) else {
            loop.stop()
            throw .noServer("pa_context_new failed")
        }
        self.loop = loop
        self.connection = connection
        connection.onStateChange { [weak self] _ in self?.contextStateChanged() }
        do { try connection.start(server: address) } catch { throw .noServer(error.reason) }
        loop.lock()
        let deadline = connection.deadline(after: Self.timeout)
        let readiness = connection.waitUntilReady(deadline)
        deadline.cancel()
        guard readiness == .ready else {
            let reason = if case .failed(let reason) = readiness { reason } else { "the server did not answer within \(Self.timeout) s" }
            isAlive.store(false, ordering: .releasing)
            connection.release()
            loop.unlock()
            loop.stop()
            throw .noServer(reason)
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        pa_context_set_subscribe_callback(context, { _, event, index, userdata in
            PulseSampleCache.from(userdata).serverEvent(event, index: index)
        }, me)
        // Its address, not its name and version: asking those would cost a round trip
        // before the first play (`earshot sound` is timed from its start).
        let name = connection.serverAddress ?? "unknown server"
        serverName.withLock { $0 = name }
        loop.unlock()
    }

    // The connection is kept for the process's life (``connection(server:identity:)``); one
    // that failed is left to its thread, which sleeps: libpulse's objects are not freed
    // from under a callback that may still hold them.

    /// Samples uploaded through this connection.
    public var uploadsHere: Int { uploadCount.load(ordering: .relaxed) }

    // MARK: - Requests

    /// The sample named `name`, or nil when the server holds none by that name.
    public func sampleInfo(named name: String) throws(CacheError) -> SampleInfo? {
        final class Query: @unchecked Sendable {  // written by the callback, read after it, under the lock
            var info: SampleInfo?
        }
        let query = Query()
        let result: Bool = try locked(name) { () throws(CacheError) -> Bool in
            let userdata = Unmanaged.passUnretained(query).toOpaque()
            guard let operation = pa_context_get_sample_info_by_name(context, name, { _, info, eol, userdata in
                guard let userdata, eol == 0, let info = info?.pointee else { return }
                let query = Unmanaged<Query>.fromOpaque(userdata).takeUnretainedValue()
                query.info = SampleInfo(name: info.name.map { String(cString: $0) } ?? "",
                                        duration: Double(info.duration) / 1e6, sampleRate: Int(info.sample_spec.rate),
                                        channels: Int(info.sample_spec.channels), properties: PulseSampleCache.dictionary(info.proplist))
            }, userdata) else { throw .failed(sample: name, reason: connection.lastError) }
            return finish(operation)
        }
        guard result else { throw .failed(sample: name, reason: "the server did not answer within \(Self.timeout) s") }
        return withExtendedLifetime(query) { query.info }
    }

    /// Uploads interleaved Float32 `samples` (`channels` channels at `sampleRate`) as `name`,
    /// with `properties` (`media.role`, `event.id`, `media.filename`…; `event.id` and
    /// `media.name` are `name`, as the server names a sample by them); replaces a sample of that name. Returns once the server holds it.
    public func upload(name: String, samples: [Float], sampleRate: Int, channels: Int,
                       properties: [String: String]) throws(CacheError) {
        let bytes = samples.count * MemoryLayout<Float>.size
        guard bytes > 0 else { throw .failed(sample: name, reason: "the sound is empty") }
        guard channels > 0, channels <= Int(PA_CHANNELS_MAX) else { throw .failed(sample: name, reason: "\(channels) channels") }
        try locked(name) { () throws(CacheError) in
            var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(sampleRate), channels: UInt8(channels))
            var map = pa_channel_map()
            pa_channel_map_init_extend(&map, UInt32(channels), PA_CHANNEL_MAP_DEFAULT)
            // The server names the sample after its `event.id`, or else its `media.name`: both
            // are `name` (a play's own `event.id` then says which event it was).
            var properties = properties
            properties["event.id"] = name
            properties["media.name"] = name
            let list = PulseSampleCache.proplist(properties)
            defer { pa_proplist_free(list) }
            guard let stream = pa_stream_new_with_proplist(context, name, &spec, &map, list) else {
                throw .failed(sample: name, reason: connection.lastError)
            }
            defer {
                pa_stream_set_state_callback(stream, nil, nil)
                pa_stream_unref(stream)
            }
            pa_stream_set_state_callback(stream, { _, userdata in
                PulseSampleCache.from(userdata).loop.signal()
            }, Unmanaged.passUnretained(self).toOpaque())
            guard pa_stream_connect_upload(stream, bytes) >= 0 else { throw .failed(sample: name, reason: connection.lastError) }
            let connected = waitLocked { pa_stream_get_state(stream) != PA_STREAM_CREATING }
            guard connected, pa_stream_get_state(stream) == PA_STREAM_READY else {
                pa_stream_disconnect(stream)
                throw .failed(sample: name, reason: connected ? connection.lastError : "the server did not answer")
            }
            let written = samples.withUnsafeBytes { pa_stream_write(stream, $0.baseAddress, bytes, nil, 0, PA_SEEK_RELATIVE) }
            guard written >= 0, pa_stream_finish_upload(stream) >= 0 else {
                let reason = connection.lastError
                pa_stream_disconnect(stream)
                throw .failed(sample: name, reason: reason)
            }
            // A finished upload ends the stream: TERMINATED is success, FAILED is not.
            let done = waitLocked { pa_stream_get_state(stream) == PA_STREAM_TERMINATED || pa_stream_get_state(stream) == PA_STREAM_FAILED }
            guard done, pa_stream_get_state(stream) == PA_STREAM_TERMINATED else {
                throw .failed(sample: name, reason: done ? connection.lastError : "the server did not answer")
            }
        }
        uploadCount.add(1, ordering: .relaxed)
        Self.totalUploads.add(1, ordering: .relaxed)
    }

    /// Uploads decoded `audio` as `name` (see ``upload(name:samples:sampleRate:channels:properties:)``).
    public func upload(name: String, audio: PCMAudio, properties: [String: String]) throws(CacheError) {
        try upload(name: name, samples: audio.samples, sampleRate: audio.format.sampleRate,
                   channels: max(1, audio.format.channelCount), properties: properties)
    }

    /// Plays the cached sample `sample` on the default sink with `properties` (merged with
    /// the sample's own) plus a unique `earshot.event_id`; returns at once. `completion`
    /// runs once, on a thread of its own, when the play ended, with the play (see ``PlayEnd``); never after
    /// ``stop(_:)``.
    public func play(sample: String, properties: [String: String],
                     completion: @escaping @Sendable (Play, PlayEnd) -> Void) throws(CacheError) -> Play {
        let record = try start(sample: sample, properties: properties, completion: completion, awaitingAnswer: false)
        return Play(eventID: record.eventID)
    }

    /// Plays the cached sample `sample` as ``play(sample:properties:completion:)`` does, but
    /// waits for the server's answer, which comes once its sink input exists (the sound
    /// is already on its way): nil when the server refused the play, most often because it
    /// holds no sample of that name. Nothing then plays and `completion` never runs.
    ///
    /// For a caller that would otherwise ask first whether the sample is there
    /// (``sampleInfo(named:)``): one round trip fewer before the first frame.
    public func playIfPresent(sample: String, properties: [String: String],
                              completion: @escaping @Sendable (Play, PlayEnd) -> Void) throws(CacheError) -> Play? {
        let record = try start(sample: sample, properties: properties, completion: completion, awaitingAnswer: true)
        return record.refused ? nil : Play(eventID: record.eventID)
    }

    /// Sends the play request; with `awaitingAnswer`, returns only once the server answered
    /// (``PlayRecord/refused`` says how), and throws when it does not in time.
    private func start(sample: String, properties: [String: String], completion: @escaping @Sendable (Play, PlayEnd) -> Void,
                       awaitingAnswer: Bool) throws(CacheError) -> PlayRecord {
        let eventID = Self.nextEventID.add(1, ordering: .relaxed).oldValue
        let record = PlayRecord(eventID: eventID, sample: sample, completion: completion)
        record.awaited = awaitingAnswer
        var all = properties
        all[Self.eventIDProperty] = String(eventID)
        try locked(sample) { () throws(CacheError) in
            let list = PulseSampleCache.proplist(all)
            defer { pa_proplist_free(list) }
            // Sink-input events only while something plays: an idle connection hears nothing.
            // Asked before the play, on the same connection, so no event of it is missed.
            let first = plays.isEmpty
            if first { subscribe(true) }
            let userdata = Unmanaged.passRetained(Reply(cache: self, record: record)).toOpaque()
            guard let operation = pa_context_play_sample_with_proplist(context, sample, nil, PA_VOLUME_INVALID, list, { _, index, userdata in
                let reply = Unmanaged<Reply>.fromOpaque(userdata!).takeRetainedValue()
                reply.cache.played(reply.record, index: index)
            }, userdata) else {
                Unmanaged<Reply>.fromOpaque(userdata).release()
                if first { subscribe(false) }
                throw .failed(sample: sample, reason: connection.lastError)
            }
            pa_operation_unref(operation)
            plays[eventID] = record
            guard awaitingAnswer, !waitLocked({ record.answered }) else { return }
            // No answer in time: whatever the server does later is undone (`played`).
            forget(record)
            throw .failed(sample: sample, reason: "the server did not answer within \(Self.timeout) s")
        }
        return record
    }

    /// Stops `play` at once (kills its sink input); its completion does not run. Nothing
    /// happens for a play that already ended.
    public func stop(_ play: Play) {
        guard isAlive.load(ordering: .acquiring) else { return }
        loop.lock()
        defer { loop.unlock() }
        guard let record = plays[play.eventID] else { return }
        forget(record)
        // Not yet started (the server's answer is on its way): `played` kills it then.
        for index in record.indices {
            byIndex[index] = nil
            kill(index)
        }
    }

    /// Removes, without waiting for the server, every cached sample whose name starts with
    /// `prefix` but `keeping`: the earlier uploads of a sound whose file changed since.
    public func removeSamples(withPrefix prefix: String, keeping: String) {
        final class Names: @unchecked Sendable {  // only touched by libpulse's callbacks, under the lock
            let prefix: String, keeping: String
            init(_ prefix: String, _ keeping: String) { (self.prefix, self.keeping) = (prefix, keeping) }
        }
        try? locked(keeping) { () throws(CacheError) in
            let userdata = Unmanaged.passRetained(Names(prefix, keeping)).toOpaque()
            guard let operation = pa_context_get_sample_info_list(context, { context, info, eol, userdata in
                let names = Unmanaged<Names>.fromOpaque(userdata!)
                guard eol == 0 else { return names.release() }
                guard let cName = info?.pointee.name else { return }
                let name = String(cString: cName)
                let wanted = names.takeUnretainedValue()
                guard name.hasPrefix(wanted.prefix), name != wanted.keeping,
                      let removal = pa_context_remove_sample(context, cName, nil, nil) else { return }
                pa_operation_unref(removal)
            }, userdata) else {
                Unmanaged<Names>.fromOpaque(userdata).release()
                return
            }
            pa_operation_unref(operation)
        }
    }

    /// With the lock held: `record` no longer counts as playing, its completion will not
    /// run, and a sink input the server makes for it later is killed (`played`).
    private func forget(_ record: PlayRecord) {
        guard plays.removeValue(forKey: record.eventID) != nil else { return }
        if plays.isEmpty { subscribe(false) }
        record.completion = nil
        record.stopped = true
    }

    // MARK: - Callbacks (on libpulse's thread, with the lock held)

    /// The server answered a play: `index` is its sink input, or `Self.invalidIndex` on failure.
    private func played(_ record: PlayRecord, index: UInt32) {
        record.answered = true
        if record.awaited { loop.signal() }
        if record.stopped {
            if index != Self.invalidIndex { kill(index) }
            return
        }
        guard index != Self.invalidIndex else {
            // A caller that waits for the answer hears of the refusal from it.
            if record.awaited {
                record.refused = true
                record.completion = nil
            }
            complete(record, .failed(connection.lastError))
            return
        }
        learned(index, of: record)
        guard plays[record.eventID] != nil else { return }
        // Its sink, whose latency is what is still to be heard once the server removes it.
        askSinkInput(index)
    }

    /// `index` is `record`'s sink input (from the server's answer, or its `earshot.event_id`).
    private func learned(_ index: UInt32, of record: PlayRecord) {
        guard !record.indices.contains(index) else { return }
        record.indices.append(index)
        byIndex[index] = record
        if removedEarly.remove(index) != nil { removed(record) }
    }

    private func askSinkInput(_ index: UInt32) {
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        guard let operation = pa_context_get_sink_input_info(context, index, { _, info, eol, userdata in
            guard eol == 0, let info = info?.pointee else { return }
            PulseSampleCache.from(userdata).describe(info)
        }, userdata) else { return }
        pa_operation_unref(operation)
    }

    /// A sink input's description: if it carries one of our event ids, it is that play's.
    private func describe(_ info: pa_sink_input_info) {
        guard let text = pa_proplist_gets(info.proplist, Self.eventIDProperty), let id = UInt64(String(cString: text)),
              let record = plays[id] else { return }
        record.sink = info.sink
        learned(info.index, of: record)
    }

    private func serverEvent(_ event: pa_subscription_event_type_t, index: UInt32) {
        guard event.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue == PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue else { return }
        let type = event.rawValue & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue
        let waiting = plays.values.contains { $0.indices.isEmpty }
        if type == PA_SUBSCRIPTION_EVENT_NEW.rawValue, waiting {
            askSinkInput(index)
        } else if type == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue {
            if let record = byIndex[index] {
                removed(record)
            } else if waiting {
                // Its play's answer may still be on its way; a few at most are kept.
                if removedEarly.count > 64 { removedEarly.removeAll() }
                removedEarly.insert(index)
            }
        }
    }

    /// The server removed `record`'s sink input: its last frame was mixed into the sink's
    /// buffer, which plays out over the sink's latency. The play completes once that latency
    /// (asked of the sink now) has passed.
    private func removed(_ record: PlayRecord) {
        guard plays[record.eventID] != nil, !record.ending else { return }
        record.ending = true
        guard let sink = record.sink else { return complete(record, .finished) }
        let userdata = Unmanaged.passRetained(Reply(cache: self, record: record)).toOpaque()
        guard let operation = pa_context_get_sink_info_by_index(context, sink, { _, info, eol, userdata in
            let reply = Unmanaged<Reply>.fromOpaque(userdata!)
            if let info = info?.pointee { reply.takeUnretainedValue().record.latency = info.latency }
            guard eol != 0 else { return }
            let done = reply.takeRetainedValue()
            done.cache.afterLatency(done.record)
        }, userdata) else {
            Unmanaged<Reply>.fromOpaque(userdata).release()
            return complete(record, .finished)
        }
        pa_operation_unref(operation)
    }

    /// Completes `record` once its sink's latency has passed (a timer that is due then).
    private func afterLatency(_ record: PlayRecord) {
        guard record.latency > 0 else { return complete(record, .finished) }
        let timer = connection.timer(after: Double(record.latency) / 1e6) { [self] in complete(record, .finished) }
        if !timer.isPending { complete(record, .finished) }
    }

    private func complete(_ record: PlayRecord, _ end: PlayEnd) {
        guard plays.removeValue(forKey: record.eventID) != nil else { return }
        for index in record.indices { byIndex[index] = nil }
        if plays.isEmpty {
            removedEarly.removeAll()
            if pa_context_get_state(context) == PA_CONTEXT_READY { subscribe(false) }
        }
        guard let completion = record.completion else { return }
        record.completion = nil
        let play = Play(eventID: record.eventID)
        do {
            try startThreadIfPossible(name: "earshot-sound") { completion(play, end) }
        } catch {
            // No thread to spare: run it here (it must not call back into the cache).
            completion(play, end)
        }
    }

    /// The context's state changed (its waiters are woken after this).
    private func contextStateChanged() {
        if connection.state.isOver {
            isAlive.store(false, ordering: .releasing)
            let reason = "the connection to the server ended: \(connection.lastError)"
            for record in Array(plays.values) { complete(record, .failed(reason)) }
        }
    }

    /// Asks for sink-input events (`on`) or for none; with the lock held.
    private func subscribe(_ on: Bool) {
        let mask = on ? PA_SUBSCRIPTION_MASK_SINK_INPUT : PA_SUBSCRIPTION_MASK_NULL
        if let operation = pa_context_subscribe(context, mask, nil, nil) { pa_operation_unref(operation) }
    }

    private func kill(_ index: UInt32) {
        if let operation = pa_context_kill_sink_input(context, index, nil, nil) { pa_operation_unref(operation) }
    }

    // MARK: - Waiting

    /// Runs `body` with the lock held; throws when the connection is gone.
    private func locked<T>(_ sample: String, _ body: () throws(CacheError) -> T) throws(CacheError) -> T {
        guard isAlive.load(ordering: .acquiring) else { throw .failed(sample: sample, reason: "the connection to the server ended") }
        loop.lock()
        defer { loop.unlock() }
        guard pa_context_get_state(context) == PA_CONTEXT_READY else {
            throw .failed(sample: sample, reason: "the connection to the server ended: \(connection.lastError)")
        }
        return try body()
    }

    /// Waits for `operation` (with the lock held), then lets it go; false when the server
    /// did not answer in time or the connection ended.
    private func finish(_ operation: OpaquePointer) -> Bool {
        defer { pa_operation_unref(operation) }
        pa_operation_set_state_callback(operation, { _, userdata in
            PulseSampleCache.from(userdata).loop.signal()
        }, Unmanaged.passUnretained(self).toOpaque())
        let done = waitLocked { pa_operation_get_state(operation) != PA_OPERATION_RUNNING }
        if !done { pa_operation_cancel(operation) }
        pa_operation_set_state_callback(operation, nil, nil)
        return done && pa_operation_get_state(operation) == PA_OPERATION_DONE
    }

    /// With the lock held: waits until `condition` holds (true), or the connection fails or
    /// ``timeout`` passes (false). The mainloop signals on every state change; a timer ends
    /// the wait of a server that never answers.
    private func waitLocked(_ condition: () -> Bool) -> Bool {
        if condition() { return true }
        let deadline = connection.deadline(after: Self.timeout)
        defer { deadline.cancel() }
        while !condition() {
            if deadline.passed || connection.state.isOver { return condition() }
            loop.wait()
        }
        return true
    }

    // MARK: - Helpers

    private static func from(_ userdata: UnsafeMutableRawPointer?) -> PulseSampleCache {
        Unmanaged<PulseSampleCache>.fromOpaque(userdata!).takeUnretainedValue()
    }

    private static func proplist(_ properties: [String: String]) -> OpaquePointer {
        let list = pa_proplist_new()!
        for (key, value) in properties where !value.isEmpty { _ = pa_proplist_sets(list, key, value) }
        return list
    }

    private static func dictionary(_ list: OpaquePointer?) -> [String: String] {
        guard let list else { return [:] }
        var result: [String: String] = [:]
        var state: UnsafeMutableRawPointer?
        while let key = pa_proplist_iterate(list, &state) {
            if let value = pa_proplist_gets(list, key) { result[String(cString: key)] = String(cString: value) }
        }
        return result
    }
}

/// One play's bookkeeping; only touched under the mainloop's lock (`@unchecked Sendable`
/// for that reason: it travels through libpulse's userdata).
private final class PlayRecord: @unchecked Sendable {
    let eventID: UInt64
    let sample: String
    var completion: (@Sendable (PulseSampleCache.Play, PulseSampleCache.PlayEnd) -> Void)?
    /// Its sink input's index (the server's answer and the `earshot.event_id` match agree
    /// on PulseAudio; either may come first).
    var indices: [UInt32] = []
    /// The sink it plays on, once known.
    var sink: UInt32?
    /// The sink's latency when the server removed the sink input, in µs.
    var latency: pa_usec_t = 0
    var stopped = false
    var ending = false
    /// Its caller waits for the server's answer (``PulseSampleCache/playIfPresent(sample:properties:completion:)``).
    var awaited = false
    /// The server answered the play request.
    var answered = false
    /// The server refused it (only noted for an awaited play).
    var refused = false
    init(eventID: UInt64, sample: String, completion: @escaping @Sendable (PulseSampleCache.Play, PulseSampleCache.PlayEnd) -> Void) {
        (self.eventID, self.sample, self.completion) = (eventID, sample, completion)
    }
}

/// A callback's userdata: the cache and one play (retained through libpulse, released by the callback).
private final class Reply: @unchecked Sendable {
    let cache: PulseSampleCache
    let record: PlayRecord
    init(cache: PulseSampleCache, record: PlayRecord) { (self.cache, self.record) = (cache, record) }
}
