import CPulse
import PulseSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One playback stream of the sound server (a PulseAudio sink input, also under PipeWire's
/// pipewire-pulse), as far as the arbiter cares.
package struct PlaybackStream: Sendable, Hashable {
    /// `application.process.id`; -1 when the stream does not say.
    package var pid: Int64
    /// `media.role` ("" when unset).
    package var role: String
    /// Whether the client corked it (paused).
    package var corked: Bool
    /// Its volume, per channel (`pa_volume_t`, 65536 is 100 %); empty when it has none.
    package var volume: [UInt32] = []
    /// Whether its volume can be set (`volume_writable`).
    package var volumeWritable = false
    /// The key under which the server remembers its volume (``ForeignDuckMemory/group(of:)``),
    /// `nil` when it has none.
    package var group: String?

    /// A stream of process `pid` (-1: unknown) with `media.role` `role`.
    package init(pid: Int64, role: String, corked: Bool, volume: [UInt32] = [], volumeWritable: Bool = false, group: String? = nil) {
        self.pid = pid
        self.role = role
        self.corked = corked
        self.volume = volume
        self.volumeWritable = volumeWritable
        self.group = group
    }

    /// Whether it counts as the app's sound: running, and not an event sound.
    package var isSounding: Bool { !corked && role != "event" && pid > 0 }
}

/// Follows the sound server's playback streams through the process's shared subscription to
/// the server (``PulseSubscriber``): the stream list once connected, then the server's
/// sink-input events (new, changed, removed), each answered by one introspection of that
/// stream. Nothing polls; an idle server sends nothing.
///
/// Threading: every libpulse call and the fields marked "main loop" run on the main-loop
/// thread (in libpulse callbacks) or with its lock held (`updateVolume`, `close`); that is
/// the invariant behind `@unchecked Sendable`. Results leave through `report`, which must
/// only hand them over (the arbiter schedules them onto the bus thread).
///
/// When no server answers, or the connection is lost, it reports an empty list; the
/// subscriber connects again when the server is back.
package final class PlaybackStreamWatcher: @unchecked Sendable {
    private let report: @Sendable ([UInt32: PlaybackStream]) -> Void
    private let stopped = Atomic<Bool>(false)

    // Main loop.
    /// Set once at the end of init.
    private var subscription: PulseSubscriber.Subscription!
    private var streams: [UInt32: PlaybackStream] = [:]
    private var listing = false

    /// Follows `server` (a PulseAudio server address, or `nil` for libpulse's default:
    /// `PULSE_SERVER`, then the user's runtime directory); nil when libpulse cannot start.
    package init?(server: String?, report: @escaping @Sendable ([UInt32: PlaybackStream]) -> Void) {
        self.report = report
        subscription = PulseSubscriber.subscribe(server: server, mask: PA_SUBSCRIPTION_MASK_SINK_INPUT.rawValue) { [unowned self] event in
            self.subscriberEvent(event)
        }
        guard subscription != nil else { return nil }
        subscription.start()
    }

    /// Stops following them (the last user of the connection closes it). Idempotent; not
    /// from the main-loop thread.
    package func close() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        subscription?.close { listing = false }
    }

    deinit { close() }

    // MARK: Connection (main loop)

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func from(_ userdata: UnsafeMutableRawPointer?) -> PlaybackStreamWatcher {
        Unmanaged<PlaybackStreamWatcher>.fromOpaque(userdata!).takeUnretainedValue()
    }

    private func subscriberEvent(_ event: PulseSubscriber.Event) {
        switch event {
        case .connected:
            listAll()
        case .changed(let type, let index):
            serverEvent(pa_subscription_event_type_t(rawValue: type), index: index)
        case .attemptFailed, .lost:
            listing = false
            let hadStreams = !streams.isEmpty
            streams = [:]
            if hadStreams { report([:]) }
        }
    }

    // MARK: Streams (main loop)

    private func listAll() {
        guard let ctx = subscription.connectedContext?.pointer else { return }
        listing = true
        var fresh: [UInt32: PlaybackStream] = [:]
        let list = ListBox { [unowned self] info in
            if let info {
                fresh[info.pointee.index] = Self.stream(info.pointee)
            } else {
                self.listing = false
                self.streams = fresh
                self.report(fresh)
            }
        }
        let operation = pa_context_get_sink_input_info_list(ctx, { _, info, eol, box in
            let list = Unmanaged<ListBox>.fromOpaque(box!).takeUnretainedValue()
            if eol != 0 {
                list.deliver(nil)
            } else if let info {
                list.deliver(info)
            }
        }, Unmanaged.passUnretained(list).toOpaque())
        if !subscription.track(operation, keeping: list) { listing = false }
    }

    private func serverEvent(_ type: pa_subscription_event_type_t, index: UInt32) {
        guard let ctx = subscription.connectedContext?.pointer else { return }
        let kind = type.rawValue & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue
        if kind == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue {
            if streams.removeValue(forKey: index) != nil { report(streams) }
            return
        }
        subscription.track(pa_context_get_sink_input_info(ctx, index, { _, info, eol, userdata in
            guard eol == 0, let info else { return }
            PlaybackStreamWatcher.from(userdata).received(info.pointee)
        }, userdata))
    }

    private func received(_ info: pa_sink_input_info) {
        let stream = Self.stream(info)
        guard streams[info.index] != stream else { return }
        streams[info.index] = stream
        report(streams)
    }

    private static func stream(_ info: pa_sink_input_info) -> PlaybackStream {
        func property(_ key: String) -> String? {
            guard let list = info.proplist, let value = pa_proplist_gets(list, key) else { return nil }
            return String(cString: value)
        }
        let pid = property("application.process.id").flatMap { Int64($0) } ?? -1
        let volume = info.has_volume != 0 ? Self.channels(of: info.volume) : []
        var keys: [String: String] = [:]
        for key in ForeignDuckMemory.groupKeys {
            keys[key] = property(key)
        }
        return PlaybackStream(pid: pid, role: property("media.role") ?? "", corked: info.corked != 0,
                              volume: volume, volumeWritable: info.volume_writable != 0 && !volume.isEmpty,
                              group: ForeignDuckMemory.group(of: keys))
    }

    private static func channels(of volume: pa_cvolume) -> [UInt32] {
        let count = min(Int(volume.channels), Int(PA_CHANNELS_MAX))
        return withUnsafeBytes(of: volume.values) { Array($0.bindMemory(to: UInt32.self).prefix(count)) }
    }

    private static func cvolume(_ channels: [UInt32]) -> pa_cvolume {
        var volume = pa_cvolume()
        volume.channels = UInt8(min(channels.count, Int(PA_CHANNELS_MAX)))
        withUnsafeMutableBytes(of: &volume.values) { raw in
            let values = raw.bindMemory(to: UInt32.self)
            for (i, value) in channels.prefix(Int(PA_CHANNELS_MAX)).enumerated() { values[i] = value }
        }
        return volume
    }

    // MARK: Volumes (any thread but the main loop's; the work runs on the main loop)

    /// What ``updateVolume(of:decide:completion:)`` did.
    package enum VolumeUpdate: Sendable, Hashable {
        /// The stream had `before`; `decide` kept it (returned `nil`).
        case kept(before: [UInt32])
        /// The stream had `before` and the server set `after`.
        case set(before: [UInt32], after: [UInt32])
        /// The stream is gone, has no settable volume, the server refused, or there is
        /// no connection.
        case failed
    }

    /// Reads a stream's volume and, if `decide` returns one, sets it, without waiting: the
    /// read and the set are queued in order on the one connection, after any earlier
    /// request, so `decide` sees the volume the earlier sets left (a compare-and-set; only
    /// a change by another client between the two can slip in). `decide` runs on the main
    /// loop; `completion` runs there too and must only hand the result over.
    package func updateVolume(of index: UInt32, decide: @escaping @Sendable ([UInt32]) -> [UInt32]?,
                      completion: @escaping @Sendable (VolumeUpdate) -> Void) {
        guard !stopped.load(ordering: .acquiring) else { return completion(.failed) }
        let issued = subscription.mainloop.withLock { issueUpdate(index, decide: decide, completion: completion) }
        if !issued { completion(.failed) }
    }

    /// Main loop (or its lock held).
    private func issueUpdate(_ index: UInt32, decide: @escaping @Sendable ([UInt32]) -> [UInt32]?,
                             completion: @escaping @Sendable (VolumeUpdate) -> Void) -> Bool {
        guard let ctx = subscription.connectedContext?.pointer else { return false }
        let box = Unmanaged.passRetained(VolumeBox(decide: decide, completion: completion)).toOpaque()
        let operation = pa_context_get_sink_input_info(ctx, index, { ctx, info, eol, box in
            let update = Unmanaged<VolumeBox>.fromOpaque(box!)
            let state = update.takeUnretainedValue()
            if eol != 0 {
                if !state.answered { state.completion(.failed) }
                update.release()
                return
            }
            guard let info, !state.answered else { return }
            state.answered = true
            let before = info.pointee.has_volume != 0 ? PlaybackStreamWatcher.channels(of: info.pointee.volume) : []
            guard !before.isEmpty, info.pointee.volume_writable != 0 else { return state.completion(.failed) }
            guard let after = state.decide(before) else { return state.completion(.kept(before: before)) }
            guard after.count == before.count else { return state.completion(.failed) }
            var volume = PlaybackStreamWatcher.cvolume(after)
            let done = Unmanaged.passRetained(SetBox { success in
                state.completion(success ? .set(before: before, after: after) : .failed)
            }).toOpaque()
            let operation = pa_context_set_sink_input_volume(ctx, info.pointee.index, &volume, { _, success, done in
                let box = Unmanaged<SetBox>.fromOpaque(done!)
                box.takeUnretainedValue().finish(success != 0)
                box.release()
            }, done)
            if let operation {
                pa_operation_unref(operation)
            } else {
                Unmanaged<SetBox>.fromOpaque(done).release()
                state.completion(.failed)
            }
        }, box)
        guard let operation else {
            Unmanaged<VolumeBox>.fromOpaque(box).release()
            return false
        }
        pa_operation_unref(operation)
        return true
    }
}

/// One ``PlaybackStreamWatcher/updateVolume(of:decide:completion:)`` in flight (main loop only).
private final class VolumeBox {
    let decide: @Sendable ([UInt32]) -> [UInt32]?
    let completion: @Sendable (PlaybackStreamWatcher.VolumeUpdate) -> Void
    var answered = false
    init(decide: @escaping @Sendable ([UInt32]) -> [UInt32]?, completion: @escaping @Sendable (PlaybackStreamWatcher.VolumeUpdate) -> Void) {
        self.decide = decide
        self.completion = completion
    }
}

/// The success callback of one volume set (main loop only).
private final class SetBox {
    let finish: (Bool) -> Void
    init(_ finish: @escaping (Bool) -> Void) { self.finish = finish }
}

/// The callback of one stream listing (libpulse calls it on the main loop, once per stream
/// and once at the end with `nil`).
private final class ListBox {
    let deliver: (UnsafePointer<pa_sink_input_info>?) -> Void
    init(_ deliver: @escaping (UnsafePointer<pa_sink_input_info>?) -> Void) { self.deliver = deliver }
}
