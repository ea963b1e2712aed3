import Arbiter
import DBus
import MPRIS
import SessionPolicy

/// The one path from the session to the arbiter.
///
/// Activation, sound reports, registration, category and remote-command changes are steps
/// on one path: each is enqueued synchronously where it happens (an engine's, a player's or
/// a recorder's thread, the bus thread, an app's task), under the session's lock when it
/// carries the session's state, and one consumer task runs the steps one at a time, in
/// that order. The arbiter therefore sees them in the order they happened in the process:
/// no report overtakes another (a stale "silent" cannot land after a newer "producing"),
/// and an activation is not overtaken by the sound that followed it, nor overtakes the
/// sound that came before it. A step that makes several calls sends them back to back
/// (the bus keeps one connection's order) and then awaits their replies.
///
/// A step never waits for another step (it would wait for itself): code on the path calls
/// the `send…` functions, not the public methods that enqueue.
extension AudioSession {
    /// One step of the path.
    typealias Step = @Sendable () async -> Void

    /// Enqueues `step` after every step enqueued before this call returned.
    func enqueue(_ step: @escaping Step) { steps.yield(step) }

    /// Runs `work` on the path, after the steps enqueued before, and returns its result.
    func onPath<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            enqueue {
                do {
                    continuation.resume(returning: try await work())
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    // MARK: Steps

    /// Activates or deactivates the session at the arbiter (on the path). After an
    /// activation, sound the arbiter does not count is reported (``reportMissedSound()``),
    /// unless `reportingMissedSound` is false: a resumption reports it once its players are
    /// heard (see `SessionClient.Activation.resumption`).
    func sendActivation(_ active: Bool, notifyOthers: Bool = false, reportingMissedSound: Bool = true) async throws {
        AudioSession.trace(active ? "activate" : "deactivate")
        try await call(.setActive(active, notifyOthersOnDeactivation: notifyOthers))
        state.withLock { _ = feed(.activationAnswered(active: active), &$0) }
        applyRecordingCategory()
        if active, reportingMissedSound { await reportMissedSound() }
    }

    /// After an activation or a registration: sound the process makes (or a recording)
    /// that the arbiter does not count is reported now, once (`SessionClient.missedSound`).
    func reportMissedSound() async { await feedOnPath(.arbiterMayHaveMissedSound) }

    /// Feeds `input` to the session's client, under the state lock held as `s`: the steps it
    /// asks for are enqueued here, so that they keep the order of the inputs, whatever
    /// threads made them. Returns the client's effects; the reports to send now are left
    /// to the caller (on the path: ``feedOnPath(_:)``).
    @discardableResult
    func feed(_ input: SessionClient.Input, _ s: inout SessionState) -> [SessionClient.Effect] {
        let effects = s.client.handle(input)
        for effect in effects {
            switch effect {
            case .enqueueSoundReport(let producing):
                enqueue {
                    self.state.withLock { _ = self.feed(.soundReportDequeued, &$0) }
                    await self.sendSound(producing)
                }
            case .enqueueMissedSoundCheck:
                enqueue { await self.reportMissedSound() }
            case .enqueueArbiterStoppedCounting:
                enqueue { await self.feedOnPath(.arbiterStoppedCounting) }
            case .enqueueActivation(let activation):
                // A start's activation holds its player until it starts, as the app's call did.
                let held = if case .start(let id) = activation { s.players[id]?.player } else { nil as AudioPlayer? }
                enqueue {
                    try? await self.sendActivation(true, reportingMissedSound: activation != .resumption)
                    await self.feedOnPath(.activated(activation, livePlayers: self.state.withLock { $0.playerIDs() }))
                    withExtendedLifetime(held) {}
                }
            default:
                break  // by the caller: on the path (see `AudioSession+Arbiter.swift` for registrations), or to the players (`perform`)
            }
        }
        return effects
    }

    /// Feeds `input` to the session's client on the path, sends the reports it asks for and
    /// does what it asks to the players.
    func feedOnPath(_ input: SessionClient.Input) async {
        for effect in state.withLock({ feed(input, &$0) }) {
            if case .reportSound(let producing) = effect { await sendSound(producing) } else { perform([effect]) }
        }
    }

    /// Reports sound or silence to the arbiter (on the path). On sound in an eligible
    /// session the MPRIS name is claimed first (the desktop's target follows), and an output
    /// that changed is told first (it is opened before the sound it carries); the calls
    /// go back to back on the session's connection, then their replies are awaited, so the
    /// report reaches the arbiter one round trip after the sound, not one per call.
    func sendSound(_ producing: Bool) async {
        guard let connection = await registeredConnection(), !state.withLock({ $0.client.isWaitingForRoom }) else { return }
        var messages: [DBusMessage] = []
        var claims = false
        if producing, isEligibleRemoteTarget, let mpris = state.withLock({ $0.mpris }) {
            if mpris.connection === connection, let request = try? mpris.claimNameRequest() {
                messages.append(request)
                claims = true
            } else {
                // Published on another connection: the bus keeps no order between two
                // connections, so the claim is answered before the report goes.
                _ = try? await mpris.claimName()
                AudioSession.trace("name claimed")
            }
        }
        let output = currentOutput
        let tellsOutput = producing && state.withLock { $0.outputReported != output }
        if tellsOutput, let message = try? ArbiterCall.setOutput(output).message() { messages.append(message) }
        guard let report = try? ArbiterCall.reportSound(producing: producing).message() else { return }
        messages.append(report)
        let replies = await connection.calls(messages)
        if claims { AudioSession.trace("name claimed") }
        let succeeded: [Bool] = replies.map { if case .success = $0 { true } else { false } }
        state.withLock { s in
            if tellsOutput, succeeded[claims ? 1 : 0] { s.outputReported = output }
            feed(.soundReportAnswered(producing: producing, counted: succeeded[succeeded.count - 1]), &s)
        }
        AudioSession.trace(producing ? "sound reported" : "silence reported")
    }

    /// The connection once the session has registered (without a suspension then, so that
    /// a report goes out at once), else after connecting; nil if the bus cannot be reached.
    func registeredConnection() async -> DBusConnection? {
        if let connection = state.withLock({ $0.client.registeredWith != nil ? $0.connection : nil }) { return connection }
        return try? await connection()
    }

    /// Tells the arbiter whether the adopted player has a remote command enabled (on the path).
    func sendRemoteCommands() async throws {
        guard state.withLock({ $0.mpris != nil }) else { return }
        try await call(.setRemoteCommandsEnabled(remoteCommandsAvailable))
    }
}
