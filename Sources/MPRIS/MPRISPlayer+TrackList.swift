import DBus

/// `org.mpris.MediaPlayer2.TrackList`, exported when the player has a ``TrackListSource``.
extension MPRISPlayer {
    /// The MPRIS track-list interface.
    public static let trackListInterface = "org.mpris.MediaPlayer2.TrackList"

    func trackListInterfaceDeclaration() -> DBusInterface {
        DBusInterface(
            MPRISPlayer.trackListInterface,
            methods: [
                DBusMethod("GetTracksMetadata", inputs: [.init("TrackIds", .array(.objectPath))],
                           outputs: [.init("Metadata", .array(.dictionary(key: .string, value: .variant)))]) { [weak self] call in
                    guard let self, let ids = call.arguments[0].elements?.compactMap(\.objectPath) else { return [.array(.dictionary(key: .string, value: .variant), [])] }
                    return [.array(.dictionary(key: .string, value: .variant), self.tracksMetadata(ids))]
                },
                // The edits and GoTo open files: they run on the command queue
                // (MPRISPlayer+CommandQueue), in order, and are answered when done.
                queued("AddTrack", inputs: [.init("Uri", .string), .init("AfterTrack", .objectPath), .init("SetAsCurrent", .boolean)]) { player, call throws(DBusError) in
                    guard let uri = call.arguments[0].string, let after = call.arguments[1].objectPath,
                          let current = call.arguments[2].bool else { return }
                    try player.addTrack(uri: uri, after: after, setAsCurrent: current)
                },
                queued("RemoveTrack", inputs: [.init("TrackId", .objectPath)]) { player, call throws(DBusError) in
                    guard let track = call.arguments[0].objectPath else { return }
                    try player.editTrack(track, "RemoveTrack") { source, id in source.removeTrack(id) }
                },
                queued("GoTo", inputs: [.init("TrackId", .objectPath)]) { player, call throws(DBusError) in
                    guard let track = call.arguments[0].objectPath, let source = player.trackList,
                          let id = player.appTrackID(track) else { return }
                    try player.deliver(source.goTo(id), "GoTo")
                },
            ],
            properties: [
                property("Tracks", .array(.objectPath), changeSignal: .invalidates) { .array(.objectPath, $0.trackPaths().map(DBusValue.objectPath)) },
                property("CanEditTracks", .boolean) { .boolean($0.trackList?.canEditTracks ?? false) },
            ],
            signals: [
                DBusSignalDeclaration("TrackListReplaced", arguments: [.init("Tracks", .array(.objectPath)), .init("CurrentTrack", .objectPath)]),
                DBusSignalDeclaration("TrackAdded", arguments: [.init("Metadata", .dictionary(key: .string, value: .variant)), .init("AfterTrack", .objectPath)]),
                DBusSignalDeclaration("TrackRemoved", arguments: [.init("TrackId", .objectPath)]),
                DBusSignalDeclaration("TrackMetadataChanged", arguments: [.init("TrackId", .objectPath), .init("Metadata", .dictionary(key: .string, value: .variant))]),
            ]
        )
    }

    /// `org.freedesktop.DBus.Error.LimitsExceeded`.
    static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"

    func trackPaths() -> [ObjectPath] {
        (trackList?.trackListItems ?? []).map { trackPath($0.trackID ?? "") }
    }

    /// The app's id for an MPRIS track id, if it names an item of the list.
    func appTrackID(_ path: ObjectPath) -> String? {
        trackList?.trackListItems.first { trackPath($0.trackID ?? "") == path }?.trackID
    }

    /// Metadata for the known ids, in the order asked; unknown ids are skipped, and an id
    /// asked for again is answered once (so the reply is never larger than the list, however
    /// many times a request repeats an id).
    func tracksMetadata(_ ids: [ObjectPath]) -> [DBusValue] {
        let items = trackList?.trackListItems ?? []
        var byPath: [ObjectPath: NowPlayingInfo] = [:]
        for item in items { byPath[trackPath(item.trackID ?? "")] = item }
        var answered = Set<ObjectPath>()
        return ids.compactMap { id in
            guard let item = byPath[id], answered.insert(id).inserted else { return nil }
            return metadata(for: item, trackID: id)
        }
    }

