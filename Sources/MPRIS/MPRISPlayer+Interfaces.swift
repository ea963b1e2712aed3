import DBus

/// The two MPRIS interfaces: declarations, and the translation of each call into a
/// remote command. Commands that are unavailable make the call a no-op, as the
/// specification asks; invalid arguments are errors and change nothing.
extension MPRISPlayer {
    func rootInterfaceDeclaration() -> DBusInterface {
        DBusInterface(
            MPRISPlayer.rootInterface,
            methods: [
                queued("Raise") { player, _ throws(DBusError) in
                    try player.deliver(player.commands.raiseCommand.perform(), "Raise")
                },
                queuedReplyingFirst("Quit") { player in
                    _ = player.commands.quitCommand.perform()
                },
            ],
            properties: [
                property("CanQuit", .boolean) { .boolean($0.commands.quitCommand.isAvailable) },
                property("CanRaise", .boolean) { .boolean($0.commands.raiseCommand.isAvailable) },
                property("HasTrackList", .boolean) { .boolean($0.trackList != nil) },
                property("Identity", .string) { $0.rootSnapshot()["Identity"]! },
                property("SupportedUriSchemes", .array(.string)) { $0.rootSnapshot()["SupportedUriSchemes"]! },
                property("SupportedMimeTypes", .array(.string)) { $0.rootSnapshot()["SupportedMimeTypes"]! },
            ] + (configuration.desktopEntry == nil ? [] : [
                property("DesktopEntry", .string) { $0.rootSnapshot()["DesktopEntry"]! },
            ])
        )
    }

    func playerInterfaceDeclaration() -> DBusInterface {
        DBusInterface(
            MPRISPlayer.playerInterface,
            methods: [
                simple("Next", when: \.canGoNext) { $0.commands.nextTrackCommand },
                simple("Previous", when: \.canGoPrevious) { $0.commands.previousTrackCommand },
                simple("Pause", when: \.canPause) { $0.commands.pauseCommand },
                simple("Stop", when: \.canStop) { $0.commands.stopCommand },
                simple("Play", when: \.canPlay) { $0.commands.playCommand },
                queued("PlayPause") { player, _ throws(DBusError) in try player.playPause() },
                queued("Seek", inputs: [.init("Offset", .int64)]) { player, call throws(DBusError) in
                    guard case .int64(let offset) = call.arguments[0] else { return }
                    try player.seek(by: offset)
                },
                queued("SetPosition", inputs: [.init("TrackId", .objectPath), .init("Position", .int64)]) { player, call throws(DBusError) in
                    guard case .objectPath(let track) = call.arguments[0], case .int64(let position) = call.arguments[1] else { return }
                    try player.setPosition(track: track, position: position)
                },
                queued("OpenUri", inputs: [.init("Uri", .string)]) { player, call throws(DBusError) in
                    try player.openURI(call.arguments[0].string ?? "")
                },
            ],
            properties: [
                property("PlaybackStatus", .string) { .string($0.playbackStatus) },
                property("LoopStatus", .string, get: { .string($0.loopStatus) }, set: { player, value throws(DBusError) in try player.setLoopStatus(value) }),
                property("Rate", .double, get: { .double($0.rate) }, set: { player, value throws(DBusError) in try player.setRate(value) }),
                property("Shuffle", .boolean, get: { .boolean($0.nowPlaying.nowPlayingInfo?.shuffleMode == .items) },
                         set: { player, value throws(DBusError) in try player.setShuffle(value) }),
                property("Metadata", .dictionary(key: .string, value: .variant)) { $0.metadata },
                property("Volume", .double, get: { .double($0.nowPlaying.nowPlayingInfo?.volume ?? 1) },
                         set: { player, value throws(DBusError) in try player.setVolume(value) }),
                property("Position", .int64, changeSignal: .false) { .int64($0.positionMicroseconds()) },
                property("MinimumRate", .double) { .double($0.rateRange.lowerBound) },
                property("MaximumRate", .double) { .double($0.rateRange.upperBound) },
                property("CanGoNext", .boolean) { .boolean($0.canGoNext) },
                property("CanGoPrevious", .boolean) { .boolean($0.canGoPrevious) },
                property("CanPlay", .boolean) { .boolean($0.canPlay) },
                property("CanPause", .boolean) { .boolean($0.canPause) },
                property("CanSeek", .boolean) { .boolean($0.canSeek) },
                property("CanControl", .boolean, changeSignal: .const) { _ in .boolean(true) },
            ],
            signals: [DBusSignalDeclaration("Seeked", arguments: [.init("Position", .int64)])]
        )
    }

