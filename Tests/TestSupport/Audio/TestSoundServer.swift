import Foundation

/// The three sound servers the real-time tests run on, chosen with `EARSHOT_TEST_SERVER`:
/// PulseAudio with a 48 kHz null sink without rewinds (unset, or `pulseaudio-48k-norewinds`:
/// the harness's usual sink, what a desktop's virtual sinks look like), PulseAudio at its
/// defaults (`pulseaudio-defaults`: 44.1 kHz, rewinds on, what real sinks look like), and
/// PipeWire through pipewire-pulse (`pipewire`). `scripts/test` runs the real-time suites
/// once on each.
public enum TestSoundServerKind: String, Sendable, CaseIterable, CustomStringConvertible {
    case pulseAudio48kNoRewinds = "pulseaudio-48k-norewinds"
    case pulseAudioDefaults = "pulseaudio-defaults"
    case pipeWire = "pipewire"

    /// The kind `EARSHOT_TEST_SERVER` names; stops the test process on a value it does not know.
    public static var selected: TestSoundServerKind {
        let name = ProcessInfo.processInfo.environment["EARSHOT_TEST_SERVER"] ?? ""
        if name.isEmpty { return .pulseAudio48kNoRewinds }
        guard let kind = TestSoundServerKind(rawValue: name) else {
            fatalError("EARSHOT_TEST_SERVER=\(name): expected pulseaudio-48k-norewinds, pulseaudio-defaults or pipewire")
        }
        return kind
    }

    /// The rate of the server's main sink: 44.1 kHz at PulseAudio's defaults, else 48 kHz.
    public var sinkRate: Int { self == .pulseAudioDefaults ? 44100 : 48000 }

    /// Whether the server is PulseAudio itself (and so has its modules, sample cache and so on).
    public var isPulseAudio: Bool { self != .pipeWire }

    public var description: String {
        switch self {
        case .pulseAudio48kNoRewinds: "PulseAudio, 48 kHz, norewinds"
        case .pulseAudioDefaults: "PulseAudio, 44.1 kHz, rewinds"
        case .pipeWire: "PipeWire (pipewire-pulse)"
        }
    }

    /// Starts a private server of this kind whose main (and default) sink is `sinkName`.
    public func start(sinkName: String) throws -> any TestSoundServer {
        switch self {
        case .pulseAudio48kNoRewinds: try PulseAudioServer(sinkName: sinkName)
        case .pulseAudioDefaults: try PulseAudioServer(sinkName: sinkName, sampleRate: sinkRate, rewinds: true)
        case .pipeWire: try PipeWireServer(sinkName: sinkName)
        }
    }
}

/// A private sound server a multi-process test drives from outside: what its clients need
/// (``environment``, ``address``), its main sink and what that sink played (through
/// ``Capture``), other outputs plugged in and out, and a crash and restart.
/// ``PulseAudioServer`` and ``PipeWireServer`` are both one.
public protocol TestSoundServer: SharedAudioServer {
    /// The source that records what the main sink plays.
    var monitorName: String { get }
    /// Loads another null sink (rate and channels default to the main sink's) and returns its
    /// module index once clients see it: like plugging in an output. It does not become the
    /// default sink by itself.
    func loadNullSink(name: String, sampleRate: Int?, channels: Int?) throws -> Int
    /// Unloads a module (for a null sink: like unplugging that output).
    func unloadModule(_ index: Int) throws
    /// Makes `name` the default sink; returns once the server says it is.
    func setDefaultSink(_ name: String) throws
    /// The default sink's name.
    func defaultSink() throws -> String
    /// Kills the server its clients talk to (SIGKILL: a crash, as they see it) and starts it
    /// again on the same socket with the same main sink; returns once it answers. Sinks
    /// loaded with ``loadNullSink(name:sampleRate:channels:)`` are gone.
    func restart(timeout: Double) throws
}

extension TestSoundServer {
    /// A null sink at the main sink's rate and channel count (see
    /// ``loadNullSink(name:sampleRate:channels:)``).
    public func loadNullSink(name: String) throws -> Int {
        try loadNullSink(name: name, sampleRate: nil, channels: nil)
    }

    /// ``restart(timeout:)`` within 10 s.
    public func restart() throws {
        try restart(timeout: 10)
    }
}

extension PulseAudioServer: TestSoundServer {}