    /// `AddTrack`: the URI scheme must be supported; `AfterTrack` is NoTrack (insert at the
    /// start) or an item of the list. Without `CanEditTracks` it does nothing.
    func addTrack(uri: String, after: ObjectPath, setAsCurrent: Bool) throws(DBusError) {
        guard let source = trackList, source.canEditTracks else { return }
        try checkSupported(uri: uri)
        let count = source.trackListItems.count
        guard count < source.maximumTrackCount else {
            throw DBusError(MPRISPlayer.limitsExceeded,
                            "\(configuration.identity)'s track list holds \(count) tracks, its limit; remove some before adding more")
        }
        var afterID: String?
        if after != MPRISPlayer.noTrack {
            guard let id = appTrackID(after) else {
                throw .invalidArgs("AfterTrack \(after) is not in the track list")
            }
            afterID = id
        }
        try deliver(source.addTrack(uri: uri, after: afterID, setAsCurrent: setAsCurrent), "AddTrack")
    }

    func editTrack(_ track: ObjectPath, _ what: String, _ body: (TrackListSource, String) -> RemoteCommandHandlerStatus) throws(DBusError) {
        guard let source = trackList, source.canEditTracks, let id = appTrackID(track) else { return }
        try deliver(body(source, id), what)
    }

    /// Tells clients how the list changed since the last call: one TrackAdded or
    /// TrackRemoved when a single item came or went, TrackMetadataChanged for items whose
    /// metadata changed, TrackListReplaced otherwise; and `Tracks` invalidated.
    public func trackListChanged() {
        guard let source = trackList else { return }
        let items = source.trackListItems
        // Most changes a queue reports (a Next, a pause) leave its items as they were: then
        // there is nothing to tell, and the metadata of every item is not built again.
        guard trackListState.withLock({ $0.items != items }) else { return }
        let paths = items.map { trackPath($0.trackID ?? "") }
        let metadata = Dictionary(zip(paths, zip(items, paths).map { self.metadata(for: $0, trackID: $1) }),
                                  uniquingKeysWith: { first, _ in first })
        let (object, previous) = trackListState.withLock { state -> (DBusExportedObject?, (paths: [ObjectPath], metadata: [ObjectPath: DBusValue])) in
            defer { (state.items, state.paths, state.metadata) = (items, paths, metadata) }
            return (state.object, (state.paths, state.metadata))
        }
        guard let object else { return }
        let interface = MPRISPlayer.trackListInterface
        if paths != previous.paths {
            try? object.emitPropertiesChanged(interface: interface, changed: [:], invalidated: ["Tracks"])
        }
        if let added = MPRISPlayer.singleInsertion(paths, into: previous.paths) {
            let after = added == 0 ? MPRISPlayer.noTrack : paths[added - 1]
            try? object.emit("TrackAdded", interface: interface, [metadata[paths[added]]!, .objectPath(after)])
        } else if let removed = MPRISPlayer.singleInsertion(previous.paths, into: paths) {
            try? object.emit("TrackRemoved", interface: interface, [.objectPath(previous.paths[removed])])
        } else if paths != previous.paths {
            try? object.emit("TrackListReplaced", interface: interface,
                             [.array(.objectPath, paths.map(DBusValue.objectPath)), .objectPath(isLoaded ? currentTrackID : MPRISPlayer.noTrack)])
        } else {
            for path in paths where previous.metadata[path] != metadata[path] {
                try? object.emit("TrackMetadataChanged", interface: interface, [.objectPath(path), metadata[path]!])
            }
        }
    }

    /// Where `longer` holds one element more than `shorter`, if that is the only difference.
    static func singleInsertion(_ longer: [ObjectPath], into shorter: [ObjectPath]) -> Int? {
        guard longer.count == shorter.count + 1 else { return nil }
        var index = 0
        while index < shorter.count, longer[index] == shorter[index] { index += 1 }
        return Array(longer[(index + 1)...]) == Array(shorter[index...]) ? index : nil
    }
}
