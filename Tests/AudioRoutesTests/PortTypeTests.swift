import Testing

@testable import AudioRoutes

@Suite struct JackNameTests {
    @Test(arguments: [
        ("Headphone Jack", AudioPort.PortType.headphones),
        ("Front Headphone Jack", .headphones),
        ("Dock Headphone Jack", .headphones),
        ("Headset Jack", .headphones),
        ("Headphone - Output Jack", .headphones),
        ("Line Out Jack", .lineOut),
        ("Line Out CLFE Jack", .lineOut),
        ("Front Line Out Jack", .lineOut),
        ("SPDIF Jack", .lineOut),
        ("SPDIF Phantom Jack", .lineOut),
        ("Speaker Phantom Jack", .speaker),
        ("Speaker Jack", .speaker),
        ("Speaker - Output Jack", .speaker),
        ("HDMI/DP,pcm=3 Jack", .hdmi),
        ("HDMI/DP,pcm=7 Jack", .hdmi),
        ("DP,pcm=8 Jack", .hdmi),
        ("HDMI Jack", .hdmi),
        ("Some Output Jack", .unknown),
    ])
    func outputJacks(name: String, type: AudioPort.PortType) {
        #expect(AudioPort.PortType(jackName: name) == type)
    }

    @Test(arguments: [
        "Mic Jack", "Front Mic Jack", "Rear Mic Jack", "Headset Mic Jack", "Headphone Mic Jack",
        "Internal Mic Phantom Jack", "Dock Mic Jack", "Line Jack", "Rear Line Jack", "Line In Jack",
        "Microphone - Input Jack", "SPDIF In Jack",
        // Not jacks at all.
        "Master Playback Volume", "Headphone Playback Switch", "PCM",
    ])
    func inputsAndOtherControlsAreNotOutputs(name: String) {
        #expect(AudioPort.PortType(jackName: name) == nil)
    }
}

@Suite struct PulsePortTypeTests {
    @Test func nullSinksAreVirtual() {
        let props = ["device.description": "Null Output", "device.class": "abstract", "device.icon_name": "audio-card"]
        #expect(AudioPort.PortType.pulse(properties: props, driver: "module-null-sink.c", portName: nil, portType: nil)
            == .virtual)
        // PipeWire's null-audio-sink.
        #expect(AudioPort.PortType.pulse(
            properties: ["factory.name": "support.null-audio-sink", "media.class": "Audio/Sink"],
            driver: "PipeWire", portName: nil, portType: nil) == .virtual)
    }

    @Test func analogPortsByName() {
        let props = ["device.class": "sound", "device.bus": "pci", "device.api": "alsa"]
        func type(_ port: String) -> AudioPort.PortType {
            .pulse(properties: props, driver: "module-alsa-card.c", portName: port, portType: 0)
        }
        #expect(type("analog-output-headphones") == .headphones)
        #expect(type("analog-output-speaker") == .speaker)
        #expect(type("analog-output-lineout") == .lineOut)
        #expect(type("analog-output") == .lineOut)
        #expect(type("hdmi-output-0") == .hdmi)
        #expect(type("iec958-stereo-output") == .lineOut)
        #expect(type("mystery") == .unknown)
    }

    @Test func portTypeFieldWinsOverName() {
        // pa_device_port_type: 3 headphones, 2 speaker, 10 HDMI, 4 line, 9 S/PDIF.
        let props = ["device.class": "sound", "device.bus": "pci"]
        #expect(AudioPort.PortType.pulse(properties: props, driver: nil, portName: "x", portType: 3) == .headphones)
        #expect(AudioPort.PortType.pulse(properties: props, driver: nil, portName: "x", portType: 2) == .speaker)
        #expect(AudioPort.PortType.pulse(properties: props, driver: nil, portName: "x", portType: 10) == .hdmi)
        #expect(AudioPort.PortType.pulse(properties: props, driver: nil, portName: "x", portType: 9) == .lineOut)
    }

    @Test func busDecidesFirst() {
        #expect(AudioPort.PortType.pulse(
            properties: ["device.bus": "usb", "device.form_factor": "headset"], driver: nil,
            portName: "analog-output-headphones", portType: 3) == .usb)
        #expect(AudioPort.PortType.pulse(
            properties: ["device.bus": "bluetooth", "device.form_factor": "headphone"], driver: nil,
            portName: "headphone-output", portType: 3) == .bluetooth)
        // PipeWire's Bluetooth nodes.
        #expect(AudioPort.PortType.pulse(
            properties: ["device.api": "bluez5", "api.bluez5.address": "00:11:22:33:44:55"], driver: nil,
            portName: nil, portType: nil) == .bluetooth)
    }

    @Test func formFactorAsLastResort() {
        #expect(AudioPort.PortType.pulse(properties: ["device.form_factor": "headphone"], driver: nil, portName: nil, portType: nil)
            == .headphones)
        #expect(AudioPort.PortType.pulse(properties: ["device.form_factor": "internal"], driver: nil, portName: nil, portType: nil)
            == .speaker)
        #expect(AudioPort.PortType.pulse(properties: [:], driver: nil, portName: nil, portType: nil) == .unknown)
    }
}

