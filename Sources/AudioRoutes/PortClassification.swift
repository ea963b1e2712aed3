// Pure mappings from what the sound server or the ALSA driver says about an output to a
// `PortType`. No I/O: unit-tested directly.

extension AudioPort.PortType {
    /// The type of the output an ALSA jack control reports, from its name (`Headphone Jack`,
    /// `Front Headphone Jack`, `Line Out Jack`, `Speaker Phantom Jack`, `HDMI/DP,pcm=3 Jack`,
    /// `SPDIF Jack`, USB's `Headphone - Output Jack`), or nil when the control is not a jack
    /// or is an input (`Mic Jack`, `Headphone Mic Jack`, `Line Jack`, `… - Input Jack`).
    /// A jack that is an output of no known kind is `.unknown`.
    public init?(jackName: String) {
        var name = jackName.lowercased().trimming(" ")
        guard name.hasSuffix(" jack") || name == "jack" else { return nil }
        name = String(name.dropLast(4)).trimming(" ")
        // USB Audio Class connector controls: "<terminal> - Output Jack" / "- Input Jack".
        if name.hasSuffix("- input") { return nil }
        if name.hasSuffix("- output") { name = String(name.dropLast(8)).trimming(" ") }
        if name.hasSuffix("phantom") { name = String(name.dropLast(7)).trimming(" ") }
        let words = Self.words(name)

        if name.contains("mic") || name.contains("line in") || name.contains("line-in") || words.contains("in")
            || name.contains("input") || name.contains("capture")
        {
            return nil
        }
        if name.contains("headphone") || name.contains("headset") || name.contains("earphone") {
            self = .headphones
        } else if name.contains("hdmi") || name.contains("displayport") || words.contains("dp") {
            self = .hdmi
        } else if name.contains("line out") || name.contains("lineout") || name.contains("line-out") {
            self = .lineOut
        } else if name.contains("spdif") || name.contains("s/pdif") || name.contains("iec958")
            || name.contains("digital") || name.contains("optical")
        {
            self = .lineOut
        } else if name.contains("speaker") {
            self = .speaker
        } else if words.contains("line") {
            // "Line Jack", "Rear Line Jack": line *in* on HDA codecs.
            return nil
        } else {
            self = .unknown
        }
    }

    /// The type of a PulseAudio/PipeWire sink's output, from (in this order) what makes it
    /// virtual, its bus, the port's type (libpulse ≥ 14), the port's name and the sink's form
    /// factor. `properties` is the sink's property list; `driver` the sink's driver
    /// (`module-null-sink.c`); `portName` and `portType` (a `pa_device_port_type` value) the
    /// active port's, when the sink has ports.
    static func pulse(
        properties: [String: String], driver: String?, portName: String?, portType: UInt32?
    ) -> Self {
        let deviceClass = properties["device.class"]?.lowercased() ?? ""
        let factory = properties["factory.name"]?.lowercased() ?? ""
        let bus = properties["device.bus"]?.lowercased() ?? ""
        let api = properties["device.api"]?.lowercased() ?? ""
        let formFactor = properties["device.form_factor"]?.lowercased() ?? ""
        let port = portName?.lowercased() ?? ""

        // Nothing behind it: PulseAudio's null sink (class "abstract"), PipeWire's
        // null-audio-sink (what `pactl load-module module-null-sink` creates there too).
        if deviceClass == "abstract" || driver?.lowercased().contains("null-sink") == true
            || factory.contains("null-audio-sink") || properties["node.virtual"] == "true"
        {
            return .virtual
        }
        // The bus decides first, as on iOS (a USB headset is `.usbAudio`, a Bluetooth one
        // `.bluetoothA2DP`/`HFP`).
        if bus == "bluetooth" || api.hasPrefix("bluez") || properties["api.bluez5.address"] != nil {
            return .bluetooth
        }
        if bus == "usb" { return .usb }

        switch portType {
        case 3, 6, 8: return .headphones  // HEADPHONES, HEADSET, EARPIECE
        case 2, 7: return .speaker  // SPEAKER, HANDSET
        case 10, 11: return .hdmi  // HDMI, TV
        case 4, 9: return .lineOut  // LINE, SPDIF
        case 14: return .usb
        case 15, 17, 18: return .bluetooth  // BLUETOOTH, HANDSFREE, CAR
        default: break
        }

        if port.contains("headphone") || port.contains("headset") || port.contains("earpiece") {
            return .headphones
        }
        if port.contains("speaker") || port.contains("handset") { return .speaker }
        if port.contains("hdmi") || port.contains("displayport") || port.hasPrefix("dp") { return .hdmi }
        if port.contains("lineout") || port.contains("line-out") || port.contains("iec958")
            || port.contains("spdif") || port == "analog-output"
        {
            return .lineOut
        }

        switch formFactor {
        case "headphone", "headset": return .headphones
        case "speaker", "internal": return .speaker
        case "tv": return .hdmi
        default: return .unknown
        }
    }

    private static func words(_ name: String) -> Set<String> {
        Set(name.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init))
    }

    /// A human name for an output of this type (for ALSA jacks, which have none).
    var humanName: String {
        switch self {
        case .headphones: "Headphones"
        case .speaker: "Speaker"
        case .hdmi: "HDMI"
        case .usb: "USB Audio"
        case .bluetooth: "Bluetooth"
        case .lineOut: "Line Out"
        case .virtual: "Virtual Output"
        case .unknown: "Output"
        }
    }
}

extension String {
    fileprivate func trimming(_ set: Character) -> String {
        var slice = Substring(self)
        while slice.first == set { slice.removeFirst() }
        while slice.last == set { slice.removeLast() }
        return String(slice)
    }
}
