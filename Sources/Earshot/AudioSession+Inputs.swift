public import AudioRoutes
import AudioEngine
import Synchronization

// The inputs side of the session (AVAudioSession's isInputAvailable, currentRoute.inputs,
// inputNumberOfChannels, preferredInput), from the sound server's sources. Kept beside the
// session rather than in its state: one monitor per session, made on first use.

extension AudioSession {
    private static let inputMonitors = Mutex<[ObjectIdentifier: InputMonitor]>([:])
    private static let preferredInputs = Mutex<[ObjectIdentifier: AudioInputPort]>([:])

    /// The session's input monitor, connected on first use to the engine's sound server;
    /// nil when none answers (inputs are then not known: ALSA capture may still work).
    func inputMonitor() -> InputMonitor? {
        let id = ObjectIdentifier(self)
        if let monitor = AudioSession.inputMonitors.withLock({ $0[id] }) { return monitor }
        guard let monitor = try? InputMonitor(server: engine.configuration.soundServer) else { return nil }
        return AudioSession.inputMonitors.withLock { monitors in
            if let existing = monitors[id] { return existing }
            monitors[id] = monitor
            return monitor
        }
    }

    /// Whether an input is available to record from (a microphone or line-in source, or a
    /// monitor chosen as the default source).
    public var isInputAvailable: Bool { !(inputMonitor()?.inputs.isEmpty ?? true) }

    /// The inputs of the current route, the default input first.
    public var currentInputs: [AudioInputPort] { inputMonitor()?.inputs ?? [] }

    /// The inputs a recording can use (the same as ``currentInputs``: every source the
    /// server offers).
    public var availableInputs: [AudioInputPort] { currentInputs }

    /// The channels of the input a recording would use (the preferred one, else the default).
    public var inputNumberOfChannels: Int {
        preferredInput.map(\.channels) ?? currentInputs.first?.channels ?? 0
    }

    /// The input recorders of this session use when they name none; nil: the default source.
    public var preferredInput: AudioInputPort? { AudioSession.preferredInputs.withLock { $0[ObjectIdentifier(self)] } }

    /// Chooses the input recorders use (nil: the server's default source).
    public func setPreferredInput(_ input: AudioInputPort?) {
        AudioSession.preferredInputs.withLock { $0[ObjectIdentifier(self)] = input }
    }

    /// Calls `handler` with the new value of ``isInputAvailable`` whenever it changes (a
    /// microphone plugged or unplugged), on libpulse's thread.
    public func observeInputAvailability(_ handler: @escaping @Sendable (Bool) -> Void) {
        guard let monitor = inputMonitor() else { return }
        let last = Mutex(!monitor.inputs.isEmpty)
        monitor.onChange { inputs in
            let available = !inputs.isEmpty
            let changed = last.withLock { value -> Bool in
                defer { value = available }
                return value != available
            }
            if changed { handler(available) }
        }
    }

    /// Calls `handler` with the inputs whenever they change (one plugged, unplugged, or the
    /// default changed), on libpulse's thread.
    public func observeInputs(_ handler: @escaping @Sendable ([AudioInputPort]) -> Void) {
        inputMonitor()?.onChange(handler)
    }
}
