import Arbiter
import AudioRoutes
package import DBus
import SessionPolicy

/// Connecting to the arbiter: hosting it when this process owns the name, registering
/// (again after the host changed), and the arbiter's signals.
extension AudioSession {
    /// Connects to the session bus and the arbiter (hosting it if no process does), as the
    /// first ``setActive(_:options:)-4wxrc`` or the first player's sound otherwise does. Idempotent.
    ///
    /// - Throws: ``AudioSessionError/arbiterUnreachable(reason:)`` when the bus or the
    ///   arbiter cannot be reached.
    public func connect() async throws {
        _ = try await AudioSessionError.mapping { try await connection() }
    }

    /// The bus connection (connecting if needed). MPRIS players of the process publish on
    /// it (``publishRemoteControl(_:commands:nowPlaying:trackList:)``), so that the
    /// arbiter's target and the MPRIS owner are one.
    package func connection() async throws -> DBusConnection {
        let task = state.withLock { s -> Task<DBusConnection, any Error> in
            if let existing = s.connecting { return existing }
            let task = Task { try await self.establish() }
            s.connecting = task
            return task
        }
        do {
            return try await task.value
        } catch {
            state.withLock { $0.connecting = nil }
            throw error
        }
    }

    private func establish() async throws -> DBusConnection {
        let connection = try DBusConnection(bus)
        // The arbiter, while this process hosts it, serves on a connection of its own, as
        // earshot daemon does: its calls then never wait in line behind this process's
        // MPRIS traffic (a burst of Next calls is a burst of messages on that connection),
        // and its bus thread is not the one that runs the players' handlers. Measured with
        // SessionBusThreadTests' bursts, as the embedded arbiter's p99 ratio over that of
        // the arbiter in earshot daemon in the same run: a median of 0.93 in 11 runs
        // (0.77–1.40), where one shared connection read a median of 1.46 in 6 (0.51–2.08).
        // Every process queues for the name on it, so that when the host exits, the bus
        // hands the arbiter to the next one. It costs each process a second connection and
        // its bus thread, which sleeps while nothing comes.
        let arbiterConnection: DBusConnection
        do {
            arbiterConnection = try DBusConnection(bus)
        } catch {
            connection.close()  // its bus thread would wait for nothing
            throw error
        }
        var subscriptions: [SignalSubscription] = []
        // Hosting: the arbiter is exported on the bus thread the moment the name arrives.
        subscriptions.append(try await arbiterConnection.watchOwnNames { [weak self] name, acquired in
            guard let self, name == ArbiterName.bus else { return }
            if acquired { self.host(on: arbiterConnection) } else { self.stopHosting() }
        })
        // The arbiter's owner, followed; a new arbiter host (the previous one exited):
        // register again, as a session still waiting for room does with any new host.
        subscriptions.append(try await connection.watchNameOwner(ArbiterName.bus) { [weak self] change in
            self?.feedRegistration(.arbiterOwnerChanged(change.newOwner), on: connection)
        })
        // Unicast signals need no match rule; SessionsAvailable is broadcast and does.
        subscriptions.append(try await connection.subscribe(MatchRule(interface: ArbiterName.interface), addMatch: false) { [weak self] message in
            self?.arbiterSignal(message)
        })
        subscriptions.append(try await connection.subscribe(ArbiterSignal.sessionsAvailableRule, handler: { _ in }))
        let changes = state.withLock { $0.client.arbiterOwnerChanges }
        let owner = try await connection.nameOwner(ArbiterName.bus)
        state.withLock { _ = feed(.arbiterOwnerAnswered(owner, changesBefore: changes), &$0) }
        state.withLock { s in
            s.connection = connection
            s.arbiterConnection = arbiterConnection
            s.subscriptions = subscriptions
        }
        _ = try await arbiterConnection.requestName(ArbiterName.bus, flags: [.allowReplacement])
        try await register(on: connection, reset: false)
        startWatchingRoutes()
        startWatchingSound()
        // The engine's players follow this session from now on (see `AudioEngine.followedSession`).
        engine.playersSession.withLock { $0 = self }
        return connection
    }