@Suite struct ALSAJackRouteTests {
    let now = ContinuousClock.now

    func laptop(headphones plugged: Bool) -> ALSACard {
        ALSACard(
            index: 0, id: "PCH", name: "HDA Intel PCH", driver: "HDA-Intel",
            jacks: [.init(name: "Headphone Jack", plugged: plugged)])
    }

    @Test func headphonesPluggedIntoALaptop() {
        let route = ALSAJackRoutes.snapshot(cards: [laptop(headphones: true)], time: now).resolved.route
        #expect(route.outputs == [AudioPort(name: "hw:CARD=PCH:Headphone Jack", portName: "Headphone", type: .headphones, channels: 2)])
    }

    @Test func aLaptopWithoutHeadphonesPlaysOnItsSpeaker() {
        let snapshot = ALSAJackRoutes.snapshot(cards: [laptop(headphones: false)], time: now)
        #expect(snapshot.backend == .alsaJacks)
        #expect(snapshot.resolved.route.outputs.map(\.type) == [.speaker])
    }

    @Test func anHDMICardWithoutAMonitorIsSkippedForTheDefault() {
        let hdmi = ALSACard(
            index: 0, id: "HDMI", name: "HDA Intel HDMI", driver: "HDA-Intel",
            jacks: [.init(name: "HDMI/DP,pcm=3 Jack", plugged: false), .init(name: "HDMI/DP,pcm=7 Jack", plugged: false)])
        let desktop = ALSACard(
            index: 1, id: "PCH", name: "HDA Intel PCH", driver: "HDA-Intel",
            jacks: [
                .init(name: "Front Headphone Jack", plugged: false), .init(name: "Line Out Jack", plugged: true),
                .init(name: "Mic Jack", plugged: true),
            ])
        let snapshot = ALSAJackRoutes.snapshot(cards: [hdmi, desktop], time: now)
        #expect(snapshot.defaultSink == "hw:CARD=PCH")
        #expect(snapshot.resolved.route.outputs.map(\.type) == [.lineOut])
        // Only the HDMI card, no monitor: nowhere to play.
        #expect(ALSAJackRoutes.snapshot(cards: [hdmi], time: now).resolved.route == .empty)
    }

    @Test func aUSBCardWithoutJacks() {
        let usb = ALSACard(index: 2, id: "Device", name: "USB Audio Device", driver: "USB-Audio", jacks: [])
        let route = ALSAJackRoutes.snapshot(cards: [usb], time: now).resolved.route
        #expect(route.outputs == [AudioPort(name: "hw:CARD=Device", portName: "USB Audio Device", type: .usb, channels: 2)])
    }

    @Test func noCardsIsNoBackend() {
        let snapshot = ALSAJackRoutes.snapshot(cards: [], time: now)
        #expect(snapshot.backend == .none)
        #expect(snapshot.resolved.route == .empty)
    }

    @Test func unpluggingHeadphonesIsOldDeviceUnavailablePluggingIsNewDevice() {
        var tracker = RouteTracker()
        #expect(tracker.update(ALSAJackRoutes.snapshot(cards: [laptop(headphones: true)], time: now)) == nil)
        let unplugged = tracker.update(
            ALSAJackRoutes.snapshot(cards: [laptop(headphones: false)], time: now + .seconds(5)))
        #expect(unplugged?.reason == .oldDeviceUnavailable)
        #expect(unplugged?.currentRoute.outputs.map(\.type) == [.speaker])
        let plugged = tracker.update(
            ALSAJackRoutes.snapshot(cards: [laptop(headphones: true)], time: now + .seconds(10)))
        #expect(plugged?.reason == .newDeviceAvailable)
        #expect(plugged?.currentRoute.outputs.map(\.type) == [.headphones])
    }
}
