internal import CALSA
internal import CLibraryLoader
import Dispatch
import Platform

#if canImport(Glibc)
import Glibc
#endif

/// What one ALSA card tells through its control interface: its names and its jack
/// controls (`… Jack`, interface CARD, boolean: plugged or not).
struct ALSACard: Sendable, Hashable {
    struct Jack: Sendable, Hashable {
        /// The control's name (`Headphone Jack`).
        var name: String
        /// The control's index, when several have the same name (0 for the first).
        var index: Int = 0
        var plugged: Bool

        /// A name unique on the card.
        var id: String { index > 0 ? "\(name),\(index)" : name }
    }

    var index: Int
    /// The card id (`PCH`, `HDMI`, `Device`), as in `hw:CARD=PCH`.
    var id: String
    /// The card name (`HDA Intel PCH`).
    var name: String
    /// The driver (`HDA-Intel`, `USB-Audio`).
    var driver: String
    /// The output jacks only (inputs such as `Mic Jack` are left out).
    var jacks: [Jack]
}

/// The route logic without a sound server, a pure function of the cards' jack states:
/// - each card is an output device `hw:CARD=<id>` whose ports are its output jacks,
///   available when plugged (phantom jacks, `Speaker Phantom Jack`, always read plugged);
/// - a card with a headphone jack and no line-out or HDMI jack (a laptop's codec) also has
///   an implicit, always available speaker, since many codecs expose no speaker jack;
/// - the active port of a card is its best plugged port: headphones, then line out, then
///   HDMI, then speaker, then anything else; with nothing plugged, the first port (so the
///   route is empty: nothing to play to, as with an HDMI card and no monitor);
/// - a card with no output jacks at all (most USB devices) is one port-less output whose
///   type comes from the driver (`USB-Audio` → `.usb`) or the name (HDMI);
/// - the default is the first card (lowest index) whose route is not empty, else the first.
/// Channel counts are not in the controls: 2 is assumed.
enum ALSAJackRoutes {
    static let implicitSpeaker = "Speaker"

    static func snapshot(cards: [ALSACard], time: ContinuousClock.Instant) -> DeviceSnapshot {
        let sinks = cards.sorted { $0.index < $1.index }.map(sink)
        var snapshot = DeviceSnapshot(
            backend: sinks.isEmpty ? .none : .alsaJacks, defaultSink: sinks.first?.name, sinks: sinks, time: time)
        for sink in sinks {
            snapshot.defaultSink = sink.name
            if snapshot.resolved.key != nil { return snapshot }
        }
        snapshot.defaultSink = sinks.first?.name
        return snapshot
    }

    static func sink(_ card: ALSACard) -> SinkSnapshot {
        let name = "hw:CARD=" + card.id
        var ports: [PortSnapshot] = []
        for jack in card.jacks {
            guard let type = AudioPort.PortType(jackName: jack.name) else { continue }
            let base = jack.name.hasSuffix(" Jack") ? String(jack.name.dropLast(5)) : jack.name
            let label = base.hasSuffix(" Phantom") ? String(base.dropLast(8)) : base
            ports.append(PortSnapshot(
                name: jack.id, description: label.isEmpty ? type.humanName : label,
                availability: jack.plugged ? .yes : .no, type: type))
        }
        let types = Set(ports.map(\.type))
        if types.contains(.headphones) && !types.contains(.lineOut) && !types.contains(.hdmi)
            && !types.contains(.speaker)
        {
            ports.append(PortSnapshot(
                name: implicitSpeaker, description: AudioPort.PortType.speaker.humanName, availability: .unknown,
                type: .speaker))
        }
        let cardType: AudioPort.PortType =
            if card.driver.lowercased().contains("usb") {
                .usb
            } else if card.name.lowercased().contains("hdmi") || card.id.lowercased().contains("hdmi") {
                .hdmi
            } else {
                .unknown
            }
        let preference: [AudioPort.PortType] = [.headphones, .lineOut, .usb, .hdmi, .speaker, .bluetooth, .unknown]
        let active =
            preference.lazy.compactMap { type in
                ports.first { $0.type == type && $0.availability != .no }
            }.first ?? ports.first
        return SinkSnapshot(
            name: name, description: card.name.isEmpty ? card.id : card.name, channels: 2,
            type: card.driver.lowercased().contains("usb") ? .usb : cardType, ports: ports,
            activePort: active?.name)
    }
}

