public import AudioEngine
public import FoundationEssentials
import Dispatch
public import MPRIS
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Plays an ordered queue of files, advancing at the end of each (the `AVQueuePlayer`
/// analog).
///
/// The next item is prepared while the current one plays, so items follow each other
/// without a gap beyond the engine's event latency. ``connect(to:commands:)`` makes the
/// queue drive a ``NowPlayingInfoCenter`` and obey a ``RemoteCommandCenter``, so the
/// whole queue is controllable over MPRIS.
public final class QueuePlayer: Sendable {
    /// One entry of the queue.
    public struct Item: Sendable, Hashable, Identifiable {
        /// The item's id, unique within its queue (its MPRIS track id).
        public let id: UInt64
        /// The file (or stream) the item plays.
        public let url: URL
        /// The title tag, or the file's name when it has none.
        public let title: String
        /// The artist tag, if any.
        public let artist: String?
        /// The album tag, if any.
        public let album: String?
        /// The item's length in seconds (0 when unknown, as for an endless stream).
        public let duration: TimeInterval
        /// Every tag of the file (artists as a list, album artists, numbers, genre, composer,
        /// date, comment), for now-playing info.
        public let tags: AudioFileTags

        /// The same item under another id.
        func numbered(_ id: UInt64) -> Item {
            Item(id: id, url: url, title: title, artist: artist, album: album, duration: duration, tags: tags)
        }
    }

    /// What a queue reports, in order, on ``events``.
    public enum Event: Sendable, Hashable {
        /// The current item changed (nil when the queue ran out).
        case currentItemChanged(Item?)
        /// An item played to its end.
        case itemDidPlayToEnd(Item)
        /// An item failed; the queue moved on. The message names the file and the reason.
        case itemFailed(Item, String)
        /// An item stopped before its end (a truncated or damaged file) after playing up to
        /// there; the queue moved on. The message says where and why, for example
        /// `truncated at 2.4 s; played up to there`.
        case itemEndedEarly(Item, String)
        /// The audio session was interrupted while the queue played: it paused.
        case interruptionBegan
        /// The interruption that paused the queue ended. With `shouldResume` the queue plays
        /// again by itself unless ``QueuePlayer/automaticallyResumesAfterInterruption`` is
        /// false.
        case interruptionEnded(shouldResume: Bool)
        /// ``QueuePlayer/timeControlStatus`` changed (the `AVPlayer.timeControlStatus`
        /// observation).
        case timeControlStatusChanged(TimeControlStatus)
    }

    struct State {
        var items: [Item] = [] { didSet { trackList = nil } }
        var index: Int?
        var player: AudioPlayer?
        /// The items after the current one, opened ahead, each queued in the engine after
        /// the one before it (while the queue plays): the next one, and more while the ones
        /// opened fall short of the output's buffer (``QueuePlayer/preparationHorizon``).
        /// With a long buffer a short item is mixed to its end before it is heard; the item
        /// after it must already be queued behind it then, or it starts late, when that end
        /// is heard (0.1 s of silence on a 2 s buffer).
        var ahead: [(item: Item, player: AudioPlayer)] = []
        /// The next item's, prepared ahead: the first of ``ahead``.
        var next: (item: Item, player: AudioPlayer)? { ahead.first }
        var nextID: UInt64 = 1
        var volume: Float = 1
        var rate: Float = 1
        var repeatMode: RepeatMode = .off
        var shuffleMode: ShuffleMode = .off
        var metering = false
        var wantsToPlay = false
        /// How many interruptions the process's session had begun when ``play()`` was called
        /// (nil: no session then): an item opened after a later interruption began starts as
        /// a player playing then would have been left, paused until that interruption ends.
        var playIntent: UInt64?
        var nowPlaying: NowPlayingInfoCenter?
        /// Keeps the engine's `media.name` on that center's title (see `connect`).
        var titleFollower: ObservationToken?
        /// The cached cover art of items, by item id, as ``resolveArtwork(for:)`` finds it.
        var artwork: [UInt64: String] = [:] { didSet { trackList = nil } }
        /// ``QueuePlayer/trackListItems`` as last made, until the items or their artwork
        /// change: every change of the queue's state asks for it (``observeChanges(_:)``), and
        /// most (a `Next`, a pause) leave it as it was.
        var trackList: [NowPlayingInfo]?
        var lastError: AudioEngineError?
        /// The audio session paused the current item (an interruption): the queue still
        /// means to play, but is not playing.
        var suspended = false
        /// What happens when an item ends.
        var actionAtItemEnd: ActionAtItemEnd = .advance
        /// Whether players resume by themselves after an interruption.
        var resumesAfterInterruption = true
        /// The current item's decoder said its data stalls.
        var starved = false
        /// The current item ended and stayed current (``ActionAtItemEnd/pause`` or
        /// ``ActionAtItemEnd/none``): now playing shows its end, standing still.
        var atItemEnd = false
        /// The status last reported in ``Event/timeControlStatusChanged(_:)``.
        var reportedStatus: TimeControlStatus = .paused
        /// Descriptors that items' paths go through (`/proc/self/fd/N`, see ``LocalFile``),
        /// by item id; closed when the item leaves the queue.
        var heldDescriptors: [UInt64: Int32] = [:]
        /// How many times the current item changed: an opening that another move overtook
        /// (on another thread) lets its player go.
        var moves: UInt64 = 0
        /// The current item when a lazy move (``QueuePlayer/load(lazily:_:)``) left it to the
        /// opener: the item, its player if it was prepared as the next one, and the move.
        var pending: (item: Item, prepared: AudioPlayer?, move: UInt64)?
        /// Where the last remote move (MPRIS `GoTo`, `OpenUri`, `AddTrack` made current)
        /// came from: if the item it went to cannot be opened, the queue goes back there
        /// (``QueuePlayer/goBack(_:from:)``) instead of moving on past it.
        var returnPoint: ReturnPoint?
        /// Set by a remote `Stop` (``QueuePlayer/stopAtStart()``): nothing plays, the
        /// current item is back at its start, and now playing says stopped.
        var stopped = false

        /// Closes the descriptors of items no longer in the queue.
        mutating func releaseDescriptors() {
            guard !heldDescriptors.isEmpty else { return }
            let present = Set(items.map(\.id))
            for (id, fd) in heldDescriptors where !present.contains(id) {
                close(fd)
                heldDescriptors[id] = nil
            }
        }

        /// Forgets the items prepared ahead, unlinking each from the player before it first
        /// so that the engine never starts a player that is gone. Returns the players the
        /// engine has started already (on the end of the one before, before that end was
        /// heard): the caller stops them once the lock is let go (``QueuePlayer/stopStarted(_:)``),
        /// or they would play on, unknown to the queue.
        @discardableResult
        mutating func dropAhead() -> [AudioPlayer] {
            player?.cancelQueuedSuccessor()
            for link in ahead { link.player.cancelQueuedSuccessor() }
            defer { ahead.removeAll() }
            return startedAhead
        }

        /// The index of the item after those prepared ahead (around to the first with
        /// ``RepeatMode/all``, but never the current one again), or nil.
        var indexAfterAhead: Int? {
            guard let index, !items.isEmpty else { return nil }
            let at = index + ahead.count + 1
            if at < items.count { return at }
            guard repeatMode == .all else { return nil }
            let wrapped = at % items.count
            return wrapped == index ? nil : wrapped
        }

        /// The players prepared ahead that the engine has started (see ``dropAhead()``).
        var startedAhead: [AudioPlayer] { ahead.map(\.player).filter(\.isPlaying) }
    }

    /// Where a remote move came from (``State/returnPoint``).
    struct ReturnPoint {
        /// The item that was current before the move.
        let item: Item
        /// Its position then.
        let time: TimeInterval
        /// The move (``State/moves``) this is the way back from.
        let move: UInt64
        /// Whether the item the move went to leaves the queue if it fails (it was added by
        /// the same call: `OpenUri`, `AddTrack` made current).
        let discardsFailedItem: Bool
    }

    let state = Mutex(State())
    /// Who ``observeChanges(_:)`` tells.
    private let changeObservers = Observers<Void>()
    let engine: AudioEngine
    /// Opens the items that lazy moves (remote `Next` and `Previous`) went to.
    private let opener = QueueOpener()
    /// Held while an item a lazy move left is opened (``openPendingItem()``).
    private let opening = Mutex(())
    /// The queue's events, in order (one stream per queue: iterate it from one task).
    public let events: AsyncStream<Event>
    let continuation: AsyncStream<Event>.Continuation

    /// Makes a queue; every file is opened once to check it and read its tags.
    ///
    /// `names`, when given, has one entry per URL: the name to title an untagged item
    /// with instead of the URL's file name (for a file opened through another path, such
    /// as `/proc/self/fd/N`).
    ///
    /// - Throws: the first file's ``AudioFileError`` (missing, unreadable, unsupported…).
    public convenience init(urls: [URL], names: [String]? = nil) throws {
        try self.init(urls: urls, names: names, engine: .shared)
    }

    /// Makes a queue that plays on `engine` (the package's tools and tests); apps play on
    /// the shared engine.
    package init(urls: [URL], names: [String]?, engine: AudioEngine) throws {
        precondition(names == nil || names?.count == urls.count, "one name per URL")
        self.engine = engine
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
        opener.body = { [weak self] in self?.openPendingItem() }
        let items = try urls.enumerated().map { try QueuePlayer.inspect($1, name: names?[$0]) }
        state.withLock { s in
            for var item in items {
                item = item.numbered(s.nextID)
                s.nextID += 1
                s.items.append(item)
            }
            s.index = s.items.isEmpty ? nil : 0
        }
        resolveArtwork(for: self.items)
    }

    deinit {
        continuation.finish()
        for fd in state.withLock({ $0.heldDescriptors.values }) { close(fd) }
    }

    static func inspect(_ url: URL, name: String? = nil) throws -> Item {
        if NetworkStream.handles(url.absoluteString) { return networkItem(url) }
        let file = try AudioFile(contentsOf: url.path)
        let fallback = name.map { URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent }
            ?? url.deletingPathExtension().lastPathComponent
        let title = file.tags.title.flatMap { $0.isEmpty ? nil : $0 } ?? fallback
        return Item(id: 0, url: url, title: title, artist: file.tags.artist, album: file.tags.album,
                    duration: file.format.duration ?? 0, tags: file.tags)
    }

    /// Where cover art is written for now-playing info.
    static let artCache = CoverArtCache()
    /// Finds and caches cover art, one file after another, away from the threads that call
    /// the queue (the bus thread among them): it reads the audio file and writes an image.
    private static let artQueue = DispatchQueue(label: "earshot.queue-player.art", qos: .utility)

    /// Finds each item's cover art (embedded, or an image beside the file), writes it to
    /// ``artCache`` and publishes it, in the background: at once for the current item, and
    /// once at the end for the others (a long queue's files are not each a signal).
    private func resolveArtwork(for items: [Item]) {
        guard !items.isEmpty else { return }
        QueuePlayer.artQueue.async { [weak self] in
            var unpublished = false
            for item in items where item.url.isFileURL {
                guard let self else { return }
                // A file reached through a held descriptor (LocalFile) is not searched: the
                // descriptor closes when the item leaves, and its number may then name
                // another file; nor is there a folder to find an image beside it in.
                // (Held-ness is set at insertion, before this runs: an item held and since
                // removed is no longer in the queue, and skipped too.)
                let searchable = self.state.withLock { s in
                    s.heldDescriptors[item.id] == nil && s.items.contains { $0.id == item.id }
                }
                guard searchable else { continue }
                guard let art = CoverArt.find(forAudioFileAt: item.url.path),
                      let path = try? QueuePlayer.artCache.store(art) else { continue }
                let isCurrent = self.state.withLock { s -> Bool in
                    guard s.items.contains(where: { $0.id == item.id }) else { return false }
                    s.artwork[item.id] = path
                    return s.index.map { s.items[$0].id == item.id } ?? false
                }
                if isCurrent { self.publish() }
                unpublished = !isCurrent
            }
            if unpublished { self?.publish() }
        }
    }

    // MARK: Queue

    /// The items in play order.
    public var items: [Item] { state.withLock { $0.items } }

    /// The item loaded now (the `AVQueuePlayer.currentItem` analog); nil when the queue ran
    /// out or is empty.
    public var currentItem: Item? {
        state.withLock { s in s.index.map { s.items[$0] } }
    }

    /// The place of ``currentItem`` in ``items``.
    public var currentIndex: Int? { state.withLock { $0.index } }

    /// The most items a queue holds (``insert(_:after:atStart:)`` past it throws).
    public static let maximumItemCount = 10_000

    /// Why ``insert(_:after:atStart:)`` refused an item.
    public struct FullError: Error, Sendable, CustomStringConvertible {
        /// The file that was refused.
        public let url: URL
        /// A sentence naming the file and the limit.
        public var description: String {
            "cannot add \(url.path): the queue holds \(QueuePlayer.maximumItemCount) items, its limit"
        }
    }

    /// Inserts a file after `item` (or at the end, or at the start with `atStart`).
    ///
    /// - Throws: ``AudioFileError`` for a file that cannot be opened; ``FullError`` when
    ///   the queue holds ``maximumItemCount`` items.
    public func insert(_ url: URL, after item: Item? = nil, atStart: Bool = false) throws -> Item {
        try insert(url, name: nil, holding: nil, after: item, atStart: atStart)
    }

    /// ``insert(_:after:atStart:)`` for a file reached through `descriptor` (its path is
    /// `/proc/self/fd/N`, titled by `name`): the queue owns the descriptor from here on, and
    /// closes it when the item leaves the queue (or at once if it is refused).
    func insert(_ url: URL, name: String?, holding descriptor: Int32?, after item: Item?, atStart: Bool) throws -> Item {
        let inspected: Item
        do {
            inspected = try QueuePlayer.inspect(url, name: name)
        } catch {
            if let descriptor { close(descriptor) }
            throw error
        }
        let inserted = try change { s throws(FullError) in
            guard s.items.count < QueuePlayer.maximumItemCount else {
                if let descriptor { close(descriptor) }
                throw FullError(url: url)
            }
            let new = inspected.numbered(s.nextID)
            if let descriptor { s.heldDescriptors[new.id] = descriptor }
            s.nextID += 1
            if let item, let at = s.items.firstIndex(of: item) {
                s.items.insert(new, at: at + 1)
                if let index = s.index, index > at { s.index = index + 1 }
            } else if atStart {
                s.items.insert(new, at: 0)
                if let index = s.index { s.index = index + 1 }
            } else {
                s.items.append(new)
            }
            if s.index == nil { s.index = s.items.count - 1 }
            return (item: new, dropped: s.dropAhead())
        }
        stopStarted(inserted.dropped)
        prepareNext()
        resolveArtwork(for: [inserted.item])
        return inserted.item
    }

    /// Removes an item; removing the current one moves on to the item that takes its
    /// place (the new last item when it was the last). Removing the only item empties the
    /// queue: it stops, with no current item. An item no longer in the queue is ignored.
    public func remove(_ item: Item) {
        change { s -> (wasCurrent: Bool, started: [AudioPlayer]) in
            guard let at = s.items.firstIndex(of: item) else { return (false, []) }
            s.items.remove(at: at)
            s.artwork[item.id] = nil
            s.releaseDescriptors()
            let started = s.dropAhead()
            guard let index = s.index, at <= index else { return (false, started) }
            // Keep the index valid until `load` replaces it (readers index with it).
            s.index = at < index ? index - 1 : s.items.isEmpty ? nil : min(index, s.items.count - 1)
            if s.items.isEmpty { s.wantsToPlay = false }
            return (at == index, started)
        } then: { removed in
            stopStarted(removed.started)
            if removed.wasCurrent { load { s in s.index.map { .item(at: $0) } ?? .ranOut } }
        }
    }

    /// Stops and empties the queue.
    public func removeAllItems() {
        // An item left to open is not opened only to be stopped.
        state.withLock { s in
            if s.pending != nil { (s.pending, s.moves) = (nil, s.moves &+ 1) }
        }
        stop()
        change { s in
            s.items.removeAll()
            s.artwork.removeAll()
            s.releaseDescriptors()
            s.index = nil
            s.dropAhead()
        }
    }

    // MARK: Transport

    /// Plays the current item (loading it when needed), then the next ones, gaplessly.
    public func play() {
        play(askedAfter: engine.followedSession?.interruptionsBegun)
    }

    /// Plays, for a play the app decided on when its session had begun `interruptions`
    /// interruptions (``AudioSession/interruptionsBegun``): if one has begun since and holds
    /// the session, the queue waits for its end instead of taking the sound back, as a
    /// queue playing when it began would. `earshot play` reads the count before its
    /// activation: a user's play on another app that interrupts it between the activation
    /// and this call (a media key pressed as it starts) must not be undone by its start.
    package func play(askedAfter intent: UInt64?) {
        openPendingItem()
        let player = state.withLock { s -> AudioPlayer? in
            s.wantsToPlay = true
            s.playIntent = intent
            s.suspended = false
            s.atItemEnd = false
            s.stopped = false
            return s.player
        }
        // The player's start (or the opening of the item, or running out) publishes.
        if let player {
            playCurrent(player)
        } else {
            load { s in s.index.map { .item(at: $0) } ?? .ranOut }
        }
    }

    /// Plays the current item's player. The next item, prepared while the queue was paused
    /// (a move then, or a pause in the current item's last buffer), is queued after it
    /// first, so that it follows without a gap: a long buffer's first write can mix the
    /// current item's end at once.
    private func playCurrent(_ player: AudioPlayer) {
        let ahead = state.withLock { s in s.player === player ? s.ahead.map(\.player) : [] }
        // Each after the one before it, from the last: none starts before the one after it is linked.
        var queued = false
        for (offset, next) in ahead.enumerated().reversed() where !next.isPlaying {
            let linked = next.play(after: offset == 0 ? player : ahead[offset - 1])
            if offset == 0 { queued = linked }
        }
        let started = player.play()
        if !started, queued { player.cancelQueuedSuccessor() }
        state.withLock { $0.lastError = started ? nil : player.lastError }
        // The player changed nothing: the queue's own state did (it means to play).
        if !started { publish() }
    }

    /// Pauses where it is; ``play()`` resumes there.
    ///
    /// Just after an item's last frame is mixed, the engine has started the next item
    /// (gaplessly) while the queue, which moves on when that last frame is heard, still has
    /// the ended item as its current one (for up to a long buffer's length, see
    /// `AudioEngine.Configuration.musicBufferDuration`). The pause is then for what is
    /// heard: the current item pauses there, its end taken back, and the next item goes
    /// back to its start, to follow it again without a gap on ``play()``.
    public func pause() {
        // The queue's state is published before the player pauses, which publishes its own:
        // a publication after it could read the pause call's estimate of the position and
        // write it after the settled one, which the event thread publishes meanwhile.
        let (player, started) = change { s -> (AudioPlayer?, [AudioPlayer]) in
            s.wantsToPlay = false
            return (s.player, s.startedAhead)
        }
        let endingUnheard = player?.isEndingUnheard == true
        player?.pause()
        // After the current one, whose end it takes back first (else the stop's flush
        // would have the end count as heard): the items after it started meanwhile.
        for next in started {
            if endingUnheard { sendBack(next) } else { next.pause() }
        }
    }

    /// Puts the next item's player, which the engine started on the current item's end
    /// (mixed, then taken back), back to its start, paused, its buffers kept: it follows
    /// the current item's new end without a gap once queued after it again. (A stop would
    /// let its buffers go, and the refill could miss a near end.)
    private func sendBack(_ next: AudioPlayer) {
        next.pause()
        next.currentTime = 0
    }

    /// Stops the current item and releases its place in the engine (``AudioPlayer/stop()``);
    /// its position is kept, so ``play()`` continues from there.
    public func stop() {
        openPendingItem()
        let (player, started) = state.withLock { s -> (AudioPlayer?, [AudioPlayer]) in
            s.wantsToPlay = false
            return (s.player, s.startedAhead)
        }
        player?.stop()
        // Items the engine started on the current one's end (see ``pause()``).
        for next in started { next.stop() }
    }

    /// Stops as MPRIS `Stop` means (the queue's remote stop command): nothing plays, the
    /// current item goes back to its start, and now playing says stopped, at 0, until
    /// ``play()`` plays the item from its start. (``stop()`` keeps the position, as
    /// `AVAudioPlayer.stop()` does.)
    func stopAtStart() {
        openPendingItem()
        let (player, started) = state.withLock { s -> (AudioPlayer?, [AudioPlayer]) in
            (s.wantsToPlay, s.stopped, s.atItemEnd) = (false, true, false)
            return (s.player, s.startedAhead)
        }
        player?.stop()
        for next in started { sendBack(next) }
        player?.currentTime = 0
    }

    /// Whether the current item is playing now.
    public var isPlaying: Bool {
        openPendingItem()
        return state.withLock { $0.player }?.isPlaying ?? false
    }

    /// Why the last attempt to play failed (the device could not be opened), if it did.
    public var lastError: AudioEngineError? { state.withLock { $0.lastError } }

    /// Whether ``averagePower()`` measures what plays. Off by default, as with
    /// `AVAudioPlayer.isMeteringEnabled`: the mix then measures nothing. Applies to the
    /// current item and to every item after it.
    public var isMeteringEnabled: Bool {
        get { state.withLock { $0.metering } }
        set { applyToPlayers({ $0.metering = newValue }) { $0.isMeteringEnabled = newValue } }
    }

    /// The current item's average power per channel in dBFS (−160 when silent, or while
    /// ``isMeteringEnabled`` is off), for level meters.
    public func averagePower() -> (left: Float, right: Float) {
        guard let player = state.withLock({ $0.player }) else { return (-160, -160) }
        player.updateMeters()
        return (player.averagePower(forChannel: 0), player.averagePower(forChannel: 1))
    }

    /// Moves to the next item (wrapping when the repeat mode is `.all`).
    @discardableResult
    public func advanceToNextItem() -> Bool { step(by: 1, lazily: false) }

    /// Moves to the previous item (wrapping when the repeat mode is `.all`).
    @discardableResult
    public func goToPreviousItem() -> Bool { step(by: -1, lazily: false) }

    /// Moves `delta` items on; `lazily` leaves the opening of the item to the opener (see
    /// ``load(lazily:_:)``).
    private func step(by delta: Int, lazily: Bool) -> Bool {
        load(lazily: lazily) { s in
            guard let index = s.index, !s.items.isEmpty else { return .stay }
            let next = index + delta
            if s.items.indices.contains(next) { return .item(at: next) }
            return s.repeatMode == .all ? .item(at: (next % s.items.count + s.items.count) % s.items.count) : .stay
        }
    }

    /// The position in the current item; setting it seeks (after an item's end under
    /// ``ActionAtItemEnd/none``, the queue, still meaning to play, plays from there).
    public var currentTime: TimeInterval {
        get { state.withLock { $0.player }?.currentTime ?? 0 }
        set {
            openPendingItem()
            let (player, resume) = state.withLock { s -> (AudioPlayer?, Bool) in
                // A seek after a stop leaves the queue paused there.
                defer { (s.atItemEnd, s.stopped) = (false, false) }
                return (s.player, s.atItemEnd && s.wantsToPlay && !s.suspended)
            }
            if replayEndingItem(from: newValue, changing: { _ in }) { return }
            player?.currentTime = newValue
            if resume { _ = player?.play() }
        }
    }

    /// In the current item's last buffer (its end mixed, not yet heard) the engine has
    /// started the next item on that end. A seek there, or a rate change (which restarts an
    /// item from what is heard), plays the current item on from `time` and the next item
    /// after its new end: the current item is paused, which takes its end back (else the
    /// next item's pause could have that end count as heard), the next item sent back to
    /// its start, `change` applied to both players, the current item sought and played
    /// again with the next queued after it. Returns false, doing nothing, outside that moment.
    private func replayEndingItem(from time: TimeInterval?, changing change: (AudioPlayer) -> Void) -> Bool {
        let (player, ahead) = state.withLock { s in (s.player, s.ahead.map(\.player)) }
        guard let player, player.isEndingUnheard else { return false }
        // One change to the engine: it restarts once, from where all of it leaves the
        // items, as soon as both are primed again (see `AudioEngine.holdingChanges`).
        engine.holdingChanges {
            player.pause()
            // Where the pause leaves the listener, for a change that goes on from there.
            let paused = player.currentTime
            for next in ahead where next.isPlaying { sendBack(next) }
            change(player)
            for next in ahead { change(next) }
            player.currentTime = time ?? paused
            if state.withLock({ $0.wantsToPlay && !$0.suspended }) { playCurrent(player) }
        }
        return true
    }

    /// Changes the queue's state, applies the change to the current item's player and to
    /// those prepared ahead (outside the lock), and publishes.
    func applyToPlayers(_ body: (inout State) -> Void, _ apply: (AudioPlayer) -> Void) {
        change { s -> [AudioPlayer] in
            body(&s)
            return [s.player].compactMap { $0 } + s.ahead.map(\.player)
        } then: { players in
            for player in players { apply(player) }
        }
    }

    /// The queue's volume (1 is full scale), applied to every item.
    public var volume: Float {
        get { state.withLock { $0.volume } }
        set { applyToPlayers({ $0.volume = newValue }) { $0.volume = newValue } }
    }

    /// 0.5…2 with the pitch kept.
    public var rate: Float {
        get { state.withLock { $0.rate } }
        set {
            let rate = max(0.5, min(2, newValue))
            // In the current item's last buffer: it plays on from what is heard at the new
            // rate, and the next item after it (see `replayEndingItem`).
            state.withLock { $0.rate = rate }
            if replayEndingItem(from: nil, changing: { $0.rate = rate }) { return }
            applyToPlayers({ $0.rate = rate }) { $0.rate = rate }
        }
    }

    /// How the queue repeats: `.one` loops the current item, `.all` goes back to the first
    /// item after the last.
    public var repeatMode: RepeatMode {
        get { state.withLock { $0.repeatMode } }
        set {
            var started: [AudioPlayer] = []
            applyToPlayers({ s in
                s.repeatMode = newValue
                started = s.dropAhead()
            }) { $0.numberOfLoops = newValue == .one ? -1 : 0 }
            stopStarted(started)
            prepareNext()
        }
    }

    /// Whether the queue is shuffled; turning it on shuffles the items after the current one.
    public var shuffleMode: ShuffleMode {
        get { state.withLock { $0.shuffleMode } }
        set {
            let started = change { s -> [AudioPlayer] in
                s.shuffleMode = newValue
                guard newValue == .items, let index = s.index else { return [] }
                // Shuffle what comes after the current item.
                var rest = Array(s.items[(index + 1)...])
                rest.shuffle()
                s.items.replaceSubrange((index + 1)..., with: rest)
                return s.dropAhead()
            }
            stopStarted(started)
            prepareNext()
        }
    }

    /// Makes the item with `id` current; false when no item has it (any more).
    ///
    /// A remote move: if the item cannot be opened, the queue goes back to the item current
    /// before, where it was (dropping the item when `discardsOnFailure`).
    func loadItem(id: UInt64, discardsOnFailure: Bool = false) -> Bool {
        let time = currentTime
        return load(returning: (time, discardsOnFailure)) { s in
            s.items.firstIndex { $0.id == id }.map { .item(at: $0) } ?? .stay
        }
    }

    /// Where ``load(_:)`` moves the queue.
    private enum Destination {
        /// The item at this index of `items`.
        case item(at: Int)
        /// Nowhere: the queue ran out (or is empty) and stops.
        case ranOut
        /// Nowhere new: the current item stays (the target did not exist).
        case stay
    }

    /// Loads the item `choose` picks, playing it if the queue plays. `choose` runs under the
    /// queue's lock, so that the index it returns is valid for the items it saw: every
    /// caller that finds an item (by id, by step, by removal) finds it there, never from a
    /// copy of the items that another thread may have edited since. An index outside the
    /// queue is taken as ``Destination/stay``.
    ///
    /// `lazily` (remote commands' `Next` and `Previous`) moves the queue at once (index,
    /// events, now playing) and leaves the opening of the item to the queue's opener thread
    /// (``QueueOpener``): a move that follows before it started supersedes it, so a burst of
    /// 50 `Next` opens and decodes a few items, not 50 (each with the one after it). Whatever
    /// needs the item's player opens it first (``openPendingItem()``).
    ///
    /// - Returns: whether it moved (false for ``Destination/stay``).
    ///
    /// `returning` (remote moves to an item of the client's choice) keeps the way back: the
    /// item current before the move, at the position given, which ``open(_:prepared:move:at:)``
    /// goes back to if the chosen item cannot be opened. `startingAt` is where the chosen
    /// item starts.
    @discardableResult
    private func load(
        lazily: Bool = false, returning: (time: TimeInterval, discardsFailedItem: Bool)? = nil,
        startingAt start: TimeInterval = 0, _ choose: (State) -> Destination
    ) -> Bool {
        var started: [AudioPlayer] = []
        let chosen = state.withLock { s -> (old: AudioPlayer?, item: Item?, prepared: AudioPlayer?, move: UInt64)? in
            let index: Int?
            switch choose(s) {
            case .item(let at) where s.items.indices.contains(at): index = at
            case .item, .stay: return nil
            case .ranOut: index = nil
            }
            // Cancel the queued successor before the current player is let go.
            s.player?.cancelQueuedSuccessor()
            let old = s.player
            let previous = s.index.map { s.items[$0] }
            s.index = index
            let item = index.map { s.items[$0] }
            var prepared: AudioPlayer?
            if let next = s.next, next.item == item {
                // The items after it stay ahead, already queued behind it.
                prepared = next.player
                s.ahead.removeFirst()
            } else {
                started = s.dropAhead()
            }
            s.player = nil
            s.starved = false
            s.atItemEnd = false
            s.stopped = false
            if item == nil { s.wantsToPlay = false }
            s.moves &+= 1
            s.pending = nil
            s.returnPoint = nil
            if let returning, let previous, previous != item {
                s.returnPoint = ReturnPoint(item: previous, time: returning.time, move: s.moves,
                                            discardsFailedItem: returning.discardsFailedItem)
            }
            if lazily, let item { s.pending = (item, prepared, s.moves) }
            return (old, item, prepared, s.moves)
        }
        guard let (old, item, prepared, move) = chosen else { return false }
        old?.stop()
        stopStarted(started)
        continuation.yield(.currentItemChanged(item))
        // The opening publishes; a move to no item, or one left to the opener, at once.
        guard let item, !lazily else {
            publish()
            if item != nil { opener.request() }
            return true
        }
        open(item, prepared: prepared, move: move, at: start)
        return true
    }

    /// Opens the item a lazy move left to open, if one is waiting (on the opener thread,
    /// or on the thread of a call that needs the item's player).
    /// One opening at a time: a call that needs the player waits for the opening under way.
    /// The item stays pending until its player is the current one (or its opening failed), so
    /// that ``timeControlStatus`` never reads paused in between: a burst of Next read
    /// `.paused` once, between the opener taking the item and installing its player.
    func openPendingItem() {
        opening.withLock { _ in
            guard let (item, prepared, move) = state.withLock({ $0.pending }) else { return }
            open(item, prepared: prepared, move: move)
        }
    }

    /// Makes `item` (moved to by move number `move`) the current item's player, and plays
    /// or prepares it as the queue does, unless another move came in the meantime: then the
    /// player is let go unplayed (or stopped, if the move came while it was starting).
    ///
    /// An item that cannot be opened is reported (``Event/itemFailed(_:_:)``) and passed
    /// over; after a remote move to it, the queue goes back to where the move came from.
    private func open(_ item: Item, prepared: AudioPlayer?, move: UInt64, at start: TimeInterval = 0) {
        let player: AudioPlayer
        do {
            player = try prepared ?? AudioPlayer(contentsOf: item.url, engine: engine)
        } catch {
            let failed = state.withLock { s -> ReturnPoint?? in
                if s.pending?.move == move { s.pending = nil }
                guard s.moves == move else { return nil }
                defer { s.returnPoint = nil }
                return .some(s.returnPoint?.move == move ? s.returnPoint : nil)
            }
            guard let failed else { return }
            continuation.yield(.itemFailed(item, "\(error)"))
            if let back = failed {
                goBack(back, from: item)
            } else {
                skip(failed: item)
            }
            return
        }
        configure(player)
        if start > 0 { player.currentTime = start }
        player.pausesWhenDeviceGoesAway.store(true, ordering: .relaxed)
        player.automaticallyResumesAfterInterruption = automaticallyResumesAfterInterruption
        player.changeObserver.withLock { $0 = { [weak self, weak player] change in self?.playerChanged(change, of: player) } }
        // A stream's ICY title is the player's state too (see `NowPlayingInfo.describe`).
        player.stream?.onTitleChange { [weak self, weak player] _ in self?.playerChanged(.state, of: player) }
        watch(player, item: item)
        let play = state.withLock { s -> (Bool, UInt64?)? in
            guard s.moves == move else { return nil }
            s.player = player
            if s.pending?.move == move { s.pending = nil }
            return (s.wantsToPlay, s.playIntent)
        }
        guard let (play, intent) = play else { return }
        if play {
            let started = player.play(askedAfter: intent)
            state.withLock { $0.lastError = started ? nil : player.lastError }
        } else {
            player.prepareToPlay()
        }
        // A move between taking the player on and starting it let go of it (and stopped it,
        // perhaps before it started).
        guard state.withLock({ $0.moves == move }) else {
            player.stop()
            return
        }
        prepareNext()
        publish()
    }

    /// Goes back to where a remote move to `failed`, which could not be opened, came from:
    /// the item current before it, at the position it had, playing if the queue plays. The
    /// failed item leaves the queue when the same call added it. A client's bad URI never
    /// costs the listener what they were hearing.
    private func goBack(_ back: ReturnPoint, from failed: Item) {
        let returned = load(startingAt: back.time) { s in
            s.items.firstIndex(of: back.item).map { .item(at: $0) } ?? .stay
        }
        // The item it came from left the queue meanwhile: on past the failed one, as a
        // queue does.
        if !returned { skip(failed: failed) }
        if back.discardsFailedItem { remove(failed) }
    }

    private func skip(failed item: Item) {
        load { s in
            guard let at = s.items.firstIndex(of: item), at + 1 < s.items.count else { return .ranOut }
            return .item(at: at + 1)
        }
    }

    /// Stops the players prepared ahead that the engine had started before the queue let
    /// them go (see ``State/dropAhead()``).
    func stopStarted(_ players: [AudioPlayer]) {
        for player in players { player.stop() }
    }

    /// Gives `player` the queue's volume, rate, repeat and metering. The next item's player
    /// gets them as it is prepared and again as it becomes current, when they are already
    /// its own: started gaplessly on a long buffer, it must not be changed then (a rate
    /// change would restart it from what is heard, and its start be heard twice).
    private func configure(_ player: AudioPlayer) {
        let (volume, rate, loops, metering) = state.withLock { s in (s.volume, s.rate, s.repeatMode == .one ? -1 : 0, s.metering) }
        player.volume = volume
        player.enableRate = true
        player.rate = rate
        player.numberOfLoops = loops
        player.isMeteringEnabled = metering
    }

    /// Opens the next item ahead of time (for ``actionAtItemEnd``'s setter).
    func prepareNextItem() { prepareNext() }

    /// Opens the next item ahead of time so that it starts at once (not while the current
    /// item waits to be opened: its opening prepares the next one), and the items after it
    /// while those opened ahead fall short of ``preparationHorizon``: each is queued in the
    /// engine after the one before it, so that a short item's end, mixed before it is heard,
    /// already has its follower.
    private func prepareNext() {
        let horizon = preparationHorizon
        while true {
            let chosen = state.withLock { s -> (item: Item, move: UInt64)? in
                guard s.pending == nil, s.repeatMode != .one, s.actionAtItemEnd == .advance,
                      s.ahead.count < s.items.count - 1, let at = s.indexAfterAhead else { return nil }
                // Enough ahead: an item of unknown length counts as long enough.
                let covered = s.ahead.reduce(0.0) { $0 + ($1.item.duration > 0 ? $1.item.duration : .infinity) }
                guard s.ahead.isEmpty || covered < horizon else { return nil }
                return (s.items[at], s.moves)
            }
            // A stream is opened when it is reached, not ahead (it would hold a connection open).
            guard let (candidate, move) = chosen, !NetworkStream.handles(candidate.url.absoluteString),
                  let player = try? AudioPlayer(contentsOf: candidate.url, engine: engine) else { return }
            player.prepareToPlay()
            configure(player)
            // Kept only if the queue is where it was (another thread may have moved it, or
            // prepared this item, in the meantime).
            let predecessor = state.withLock { s -> AudioPlayer?? in
                guard s.moves == move, s.indexAfterAhead.map({ s.items[$0] }) == candidate else { return nil }
                let before = s.ahead.last?.player ?? s.player
                s.ahead.append((candidate, player))
                return .some(s.wantsToPlay ? before : nil)
            }
            guard let predecessor else { return }
            // Gapless: the engine starts it on the frame where the one before it ends. (While
            // the queue is paused, ``playCurrent(_:)`` queues them all as it plays.)
            if let predecessor { _ = player.play(after: predecessor) }
        }
    }

    /// How far ahead (seconds of the items after the current one) the queue opens items:
    /// the output's buffer, which the mix runs ahead of what is heard, and a second to
    /// open the next one in.
    var preparationHorizon: TimeInterval {
        max(engine.outputLatency, engine.configuration.musicBufferDuration) + 1
    }

    private func watch(_ player: AudioPlayer, item: Item) {
        let handler = FinishHandler { [weak self] successfully, decodeError in
            guard let self else { return }
            let isCurrent = self.state.withLock { $0.player === player }
            guard isCurrent else { return }
            if successfully {
                self.continuation.yield(.itemDidPlayToEnd(item))
            } else {
                self.continuation.yield(.itemEndedEarly(item, QueuePlayer.endedEarly(decodeError, at: player.currentTime)))
            }
            let action = self.actionAtItemEnd
            guard action != .advance else {
                return self.offTheEventThreadIfStreaming { if !self.advanceToNextItem() { self.load { _ in .ranOut } } }
            }
            self.change { s in
                s.atItemEnd = true
                if action == .pause { s.wantsToPlay = false }
            }
        }
        player.delegate = handler
        finishHandlers.withLock { $0[ObjectIdentifier(player)] = handler }
    }

    private let finishHandlers = Mutex<[ObjectIdentifier: FinishHandler]>([:])

    // MARK: Now playing and remote commands

    /// Drives `nowPlaying` from the queue and makes `commands` control it.
    ///
    /// A remote `Next` or `Previous` moves the queue at once (``currentItem``, ``events``,
    /// now playing) and opens the item on a thread of the queue's: a burst of them opens the
    /// item it ends on, not each one it passes. Whatever needs the item's player
    /// (``isPlaying``, ``play()``, ``stop()``, setting ``currentTime``) opens it first.
    public func connect(to nowPlaying: NowPlayingInfoCenter, commands: RemoteCommandCenter) {
        let follower = engine.followTitle(of: nowPlaying)
        // A remote Stop is MPRIS's: back to the item's start, Stopped (see `stopAtStart`).
        commands.addTransportTargets(for: self, stop: { $0.stopAtStart() })
        // Remote `Next` and `Previous` move at once and open the item lazily: a burst of them
        // (a held media key, a client's loop) opens a few items, not each one it passes.
        commands.nextTrackCommand.addTarget { [weak self] _ in
            (self?.step(by: 1, lazily: true) ?? false) ? .success : .noSuchContent
        }
        commands.previousTrackCommand.addTarget { [weak self] _ in
            (self?.step(by: -1, lazily: true) ?? false) ? .success : .noSuchContent
        }
        commands.seekCommand.addTarget { [weak self] event in
            guard let self else { return .commandFailed }
            self.currentTime = self.currentTime + event.offset
            return .success
        }
        commands.changePlaybackPositionCommand.addTarget { [weak self] event in
            self?.currentTime = event.positionTime
            return .success
        }
        commands.changePlaybackRateCommand.supportedPlaybackRates = [0.5, 0.75, 1, 1.25, 1.5, 2]
        commands.changePlaybackRateCommand.addTarget { [weak self] event in
            self?.rate = Float(event.playbackRate)
            return .success
        }
        commands.changeRepeatModeCommand.addTarget { [weak self] event in
            self?.repeatMode = event.repeatMode
            return .success
        }
        commands.changeShuffleModeCommand.addTarget { [weak self] event in
            self?.shuffleMode = event.shuffleMode
            return .success
        }
        commands.openURICommand.addTarget { [weak self] event in
            guard let self else { return .commandFailed }
            // Opening a file plays it next, now.
            return self.addTrack(uri: event.uri, after: self.currentItem.map { "\($0.id)" }, setAsCurrent: true)
        }
        commands.changeVolumeCommand.addTarget { [weak self] event in
            self?.volume = Float(min(1, event.volume))
            return .success
        }
        change { s in (s.nowPlaying, s.titleFollower) = (nowPlaying, follower) }
    }

    /// The current item's player changed (a play, pause, seek, rate, its start heard, each
    /// wrap, where a pause settled), the session paused, resumed or released it, or its data
    /// stalled or flowed again: the queue's state follows, and now playing with it. A player
    /// the queue has let go (or not yet taken on) changes nothing.
    private func playerChanged(_ change: AudioPlayer.Change, of player: AudioPlayer?) {
        let current = state.withLock { s -> Bool in
            guard let player, s.player === player else { return false }
            switch change {
            case .paused(.interrupted): s.suspended = true
            case .paused(.deviceLost), .stayedPaused: (s.suspended, s.wantsToPlay) = (false, false)
            case .resumed: s.suspended = false
            case .supply(let starved): s.starved = starved
            case .state, .interruptionBegan, .interruptionEnded: break
            }
            return true
        }
        guard current else { return }
        switch change {
        case .interruptionBegan: continuation.yield(.interruptionBegan)
        case .interruptionEnded(let shouldResume): continuation.yield(.interruptionEnded(shouldResume: shouldResume))
        default: break
        }
        publish()
    }

    /// Calls `handler` after the queue or its state changes (for the ``MPRISPlayer``'s
    /// `trackListChanged()`), until the token is cancelled or released.
    public func observeChanges(_ handler: @escaping @Sendable () -> Void) -> ObservationToken {
        changeObservers.add { _ in handler() }
    }

    /// The queue's one "state changed" event (as an ``AudioPlayer``'s): changes its state
    /// under the lock, does what the change asks of the players once it is let go (`act`:
    /// a setting passed on to them, the move a removal of the current item makes), and
    /// publishes. What else publishes waits for a state that is not one in between: the
    /// current player's own event (``playerChanged(_:of:)``: its start, and its start
    /// heard, a pause and where it settled, a seek, a wrap, the session's pause, a stream's
    /// title), a move once its item is open (or left to the opener), a play the player
    /// refused, and cover art found.
    @discardableResult
    func change<T, E: Error>(_ body: (inout State) throws(E) -> T, then act: (T) -> Void = { _ in }) throws(E) -> T {
        let result = try state.withLock { s throws(E) -> T in try body(&s) }
        act(result)
        publish()
        return result
    }

    /// Writes the queue's state into the now-playing center (which passes on only what
    /// changed), reports ``timeControlStatus`` and tells the observers.
    private func publish() {
        defer {
            reportTimeControlStatus()
            changeObservers.notify(())
        }
        let (center, item, index, count, player, volume, rate, repeatMode, shuffleMode, wantsToPlay, artwork, atEnd, stopped) = state.withLock { s in
            (s.nowPlaying, s.index.map { s.items[$0] }, s.index, s.items.count, s.player, s.volume, s.rate, s.repeatMode, s.shuffleMode,
             s.wantsToPlay && !s.suspended, s.index.flatMap { s.artwork[s.items[$0].id] }, s.atItemEnd, s.stopped)
        }
        guard let center else { return }
        guard let item, let index else {
            center.nowPlayingInfo = nil
            return
        }
        let playing = player?.isPlaying ?? false
        let playbackState: PlaybackState = stopped ? .stopped : playing || wantsToPlay ? .playing : .paused
        var info = item.nowPlayingInfo(artworkPath: artwork, playbackState: playbackState)
        if let stream = player?.stream { info.describe(stream) }
        info.elapsedTime = stopped ? 0 : atEnd ? item.duration : player?.currentTime ?? 0
        info.queueIndex = index
        info.queueCount = count
        // Not before the player's start is heard (the output opening, the sink waking): the
        // position stands still until then, and MPRIS extrapolates from the rate.
        let heard = !(player?.voice.isWaitingToBeHeard ?? false)
        info.playbackRate = (playing || wantsToPlay) && !atEnd && heard ? Double(rate) : 0
        info.defaultPlaybackRate = Double(rate)
        info.volume = Double(volume)
        info.repeatMode = repeatMode
        info.shuffleMode = shuffleMode
        center.nowPlayingInfo = info
    }
}

extension QueuePlayer {
    /// What an item that stopped early went through, for ``Event/itemEndedEarly(_:_:)``:
    /// where and why it stopped, and that it played up to there.
    static func endedEarly(_ error: AudioFileError?, at seconds: TimeInterval) -> String {
        switch error?.reason {
        case .truncated(let at)?:
            return "truncated at \(at.fixed(1)) s; played up to there"
        case .decodeFailed(let detail)?, .readFailed(let detail)?:
            return "\(detail); played up to there"
        default:
            return "decoding stopped at \(seconds.fixed(1)) s; played up to there"
        }
    }
}

/// Forwards an ``AudioPlayer``'s finish, with the decode error that ended it if any, to a
/// closure.
private final class FinishHandler: AudioPlayerDelegate {
    let body: @Sendable (Bool, AudioFileError?) -> Void
    /// The last decode error reported; the engine reports it before the finish.
    private let decodeError = Mutex<AudioFileError?>(nil)
    init(_ body: @escaping @Sendable (Bool, AudioFileError?) -> Void) { self.body = body }
    func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: AudioFileError) {
        decodeError.withLock { $0 = error }
    }
    func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) {
        body(flag, decodeError.withLock { $0 })
    }
}