    // MARK: Declaration helpers

    func property(
        _ name: String, _ type: DBusType, changeSignal: DBusProperty.ChangeSignal = .true,
        get: @escaping @Sendable (MPRISPlayer) -> DBusValue,
        set: (@Sendable (MPRISPlayer, DBusValue) throws(DBusError) -> Void)? = nil
    ) -> DBusProperty {
        let getter: @Sendable () -> DBusValue = { [weak self] in
            guard let self else { return .boolean(false) }
            return get(self)
        }
        guard let set else { return DBusProperty(name, type, changeSignal: changeSignal, get: getter) }
        // A setter carries out a command (which may open files): it runs on the command
        // queue like the methods, and `Set` is answered when it is done.
        let setter: @Sendable (DBusValue, DBusMethodCall) throws -> Void = { [weak self] value, call in
            guard let self else { return }
            try self.onCommandQueue(call) { player throws(DBusError) in try set(player, value) }
        }
        return DBusProperty(name, type, changeSignal: changeSignal, get: getter, set: setter)
    }

    /// A method that maps to one plain command and, as the specification asks, does
    /// nothing while the matching `Can*` property is false. Both run on the command queue,
    /// so `Can*` is the value the commands queued before this one left.
    private func simple(
        _ name: String, when allowed: KeyPath<MPRISPlayer, Bool> & Sendable,
        _ command: @escaping @Sendable (MPRISPlayer) -> RemoteCommand<RemoteCommandEvent>
    ) -> DBusMethod {
        queued(name) { player, _ throws(DBusError) in
            guard player[keyPath: allowed] else { return }
            try player.deliver(command(player).perform(), name)
        }
    }

    /// Turns a handler's status into the reply: success (or an unavailable command, a
    /// no-op) returns normally; a failure becomes the status's named error.
    func deliver(_ status: RemoteCommandHandlerStatus?, _ what: String) throws(DBusError) {
        guard let status, let name = status.errorName else { return }
        throw DBusError(name, "\(configuration.identity) could not carry out \(what): \(status)")
    }

    // MARK: Calls

    func playPause() throws(DBusError) {
        guard canPlay || canPause else { return }
        if commands.togglePlayPauseCommand.isAvailable {
            return try deliver(commands.togglePlayPauseCommand.perform(), "PlayPause")
        }
        if playbackStatus == "Playing" {
            try deliver(commands.pauseCommand.perform(), "PlayPause")
        } else {
            try deliver(commands.playCommand.perform(), "PlayPause")
        }
    }

    /// `Seek`: relative, in microseconds. Below zero clamps to the start; past the end
    /// acts as `Next`. Offsets of any size are safe (saturating arithmetic).
    func seek(by offset: Int64) throws(DBusError) {
        guard canSeek, offset != 0 else { return }
        guard isLoaded else {
            // No info, so no position or length to clamp against: the app gets the offset.
            return try deliver(commands.seekCommand.perform(SeekCommandEvent(offset: Double(offset) / 1e6)), "Seek")
        }
        let current = positionMicroseconds()
        let (sum, overflow) = current.addingReportingOverflow(offset)
        var target = overflow ? (offset > 0 ? Int64.max : Int64.min) : sum
        if let length = durationMicroseconds, target > length {
            guard canGoNext else { return }
            return try deliver(commands.nextTrackCommand.perform(), "Seek past the end (Next)")
        }
        target = max(0, target)
        guard target != current else { return }
        if commands.seekCommand.isAvailable {
            try deliver(commands.seekCommand.perform(SeekCommandEvent(offset: Double(target - current) / 1e6)), "Seek")
        } else {
            try deliver(commands.changePlaybackPositionCommand.perform(
                ChangePlaybackPositionCommandEvent(positionTime: Double(target) / 1e6)), "Seek")
        }
    }

