/// Why the inputs changed, in the terms of an output route change (Apple reports inputs and
/// outputs in the same `routeChangeNotification`). Pure: the inputs before and after, the
/// default input first in each (as ``InputMonitor`` lists them).
///
/// - the input in use (the default) is gone → `oldDeviceUnavailable` (a headset microphone
///   unplugged, the sound server gone);
/// - otherwise, an input appeared that was not there → `newDeviceAvailable` (a headset
///   microphone plugged, whether or not the server made it the default);
/// - otherwise, the default switched to an input that was already there → `override`;
/// - otherwise, an input left that was not in use, or one changed its description or channel
///   count → `unknown`;
/// - nothing changed → nil (no notification).
public enum InputRouteRule {
    /// The reason for going from `old` to `new`, or nil when they are the same.
    public static func reason(from old: [AudioInputPort], to new: [AudioInputPort]) -> RouteChangeReason? {
        guard old != new else { return nil }
        let oldNames = Set(old.map(\.name))
        let newNames = Set(new.map(\.name))
        if let inUse = old.first, !newNames.contains(inUse.name) { return .oldDeviceUnavailable }
        if !newNames.subtracting(oldNames).isEmpty { return .newDeviceAvailable }
        if old.first?.name != new.first?.name { return .override }
        return .unknown
    }
}
