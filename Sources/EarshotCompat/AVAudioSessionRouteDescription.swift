internal import Earshot

/// The outputs audio goes to now and the inputs a recording would use, as
/// ``AVAudioSession/currentRoute`` and the route-change notification's previous route
/// describe them. A value: it does not follow later changes.
public final class AVAudioSessionRouteDescription: NSObject, @unchecked Sendable {
    /// The inputs, the default one first.
    public let inputs: [AVAudioSessionPortDescription]
    /// The outputs, the one in use first.
    public let outputs: [AVAudioSessionPortDescription]

    init(_ route: AudioRoute) {
        inputs = route.inputs.map(AVAudioSessionPortDescription.init(input:))
        outputs = route.outputs.map(AVAudioSessionPortDescription.init(output:))
    }

    /// The ports, as iOS logs them.
    public override var description: String {
        "<AVAudioSessionRouteDescription: inputs = \(inputs); outputs = \(outputs)>"
    }
}

/// One port of a route: a sound-server sink's active port or source, or an ALSA jack.
/// Immutable (`@unchecked Sendable`: every stored property is a `let` of a `Sendable` type).
public final class AVAudioSessionPortDescription: NSObject, @unchecked Sendable {
    /// What kind of port it is.
    public let portType: AVAudioSession.Port
    /// A human name ("Headphones", "Built-in Audio Analog Stereo").
    public let portName: String
    /// A stable identifier: the sound server's sink or source name (and port).
    public let uid: String
    /// The port's channels, numbered from 1.
    public let channels: [AVAudioSessionChannelDescription]?
    /// Data sources (none on a desktop).
    public let dataSources: [AVAudioSessionDataSourceDescription]? = nil
    /// Whether the hardware does voice-call processing (never, on a desktop).
    public let hasHardwareVoiceCallProcessing = false

    init(output port: AudioPort) {
        portType = switch port.type {
        case .headphones: .headphones
        case .speaker: .builtInSpeaker
        case .hdmi: .HDMI
        case .usb: .usbAudio
        case .bluetooth: .bluetoothA2DP
        case .lineOut: .lineOut
        case .virtual: .virtual
        case .unknown: .unknown
        }
        portName = port.portName
        uid = port.name
        channels = AVAudioSessionChannelDescription.channels(port.channels, of: port.portName, uid: port.name)
    }

    init(input port: AudioInputPort) {
        let name = port.name.lowercased()
        portType = port.isMonitor ? .virtual
            : name.contains("bluez") ? .bluetoothHFP
            : name.contains("usb") ? .usbAudio
            : .builtInMic
        portName = port.portName
        uid = port.name
        channels = AVAudioSessionChannelDescription.channels(port.channels, of: port.portName, uid: port.name)
    }

    /// The port, as iOS logs it.
    public override var description: String {
        "<AVAudioSessionPortDescription: type = \(portType.rawValue); name = \(portName); UID = \(uid)>"
    }
}

/// One channel of a port.
public final class AVAudioSessionChannelDescription: NSObject, @unchecked Sendable {
    /// The channel's name ("Headphones Left").
    public let channelName: String
    /// The ``AVAudioSessionPortDescription/uid`` of the port it belongs to.
    public let owningPortUID: String
    /// The channel's number, from 1.
    public let channelNumber: Int

    init(channelName: String, owningPortUID: String, channelNumber: Int) {
        self.channelName = channelName
        self.owningPortUID = owningPortUID
        self.channelNumber = channelNumber
    }

    /// `count` channels named after the port (Left and Right for two).
    static func channels(_ count: Int, of portName: String, uid: String) -> [AVAudioSessionChannelDescription] {
        (0..<max(count, 0)).map { index in
            let suffix = count == 2 ? (index == 0 ? "Left" : "Right") : "\(index + 1)"
            return AVAudioSessionChannelDescription(channelName: "\(portName) \(suffix)", owningPortUID: uid, channelNumber: index + 1)
        }
    }
}

/// A data source of a port (a microphone's front or back). A desktop's ports have none;
/// the type exists so that code reading ``AVAudioSessionPortDescription/dataSources``
/// compiles.
public final class AVAudioSessionDataSourceDescription: NSObject, @unchecked Sendable {
    /// The data source's identifier.
    public let dataSourceID: NSNumber
    /// The data source's name.
    public let dataSourceName: String

    init(dataSourceID: NSNumber, dataSourceName: String) {
        self.dataSourceID = dataSourceID
        self.dataSourceName = dataSourceName
    }
}
