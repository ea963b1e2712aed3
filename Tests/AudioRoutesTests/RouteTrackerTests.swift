import Testing

@testable import AudioRoutes

/// The reason rules on synthetic snapshots, including hardware cases (ports, jacks) that
/// null sinks cannot produce.
@Suite struct RouteTrackerTests {
    let t0 = ContinuousClock.now
    let server = RouteMonitor.Backend.pulseAudio("pulseaudio")

    func null(_ name: String, channels: Int = 2) -> SinkSnapshot {
        SinkSnapshot(name: name, description: "Null Output", channels: channels, type: .virtual, ports: [], activePort: nil)
    }

    /// An analog card with speaker and headphone ports.
    func analog(active: String, headphones: PortAvailability, speaker: PortAvailability = .unknown) -> SinkSnapshot {
        SinkSnapshot(
            name: "alsa_output.pci.analog-stereo", description: "Built-in Audio", channels: 2, type: .unknown,
            ports: [
                PortSnapshot(name: "analog-output-speaker", description: "Speakers", availability: speaker, type: .speaker),
                PortSnapshot(
                    name: "analog-output-headphones", description: "Headphones", availability: headphones,
                    type: .headphones),
            ],
            activePort: active)
    }

    func snapshot(_ defaultSink: String?, _ sinks: [SinkSnapshot], at seconds: Double) -> DeviceSnapshot {
        DeviceSnapshot(
            backend: sinks.isEmpty ? .none : server, defaultSink: defaultSink, sinks: sinks,
            time: t0 + .milliseconds(Int(seconds * 1000)))
    }

    @Test func theFirstSnapshotIsTheBaseline() {
        var tracker = RouteTracker()
        #expect(tracker.update(snapshot("a", [null("a")], at: 0)) == nil)
        #expect(tracker.route.outputs == [AudioPort(name: "a", portName: "Null Output", type: .virtual, channels: 2)])
    }

    @Test func aSinkAddedThatDoesNotBecomeTheDefaultChangesNothing() {
        var tracker = RouteTracker()
        _ = tracker.update(snapshot("a", [null("a")], at: 0))
        #expect(tracker.update(snapshot("a", [null("a"), null("b")], at: 1)) == nil)
        #expect(tracker.update(snapshot("a", [null("a")], at: 2)) == nil)
    }

    @Test func aNewSinkThatBecomesTheDefaultInTheSameBurstIsANewDevice() {
        var tracker = RouteTracker()
        _ = tracker.update(snapshot("a", [null("a")], at: 0))
        let change = tracker.update(snapshot("b", [null("a"), null("b")], at: 5))
        #expect(change?.reason == .newDeviceAvailable)
        #expect(change?.previousRoute.outputs.first?.name == "a")
        #expect(change?.currentRoute.outputs.first?.name == "b")
    }

    @Test func aNewSinkMadeTheDefaultWithinTheWindowIsANewDevice() {
        var tracker = RouteTracker()
        _ = tracker.update(snapshot("a", [null("a")], at: 0))
        #expect(tracker.update(snapshot("a", [null("a"), null("b")], at: 5)) == nil)
        #expect(tracker.update(snapshot("b", [null("a"), null("b")], at: 5.9))?.reason == .newDeviceAvailable)
    }

    @Test func aSinkMadeTheDefaultAfterTheWindowIsAnOverride() {
        var tracker = RouteTracker()
        _ = tracker.update(snapshot("a", [null("a")], at: 0))
        _ = tracker.update(snapshot("a", [null("a"), null("b")], at: 5))
        #expect(tracker.update(snapshot("b", [null("a"), null("b")], at: 6.2))?.reason == .override)
        #expect(tracker.update(snapshot("a", [null("a"), null("b")], at: 7))?.reason == .override)
    }

    @Test func sinksPresentAtTheStartAreNotNew() {
        var tracker = RouteTracker()
        _ = tracker.update(snapshot("a", [null("a"), null("b")], at: 0))
        #expect(tracker.update(snapshot("b", [null("a"), null("b")], at: 0.1))?.reason == .override)
    }

    @Test func theDefaultSinkRemovedIsAnOldDeviceUnavailable() {
        var tracker = RouteTracker()
        _ = tracker.update(snapshot("b", [null("a"), null("b")], at: 0))
        let change = tracker.update(snapshot("a", [null("a")], at: 1))
        #expect(change?.reason == .oldDeviceUnavailable)
        #expect(change?.currentRoute.outputs.first?.name == "a")
        // And with nothing left.
        #expect(tracker.update(snapshot(nil, [], at: 2))?.reason == .oldDeviceUnavailable)
        #expect(tracker.route == .empty)
    }