    /// `SetPosition`: ignored for a track id that is not the current one and for a
    /// position outside 0…length, as the specification asks.
    func setPosition(track: ObjectPath, position: Int64) throws(DBusError) {
        guard canSeek, track == currentTrackID, position >= 0, let length = durationMicroseconds, position <= length else { return }
        if commands.changePlaybackPositionCommand.isAvailable {
            try deliver(commands.changePlaybackPositionCommand.perform(
                ChangePlaybackPositionCommandEvent(positionTime: Double(position) / 1e6)), "SetPosition")
        } else {
            try deliver(commands.seekCommand.perform(
                SeekCommandEvent(offset: Double(position - positionMicroseconds()) / 1e6)), "SetPosition")
        }
    }

    func openURI(_ uri: String) throws(DBusError) {
        try checkSupported(uri: uri)
        guard commands.openURICommand.isAvailable else {
            throw .notSupported("\(configuration.identity) does not open URIs")
        }
        try deliver(commands.openURICommand.perform(OpenURICommandEvent(uri: uri)), "OpenUri")
    }

    /// Checks that `uri` has a scheme, and one of ``MPRISConfiguration/supportedURISchemes``.
    func checkSupported(uri: String) throws(DBusError) {
        guard let colon = uri.firstIndex(of: ":"), colon != uri.startIndex else {
            throw .invalidArgs("“\(uri)” is not a URI: it has no scheme")
        }
        let scheme = uri[..<colon].lowercased()
        guard scheme.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0)) }) else {
            throw .invalidArgs("“\(uri)” is not a URI: its scheme “\(scheme)” has invalid characters")
        }
        guard configuration.supportedURISchemes.contains(where: { $0.lowercased() == scheme }) else {
            let supported = configuration.supportedURISchemes.isEmpty ? "none" : configuration.supportedURISchemes.joined(separator: ", ")
            throw .notSupported("\(configuration.identity) cannot open “\(uri)”: scheme “\(scheme)” is not supported (supported: \(supported))")
        }
    }

    func setRate(_ value: DBusValue) throws(DBusError) {
        guard let rate = value.double, rate.isFinite else { throw .invalidArgs("Rate must be a finite number, not \(value)") }
        guard rate >= 0 else { throw .invalidArgs("Rate must not be negative (\(rate))") }
        if rate == 0 {
            return try deliver(commands.pauseCommand.perform(), "Rate 0 (Pause)")
        }
        let range = rateRange
        guard range.contains(rate) else {
            throw .invalidArgs("Rate \(rate) is outside MinimumRate…MaximumRate (\(range.lowerBound)…\(range.upperBound))")
        }
        guard commands.changePlaybackRateCommand.isAvailable else {
            if rate == self.rate { return }
            throw .notSupported("\(configuration.identity) does not change the playback rate")
        }
        try deliver(commands.changePlaybackRateCommand.perform(ChangePlaybackRateCommandEvent(playbackRate: rate)), "Rate")
    }

    func setLoopStatus(_ value: DBusValue) throws(DBusError) {
        let mode: RepeatMode
        switch value.string {
        case "None": mode = .off
        case "Track": mode = .one
        case "Playlist": mode = .all
        default: throw .invalidArgs("LoopStatus must be “None”, “Track” or “Playlist”, not \(value)")
        }
        guard commands.changeRepeatModeCommand.isAvailable else {
            throw .notSupported("\(configuration.identity) does not change the loop status")
        }
        try deliver(commands.changeRepeatModeCommand.perform(ChangeRepeatModeCommandEvent(repeatMode: mode)), "LoopStatus")
    }

    func setShuffle(_ value: DBusValue) throws(DBusError) {
        guard let on = value.bool else { throw .invalidArgs("Shuffle must be a boolean, not \(value)") }
        guard commands.changeShuffleModeCommand.isAvailable else {
            throw .notSupported("\(configuration.identity) does not shuffle")
        }
        try deliver(commands.changeShuffleModeCommand.perform(ChangeShuffleModeCommandEvent(shuffleMode: on ? .items : .off)), "Shuffle")
    }

    /// `Volume`: NaN and infinities are errors; negative values mean 0, as the
    /// specification asks.
    func setVolume(_ value: DBusValue) throws(DBusError) {
        guard let volume = value.double, volume.isFinite else { throw .invalidArgs("Volume must be a finite number, not \(value)") }
        guard commands.changeVolumeCommand.isAvailable else {
            throw .notSupported("\(configuration.identity) does not change its volume")
        }
        try deliver(commands.changeVolumeCommand.perform(ChangeVolumeCommandEvent(volume: max(0, volume))), "Volume")
    }
}