    /// Serves the arbiter on `connection` (the session's arbiter connection), which has
    /// just acquired its name (on its bus thread, which goes on to the calls queued behind
    /// the name's arrival only after this: none finds the arbiter missing). If the arbiter
    /// cannot be made, the name is given up at once: owned by a process that serves
    /// nothing, it would leave every session's calls unanswered, and keep `earshot daemon`
    /// or the next process in the queue from serving.
    private func host(on connection: DBusConnection) {
        do {
            var configuration = Arbiter.Configuration.user()
            configuration.eventLog = AudioSession.arbiterEventLog.withLock { $0 }
            let arbiter = try Arbiter(connection: connection, configuration: configuration)
            state.withLock { $0.hosted = arbiter }
        } catch {
            AudioSession.trace("cannot host the arbiter (\(error)); giving up \(ArbiterName.bus)")
            try? connection.releaseNameWithoutReply(ArbiterName.bus)
        }
    }

    private func stopHosting() {
        state.withLock { s in
            s.hosted?.stop()
            s.hosted = nil
        }
    }

    /// Whether this process hosts the arbiter.
    public var isHostingArbiter: Bool { state.withLock { $0.hosted != nil } }

    /// The connection that queues for the arbiter's name and serves the arbiter while this
    /// process hosts it (nil before ``connect()``).
    var arbiterConnection: DBusConnection? { state.withLock { $0.arbiterConnection } }

    /// Registers with the whole current state (when connecting, or on the path). After a
    /// host change, a session that is interrupted by another, or silenced by the screen
    /// lock, says so, and the new arbiter carries the interruption on or ends it; if its
    /// interrupter is gone, the interruption ends here.
    func register(on connection: DBusConnection, reset: Bool) async throws {
        var (registration, interruptedBy, silencedBy, wasPlaying) = state.withLock { s -> (ArbiterRegistration, String?, InterruptionReason?, Bool) in
            var r = ArbiterRegistration()
            (r.category, r.options, r.mode, r.active) = (s.category, s.options, s.mode, s.client.active)
            r.producingSound = s.client.registrationSound
            return (r, reset ? s.client.interruptedBy : nil, reset ? s.client.silencedBy : nil,
                    !s.client.pausedByInterruption.isEmpty)
        }
        let adopted = state.withLock { $0.mpris != nil }
        registration.remoteCommands = adopted && remoteCommandsAvailable
        registration.output = currentOutput
        // A silenced session leaves the decision to the arbiter, which asks the screen saver.
        let staleInterruption = reset && isInterrupted && silencedBy == nil
        if let by = interruptedBy, try await connection.nameOwner(by) == nil { interruptedBy = nil }
        if let interruptedBy {
            registration.interruptedBy = SessionID(interruptedBy)
            registration.wasPlaying = wasPlaying
        } else if let silencedBy {
            registration.silencedBy = silencedBy
            registration.wasPlaying = wasPlaying
        }
        let owner = try await connection.nameOwner(ArbiterName.bus)
        let answer: Result<[DBusValue], DBusError>
        do {
            answer = .success(try await connection.call(.register(appName: appName, state: registration)))
        } catch {
            answer = .failure(error)
        }
        if case .failure(let error) = answer, error.name == ArbiterName.Error.limitsExceeded {
            // No room now (see `SessionClient.Registration.waitingForRoom`). Room announced
            // while this call was on its way is tried on the path, after it.
            state.withLock { _ = feed(.registrationRefused(reset: reset), &$0) }
            AudioSession.trace("registration refused (\(error.message)); waiting for room")
            return
        }
        let situation = try ArbiterSituation(decoding: answer.get())
        let previousHost = state.withLock { s -> String? in
            defer { _ = feed(.registrationAccepted(host: owner), &s) }
            s.otherAudioPlaying = situation.otherAudioPlaying
            s.secondaryHint = situation.secondaryAudioShouldBeSilenced
            s.duckGain = situation.duckGain
            s.outputReported = registration.output
            feed(.registered(producing: registration.producingSound), &s)
            return s.client.registeredWith
        }
        engine.setProcessGain(wantedProcessGain)
        if reset { post(.mediaServicesWereReset) }
        if staleInterruption, interruptedBy == nil {
            perform(state.withLock { s in
                // Gone with the host (or with its own process): resume, as when an interrupter vanishes.
                let by = s.client.interruptedBy
                return feed(.interruptionEnded(shouldResume: by != nil && (by == previousHost || wasPlaying), manual: s.manualPlayers), &s)
            })
        }
    }