/// Watches the ALSA cards' jack controls on a thread of its own: subscribes to control
/// events (`snd_ctl_subscribe_events`) on every card, polls their descriptors with a
/// wake-up pipe, re-reads the jacks after each event, and re-enumerates the cards when a
/// control device comes or goes in /dev/snd (inotify: hot-plugged USB cards). Only where
/// /dev/snd cannot be watched does it re-enumerate on a clock (every 2 s). It reports a
/// snapshot whenever what it reads changes; with nothing happening its thread sleeps.
final class ALSAJackWatcher: Sendable {
    private let wake: (read: Int32, write: Int32)
    private let done = DispatchSemaphore(value: 0)
    private let onChange: @Sendable (DeviceSnapshot) -> Void

    static let rescanMilliseconds: Int32 = 2000

    /// A watcher that reports changes (after `start`) to `onChange`, on its own thread.
    init(onChange: @escaping @Sendable (DeviceSnapshot) -> Void) {
        self.onChange = onChange
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) != 0 { fds = [-1, -1] }
        wake = (fds[0], fds[1])
    }

    /// Reads the cards now and starts watching; returns what it read, for the caller to use
    /// as the current state.
    func start() -> DeviceSnapshot {
        let cards = Self.readCards()
        let first = ALSAJackRoutes.snapshot(cards: cards, time: .now)
        guard wake.read >= 0 else {
            done.signal()
            return first
        }
        let thread = Runner(self, cards)
        thread.start()
        return first
    }

    /// Stops the thread (waits up to 2 s for it).
    func stop() {
        guard wake.write >= 0 else { return }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        if done.wait(timeout: .now() + 2) == .success {
            Glibc.close(wake.read)
            Glibc.close(wake.write)
        }
    }

    /// The watcher's loop, on its own thread (`Runner`).
    fileprivate func run(initial: [ALSACard]) {
        defer { done.signal() }
        var last = initial
        var handles = Self.openAll()
        defer { for handle in handles { _ = alsa.snd_ctl_close(handle.ctl) } }
        let devices = Self.watchDeviceDirectory()
        defer { if devices >= 0 { Glibc.close(devices) } }
        while true {
            var fds = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: devices, events: Int16(POLLIN), revents: 0)]
            for handle in handles {
                let count = alsa.snd_ctl_poll_descriptors_count(handle.ctl)
                guard count > 0 else { continue }
                var more = [pollfd](repeating: pollfd(), count: Int(count))
                let filled = alsa.snd_ctl_poll_descriptors(handle.ctl, &more, UInt32(count))
                if filled > 0 { fds += more.prefix(Int(filled)) }
            }
            // poll() skips the negative descriptor of an unwatched /dev/snd.
            let rc = poll(&fds, nfds_t(fds.count), devices >= 0 ? -1 : Self.rescanMilliseconds)
            if rc < 0 && errno != EINTR { return }
            if fds[0].revents != 0 { return }
            if fds[1].revents != 0 { Self.drain(devices) }
            if rc == 0 || fds[1].revents != 0 {
                // Rescan: cards may have come or gone.
                let indices = Self.cardIndices()
                if indices != handles.map(\.index) {
                    for handle in handles { _ = alsa.snd_ctl_close(handle.ctl) }
                    handles = Self.openAll()
                }
            } else {
                for handle in handles { Self.drainEvents(handle.ctl) }
            }
            let cards = handles.compactMap { Self.read(card: $0.index, ctl: $0.ctl) }
            if cards != last {
                last = cards
                onChange(ALSAJackRoutes.snapshot(cards: cards, time: .now))
            }
        }
    }

    /// Hands the watcher to its thread. `@unchecked Sendable`: after `start`, only that
    /// thread uses `watcher` (and `initial`, which no one changes).
    private final class Runner: @unchecked Sendable {
        let watcher: ALSAJackWatcher
        let initial: [ALSACard]
        init(_ watcher: ALSAJackWatcher, _ initial: [ALSACard]) {
            self.watcher = watcher
            self.initial = initial
        }

        func start() {
            do {
                try startThreadIfPossible(name: "alsa-jacks") { self.watcher.run(initial: self.initial) }
            } catch {
                watcher.done.signal()
            }
        }
    }

    // MARK: ALSA control access

    private struct Handle {
        let index: Int
        let ctl: OpaquePointer
    }

    /// An inotify descriptor reporting control devices (`controlC*`) created or removed
    /// in /dev/snd; -1 when it cannot be had (no inotify, no /dev/snd).
    private static func watchDeviceDirectory() -> Int32 {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return -1 }
        guard inotify_add_watch(fd, "/dev/snd", UInt32(IN_CREATE | IN_DELETE)) >= 0 else {
            Glibc.close(fd)
            return -1
        }
        return fd
    }

    /// Reads what is pending on a non-blocking descriptor, to clear its readiness.
    private static func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Glibc.read(fd, &buffer, buffer.count) > 0 {}
    }

    static func cardIndices() -> [Int] {
        guard ALSALibrary.loaded != nil else { return [] }
        var indices: [Int] = []
        var card: Int32 = -1
        while alsa.snd_card_next(&card) == 0 && card >= 0 { indices.append(Int(card)) }
        return indices
    }

    private static func openAll() -> [Handle] {
        cardIndices().compactMap { index in
            var ctl: OpaquePointer?
            guard alsa.snd_ctl_open(&ctl, "hw:\(index)", SND_CTL_NONBLOCK) >= 0, let ctl else { return nil }
            _ = alsa.snd_ctl_subscribe_events(ctl, 1)
            return Handle(index: index, ctl: ctl)
        }
    }

    /// Reads every card once (opening and closing its control).
    static func readCards() -> [ALSACard] {
        cardIndices().compactMap { index in
            var ctl: OpaquePointer?
            guard alsa.snd_ctl_open(&ctl, "hw:\(index)", SND_CTL_NONBLOCK) >= 0, let ctl else { return nil }
            defer { _ = alsa.snd_ctl_close(ctl) }
            return read(card: index, ctl: ctl)
        }
    }

    private static func drainEvents(_ ctl: OpaquePointer) {
        var event: OpaquePointer?
        guard alsa.snd_ctl_event_malloc(&event) >= 0, let event else { return }
        defer { alsa.snd_ctl_event_free(event) }
        while alsa.snd_ctl_read(ctl, event) > 0 {}
    }

    /// The card's names and its output jacks' states.
    private static func read(card index: Int, ctl: OpaquePointer) -> ALSACard? {
        var info: OpaquePointer?
        guard alsa.snd_ctl_card_info_malloc(&info) >= 0, let info else { return nil }
        defer { alsa.snd_ctl_card_info_free(info) }
        guard alsa.snd_ctl_card_info(ctl, info) >= 0 else { return nil }
        var card = ALSACard(
            index: index,
            id: alsa.snd_ctl_card_info_get_id(info).map { String(cString: $0) } ?? String(index),
            name: alsa.snd_ctl_card_info_get_name(info).map { String(cString: $0) } ?? "",
            driver: alsa.snd_ctl_card_info_get_driver(info).map { String(cString: $0) } ?? "",
            jacks: [])

        var list: OpaquePointer?
        guard alsa.snd_ctl_elem_list_malloc(&list) >= 0, let list else { return card }
        defer { alsa.snd_ctl_elem_list_free(list) }
        guard alsa.snd_ctl_elem_list(ctl, list) >= 0 else { return card }
        let count = alsa.snd_ctl_elem_list_get_count(list)
        guard count > 0, alsa.snd_ctl_elem_list_alloc_space(list, count) >= 0 else { return card }
        defer { alsa.snd_ctl_elem_list_free_space(list) }
        guard alsa.snd_ctl_elem_list(ctl, list) >= 0 else { return card }

        var id: OpaquePointer?
        var value: OpaquePointer?
        guard alsa.snd_ctl_elem_id_malloc(&id) >= 0, let id else { return card }
        defer { alsa.snd_ctl_elem_id_free(id) }
        guard alsa.snd_ctl_elem_value_malloc(&value) >= 0, let value else { return card }
        defer { alsa.snd_ctl_elem_value_free(value) }

        for element in 0..<alsa.snd_ctl_elem_list_get_used(list) {
            guard alsa.snd_ctl_elem_list_get_interface(list, element) == SND_CTL_ELEM_IFACE_CARD,
                let cName = alsa.snd_ctl_elem_list_get_name(list, element)
            else { continue }
            let name = String(cString: cName)
            guard AudioPort.PortType(jackName: name) != nil else { continue }
            alsa.snd_ctl_elem_list_get_id(list, element, id)
            alsa.snd_ctl_elem_value_set_id(value, id)
            guard alsa.snd_ctl_elem_read(ctl, value) >= 0 else { continue }
            card.jacks.append(ALSACard.Jack(
                name: name, index: Int(alsa.snd_ctl_elem_list_get_index(list, element)),
                plugged: alsa.snd_ctl_elem_value_get_boolean(value, 0) != 0))
        }
        return card
    }
}
