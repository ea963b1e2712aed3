public import AudioRoutes
import AudioEngine
import Synchronization

// The inputs side of the session (AVAudioSession's isInputAvailable, currentRoute.inputs,
// inputNumberOfChannels, preferredInput), from the sound server's sources, or the ALSA
// capture devices when no server answers. Kept beside the session rather than in its
// state: one monitor per session, made on first use.

extension AudioSession {
    /// A session's input side. Keyed by the session's identity, which a later session may
    /// reuse once this one is gone: the weak reference tells them apart.
    private struct InputsEntry {
        weak var session: AudioSession?
        var monitor: InputMonitor?
        var preferred: AudioInputPort?
    }
    private static let inputEntries = Mutex<[ObjectIdentifier: InputsEntry]>([:])

    /// This session's entry, dropping (and returning, to close) one a gone session left.
    private static func entry(of session: AudioSession, _ body: (inout InputsEntry) -> Void) -> InputMonitor? {
        inputEntries.withLock { entries in
            let id = ObjectIdentifier(session)
            var stale: InputMonitor?
            var entry = entries[id] ?? InputsEntry(session: session)
            if entry.session !== session {
                stale = entry.monitor
                entry = InputsEntry(session: session)
            }
            body(&entry)
            entries[id] = entry
            return stale
        }
    }

    /// The session's input monitor, connected on first use to the engine's sound server;
    /// nil when none answers (inputs are then not known: ALSA capture may still work).
    func inputMonitor() -> InputMonitor? {
        if let monitor = existingInputMonitor() { return monitor }
        guard let monitor = try? InputMonitor(server: engine.configuration.soundServer) else { return nil }
        var kept = monitor
        var isNew = false
        let stale = AudioSession.entry(of: self) { entry in
            if let existing = entry.monitor { kept = existing } else {
                entry.monitor = monitor
                isNew = true
            }
        }
        stale?.close()
        if isNew { postInputChanges(of: kept) } else { monitor.close() }
        return kept
    }

    /// The session's input monitor if one was made; never connects.
    func existingInputMonitor() -> InputMonitor? {
        var monitor: InputMonitor?
        AudioSession.entry(of: self) { monitor = $0.monitor }?.close()
        return monitor
    }

    /// Posts a `routeChange` for each change of the inputs that ``InputRouteRule`` gives a
    /// reason (the previous route with the inputs before), an `inputAvailabilityChange` when
    /// ``isInputAvailable`` flips, then `inputsChange`.
    private func postInputChanges(of monitor: InputMonitor) {
        let last = Mutex(monitor.inputs)
        monitor.onChange { [weak self] inputs in
            guard let self else { return }
            let old = last.withLock { value -> [AudioInputPort] in
                defer { value = inputs }
                return value
            }
            if let reason = InputRouteRule.reason(from: old, to: inputs) {
                let outputs = self.routeMonitor()?.currentRoute ?? .empty
                self.post(.routeChange(RouteChange(reason: reason, previousRoute: outputs.with(inputs: old),
                                                   currentRoute: outputs.with(inputs: inputs))))
            }
            if old.isEmpty != inputs.isEmpty { self.post(.inputAvailabilityChange(isInputAvailable: !inputs.isEmpty)) }
            self.post(.inputsChange(currentInputs: inputs))
        }
    }

    /// Whether an input is available to record from (a microphone or line-in source, or a
    /// monitor chosen as the default source; an ALSA capture device when no sound server
    /// answers).
    public var isInputAvailable: Bool { !currentInputs.isEmpty }

    /// The inputs of the current route, the default input first: the sound server's sources,
    /// or, when none answers, the ALSA capture devices the configuration lists
    /// (`ALSAInputs`; read at each call: without a server there is nothing to follow).
    public var currentInputs: [AudioInputPort] { inputMonitor()?.inputs ?? ALSAInputs.list() }

    /// The inputs a recording can use (the same as ``currentInputs``: every source the
    /// server offers).
    public var availableInputs: [AudioInputPort] { currentInputs }

    /// The channels of the input a recording would use (the preferred one, else the default).
    public var inputNumberOfChannels: Int {
        preferredInput.map(\.channels) ?? currentInputs.first?.channels ?? 0
    }

    /// The input recorders of this session use when they name none; nil: the default source.
    public var preferredInput: AudioInputPort? {
        var preferred: AudioInputPort?
        AudioSession.entry(of: self) { preferred = $0.preferred }?.close()
        return preferred
    }

    /// Chooses the input recorders use (nil: the server's default source).
    public func setPreferredInput(_ input: AudioInputPort?) {
        AudioSession.entry(of: self) { $0.preferred = input }?.close()
    }
}