    /// Registers again after a refusal for lack of room, on the path: after the refused
    /// registration (a step that waits for the connection, which made it), and before what
    /// the session does next. Room announced while an attempt is on its way enqueues another.
    private func retryRegistration(on connection: DBusConnection) {
        enqueue {
            _ = try? await self.connect()
            for case .register(let reset) in self.state.withLock({ self.feed(.registrationRetryDue, &$0) }) {
                try? await self.register(on: connection, reset: reset)
                guard !self.state.withLock({ $0.client.isWaitingForRoom }) else { return }
                AudioSession.trace("registered after waiting for room")
                await self.reportMissedSound()
            }
        }
    }

    /// Feeds a registration input to the session's client, and enqueues the registrations
    /// it asks for on `connection` (the session's, which may not be stored yet).
    private func feedRegistration(_ input: SessionClient.Input, on connection: DBusConnection) {
        for effect in state.withLock({ feed(input, &$0) }) {
            switch effect {
            case .enqueueRegistration(let reset): enqueue { try? await self.register(on: connection, reset: reset) }
            case .enqueueRegistrationRetry: retryRegistration(on: connection)
            default: break
            }
        }
    }

    /// Calls an arbiter method on the caller's session (on the path). While the session
    /// waits for room in the arbiter, the call is not made: the caller records the change
    /// here, and the registration carries it.
    func call(_ call: ArbiterCall) async throws {
        let connection = try await connection()
        guard !state.withLock({ $0.client.isWaitingForRoom }) else { return }
        _ = try await connection.call(call)
    }

    /// Applies one of the arbiter's signals, if the arbiter sent it (``ArbiterSignal``
    /// checks that the sender is the unique name that owns `org.earshot.AudioSession` now).
    private func arbiterSignal(_ message: DBusMessage) {
        let signal: ArbiterSignal
        do {
            signal = try ArbiterSignal(message, arbiter: state.withLock { $0.client.arbiterOwner })
        } catch {
            AudioSession.trace("\(error)")
            return
        }
        switch signal {
        case .sessionsAvailable:
            if let connection = state.withLock({ $0.connection }) { feedRegistration(.sessionsAvailable, on: connection) }
        case .deactivated(let reason):
            state.withLock { _ = feed(.deactivatedByArbiter, &$0) }
            AudioSession.trace("deactivated by the arbiter (\(reason.rawValue))")
            post(.deactivatedAfterSilence)
        case .interruptionBegan(let reason):
            let effects = state.withLock { s in feed(.interruptionBegan(reason, playing: s.playerIDs(where: \.isPlaying)), &s) }
            AudioSession.trace("interruption began")
            perform(effects)
            post(.interruption(.began(reason: reason)))
        case .interruptionEnded(let resume):
            // A resumption owed by an earlier end is kept (see `SessionClient+Players.swift`).
            perform(state.withLock { s in feed(.interruptionEnded(shouldResume: resume, manual: s.manualPlayers), &s) })
        case .duckGainChanged(let gain):
            state.withLock { $0.duckGain = gain }
            engine.setProcessGain(wantedProcessGain)
        case .otherAudioPlayingChanged(let playing):
            state.withLock { $0.otherAudioPlaying = playing }
        case .secondaryAudioShouldBeSilencedChanged(let silence):
            state.withLock { $0.secondaryHint = silence }
            post(.silenceSecondaryAudioHint(shouldSilence: silence))
        }
    }

    // MARK: Routes

    func routeMonitor() -> RouteMonitor? { state.withLock { $0.routes } }

    private func startWatchingRoutes() {
        let monitor = try? RouteMonitor { [weak self] change in self?.routeChanged(change) }
        state.withLock { $0.routes = monitor }
        // Input changes are route changes too: follow them from the start.
        _ = inputMonitor()
    }

    /// Posts the change. Audio continues across a route change; on `oldDeviceUnavailable`
    /// only a queue's players pause, as `AVPlayer` does (see `pausesWhenDeviceGoesAway`).
    /// This is the one place the rule lives: the arbiter does not see which process's
    /// device went away, and on iOS a route change is a notification, not an interruption.
    private func routeChanged(_ change: RouteChange) {
        if change.reason == .oldDeviceUnavailable { pausePlayersForLostDevice() }
        let inputs = existingInputMonitor()?.inputs ?? []
        post(.routeChange(RouteChange(reason: change.reason, previousRoute: change.previousRoute.with(inputs: inputs),
                                      currentRoute: change.currentRoute.with(inputs: inputs))))
    }
}
