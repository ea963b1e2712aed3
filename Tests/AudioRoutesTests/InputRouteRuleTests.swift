import Testing

@testable import AudioRoutes

/// The reasons an input change is reported with, on synthetic input lists (default first).
@Suite struct InputRouteRuleTests {
    let monitor = AudioInputPort(name: "out.monitor", portName: "Monitor of Null Output", channels: 2, isMonitor: true)
    let headset = AudioInputPort(name: "headset_mic", portName: "Headset Microphone", channels: 1, isMonitor: false)
    let builtIn = AudioInputPort(name: "builtin_mic", portName: "Internal Microphone", channels: 2, isMonitor: false)

    @Test("no change: no reason")
    func unchanged() {
        #expect(InputRouteRule.reason(from: [monitor, headset], to: [monitor, headset]) == nil)
        #expect(InputRouteRule.reason(from: [], to: []) == nil)
    }

    @Test("a source appearing is newDeviceAvailable, whether or not it became the default")
    func appeared() {
        #expect(InputRouteRule.reason(from: [monitor], to: [monitor, headset]) == .newDeviceAvailable)
        #expect(InputRouteRule.reason(from: [monitor], to: [headset, monitor]) == .newDeviceAvailable)
        #expect(InputRouteRule.reason(from: [], to: [headset]) == .newDeviceAvailable)
    }

    @Test("changes of monitors only (the default monitor following the default sink, the server gone) are no input route change")
    func monitorsOnly() {
        let other = AudioInputPort(name: "other.monitor", portName: "Monitor of Other", channels: 2, isMonitor: true)
        #expect(InputRouteRule.reason(from: [monitor], to: [other]) == nil)
        #expect(InputRouteRule.reason(from: [monitor], to: []) == nil)
        #expect(InputRouteRule.reason(from: [], to: [monitor]) == nil)
        #expect(InputRouteRule.reason(from: [monitor, headset], to: [other, headset]) == nil)
    }

    @Test("the input in use disappearing is oldDeviceUnavailable; another one leaving is unknown")
    func disappeared() {
        #expect(InputRouteRule.reason(from: [headset, monitor], to: [monitor]) == .oldDeviceUnavailable)
        #expect(InputRouteRule.reason(from: [headset], to: []) == .oldDeviceUnavailable)
        #expect(InputRouteRule.reason(from: [monitor, headset], to: [monitor]) == .unknown)
    }

    @Test("the default switching to an input already there is override; a changed description is a configuration change")
    func switched() {
        #expect(InputRouteRule.reason(from: [monitor, builtIn], to: [builtIn, monitor]) == .override)
        #expect(InputRouteRule.reason(from: [builtIn, headset], to: [headset, builtIn]) == .override)
        var renamed = builtIn
        renamed.portName = "Front Microphone"
        #expect(InputRouteRule.reason(from: [builtIn], to: [renamed]) == .routeConfigurationChange)
    }

    @Test("a route's description lists its inputs after its outputs")
    func description() {
        let route = AudioRoute(outputs: [], inputs: [headset])
        #expect(route.description == "(no outputs); inputs: Headset Microphone [1 ch] (headset_mic)")
        #expect(AudioRoute.empty.with(inputs: [headset]).inputs == [headset])
    }
}
