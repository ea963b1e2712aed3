// The output route: the analog of AVAudioSessionRouteDescription and of the
// routeChangeNotification's user info. Values only; `RouteMonitor` produces them.

/// One output the audio goes to: a sink's active port (PulseAudio or PipeWire), or a card's
/// output found through its ALSA jack controls.
public struct AudioPort: Sendable, Hashable, CustomStringConvertible {
    /// A stable identifier: the sink name, plus `:` and the port name when the sink has
    /// ports (`alsa_output.pci-0000_00_1f.3.analog-stereo:analog-output-headphones`), or
    /// `hw:CARD=<id>:<jack>` for ALSA jacks.
    public var name: String
    /// A human name: the port's description ("Headphones"), or the sink's when the sink has
    /// no ports ("Null Output").
    public var portName: String
    /// What kind of output it is.
    public var type: PortType
    /// The sink's channel count (2 for ALSA jacks, which do not tell: stereo is assumed).
    public var channels: Int

    public init(name: String, portName: String, type: PortType, channels: Int) {
        self.name = name
        self.portName = portName
        self.type = type
        self.channels = channels
    }

    public var description: String { "\(portName) [\(type), \(channels) ch] (\(name))" }

    /// The kind of an output, the analog of `AVAudioSession.Port`.
    public enum PortType: String, Sendable, Hashable, CaseIterable {
        /// Wired headphones or a wired headset.
        case headphones
        /// Built-in or attached speakers.
        case speaker
        /// HDMI or DisplayPort.
        case hdmi
        /// A USB audio device.
        case usb
        /// A Bluetooth device (A2DP or hands-free).
        case bluetooth
        /// Line out, including digital (S/PDIF) outputs.
        case lineOut
        /// A virtual output with no hardware behind it (a null sink).
        case virtual
        /// Anything else.
        case unknown
    }
}

/// The outputs audio goes to now, and the inputs a recording would use. Outputs are empty
/// when there is nowhere to play (no server and no card, the server gone, or the active port
/// unplugged with nothing to switch to); inputs are empty when nothing can be recorded, or
/// when the route comes from a ``RouteMonitor`` alone (it follows outputs only; the session
/// adds the inputs).
public struct AudioRoute: Sendable, Hashable, CustomStringConvertible {
    /// The outputs, the one in use first.
    public var outputs: [AudioPort]
    /// The inputs, the default one first (ports with names and channels).
    public var inputs: [AudioInputPort]

    /// A route with these outputs and inputs.
    public init(outputs: [AudioPort], inputs: [AudioInputPort] = []) {
        self.outputs = outputs
        self.inputs = inputs
    }

    /// The route with no outputs and no inputs.
    public static let empty = AudioRoute(outputs: [])

    /// This route with other inputs.
    public func with(inputs: [AudioInputPort]) -> AudioRoute { AudioRoute(outputs: outputs, inputs: inputs) }

    /// “outputs; inputs: …” (the inputs only when there are some).
    public var description: String {
        let out = outputs.isEmpty ? "(no outputs)" : outputs.map(\.description).joined(separator: ", ")
        return inputs.isEmpty ? out : out + "; inputs: " + inputs.map(\.description).joined(separator: ", ")
    }
}

/// Why the route changed, with Apple's meanings (`AVAudioSession.RouteChangeReason`).
public enum RouteChangeReason: UInt, Sendable, Hashable {
    /// Something else about the route changed: the sound server came or went while a card
    /// was reachable (the same hardware, seen another way), or an input that was not in use
    /// left.
    case unknown = 0
    /// A device became available and the route moved to it (headphones plugged in; a new
    /// sink appeared and became the default within the new-device window).
    case newDeviceAvailable = 1
    /// The device in use went away (headphones unplugged; the default sink unloaded; the
    /// sound server died). Apps usually pause here.
    case oldDeviceUnavailable = 2
    /// The session's category changed; reserved for the session layer
    /// (`RouteMonitor.reportCategoryChange()`).
    case categoryChange = 3
    /// The route was changed by a choice: the default sink or the active port switched to
    /// another one that already existed.
    case override = 4
    /// The system woke from sleep. Never reported yet: nothing watches the system's sleep
    /// (logind's `PrepareForSleep`), and the sound server's own changes on resume come as
    /// the other reasons.
    case wakeFromSleep = 6
    /// No route suits the session's category (a recording category with no input). Never
    /// reported yet: a lost input comes as ``oldDeviceUnavailable``.
    case noSuitableRouteForCategory = 7
    /// The devices in use are the same, but their configuration changed: the output's or
    /// an input's channel count or description.
    case routeConfigurationChange = 8
}

/// A route change, the analog of the routeChangeNotification's user info.
public struct RouteChange: Sendable, CustomStringConvertible {
    public let reason: RouteChangeReason
    public let previousRoute: AudioRoute
    public let currentRoute: AudioRoute

    public init(reason: RouteChangeReason, previousRoute: AudioRoute, currentRoute: AudioRoute) {
        self.reason = reason
        self.previousRoute = previousRoute
        self.currentRoute = currentRoute
    }

    public var description: String { "\(reason): \(previousRoute) → \(currentRoute)" }
}

/// Why a `RouteMonitor` could not be set up, or why its sound-server connection failed.
/// `server` is the server string asked for (or a description of the default).
public enum RouteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server string is empty or otherwise unusable.
    case invalidServer(String)
    /// No sound server answered at `server` (only thrown when ALSA fallback is off;
    /// otherwise kept in `RouteMonitor.lastError`).
    case serverUnreachable(server: String, reason: String)
    /// The server was connected and the connection was lost (the server died).
    case connectionLost(server: String, reason: String)
    /// libpulse could not be set up (its main loop or context could not be created or
    /// started).
    case setupFailed(server: String, reason: String)

    public var description: String {
        switch self {
        case .invalidServer(let server):
            "invalid sound server “\(server)”"
        case .serverUnreachable(let server, let reason):
            "no sound server answered at \(server): \(reason)"
        case .connectionLost(let server, let reason):
            "lost the connection to the sound server at \(server): \(reason)"
        case .setupFailed(let server, let reason):
            "cannot set up the connection to the sound server at \(server): \(reason)"
        }
    }
}