    @Test func theServerGoneAndBack() {
        var tracker = RouteTracker()
        _ = tracker.update(snapshot("a", [null("a")], at: 0))
        let gone = tracker.update(.empty(at: t0 + .seconds(1)))
        #expect(gone?.reason == .oldDeviceUnavailable)
        #expect(gone?.currentRoute == .empty)
        let back = tracker.update(snapshot("a", [null("a")], at: 3))
        #expect(back?.reason == .newDeviceAvailable)
    }

    @Test func headphonesUnpluggedTheServerMovesToTheSpeaker() {
        var tracker = RouteTracker()
        _ = tracker.update(snapshot("alsa_output.pci.analog-stereo", [analog(active: "analog-output-headphones", headphones: .yes)], at: 0))
        let change = tracker.update(snapshot(
            "alsa_output.pci.analog-stereo", [analog(active: "analog-output-speaker", headphones: .no)], at: 10))
        #expect(change?.reason == .oldDeviceUnavailable)
        #expect(change?.previousRoute.outputs.map(\.type) == [.headphones])
        #expect(change?.currentRoute.outputs.map(\.type) == [.speaker])
    }

    @Test func headphonesPluggedTheServerMovesToThem() {
        var tracker = RouteTracker()
        _ = tracker.update(snapshot("alsa_output.pci.analog-stereo", [analog(active: "analog-output-speaker", headphones: .no)], at: 0))
        // The port becomes available (card event), then active (switch-on-port-available).
        #expect(tracker.update(snapshot(
            "alsa_output.pci.analog-stereo", [analog(active: "analog-output-speaker", headphones: .yes)], at: 10)) == nil)
        let change = tracker.update(snapshot(
            "alsa_output.pci.analog-stereo", [analog(active: "analog-output-headphones", headphones: .yes)], at: 10.05))
        #expect(change?.reason == .newDeviceAvailable)
    }

    @Test func choosingAnotherAvailablePortIsAnOverride() {
        var tracker = RouteTracker()
        _ = tracker.update(snapshot("alsa_output.pci.analog-stereo", [analog(active: "analog-output-headphones", headphones: .yes)], at: 0))
        let change = tracker.update(snapshot(
            "alsa_output.pci.analog-stereo", [analog(active: "analog-output-speaker", headphones: .yes)], at: 10))
        #expect(change?.reason == .override)
    }

    @Test func anActivePortUnpluggedWithNothingToSwitchToEmptiesTheRoute() {
        var tracker = RouteTracker()
        _ = tracker.update(snapshot("alsa_output.pci.analog-stereo", [analog(active: "analog-output-headphones", headphones: .yes)], at: 0))
        let change = tracker.update(snapshot(
            "alsa_output.pci.analog-stereo", [analog(active: "analog-output-headphones", headphones: .no)], at: 10))
        #expect(change?.reason == .oldDeviceUnavailable)
        #expect(change?.currentRoute == .empty)
        let replugged = tracker.update(snapshot(
            "alsa_output.pci.analog-stereo", [analog(active: "analog-output-headphones", headphones: .yes)], at: 20))
        #expect(replugged?.reason == .newDeviceAvailable)
    }

    @Test func aChannelCountChangeIsAConfigurationChange() {
        var tracker = RouteTracker()
        _ = tracker.update(snapshot("a", [null("a")], at: 0))
        #expect(tracker.update(snapshot("a", [null("a", channels: 6)], at: 1))?.reason == .routeConfigurationChange)
    }

    @Test func volumeOnlyEventsChangeNothing() {
        var tracker = RouteTracker()
        _ = tracker.update(snapshot("a", [null("a")], at: 0))
        for step in 1...5 { #expect(tracker.update(snapshot("a", [null("a")], at: Double(step))) == nil) }
    }

    @Test func aServerAppearingWhileOnALSAIsUnknown() {
        var tracker = RouteTracker()
        let card = ALSACard(
            index: 0, id: "PCH", name: "HDA Intel PCH", driver: "HDA-Intel",
            jacks: [.init(name: "Headphone Jack", plugged: true)])
        _ = tracker.update(ALSAJackRoutes.snapshot(cards: [card], time: t0))
        let change = tracker.update(snapshot(
            "alsa_output.pci.analog-stereo", [analog(active: "analog-output-headphones", headphones: .yes)], at: 1))
        #expect(change?.reason == .unknown)
    }
}
