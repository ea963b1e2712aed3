/// Why the inputs changed, in the terms of an output route change (Apple reports inputs and
/// outputs in the same `routeChangeNotification`). Pure: the inputs before and after, the
/// default input first in each (as ``InputMonitor`` lists them).
///
/// Only sources that are not monitors count: a monitor is in the list while it is the default
/// source, and the default monitor follows the default sink, whose changes are already output
/// route changes (reported once, by the output side).
///
/// - the input in use (the default, not a monitor) is gone → `oldDeviceUnavailable` (a
///   headset microphone unplugged);
/// - otherwise, an input appeared that was not there → `newDeviceAvailable` (a headset
///   microphone plugged, whether or not the server made it the default);
/// - otherwise, the default switched, to or from an input → `override`;
/// - otherwise, an input left that was not in use, or one changed its description or channel
///   count → `unknown`;
/// - nothing changed but monitors → nil (no notification).
public enum InputRouteRule {
    /// The reason for going from `old` to `new`, or nil when no input changed.
    public static func reason(from old: [AudioInputPort], to new: [AudioInputPort]) -> RouteChangeReason? {
        let oldInputs = old.filter { !$0.isMonitor }
        let newInputs = new.filter { !$0.isMonitor }
        let newNames = Set(newInputs.map(\.name))
        let oldNames = Set(oldInputs.map(\.name))
        if let inUse = old.first, !inUse.isMonitor, !newNames.contains(inUse.name) { return .oldDeviceUnavailable }
        if !newNames.subtracting(oldNames).isEmpty { return .newDeviceAvailable }
        let oldDefault = old.first
        let newDefault = new.first
        if oldDefault?.name != newDefault?.name, oldDefault?.isMonitor == false || newDefault?.isMonitor == false { return .override }
        guard oldInputs != newInputs else { return nil }
        return Set(oldInputs.map(\.name)) == newNames ? .routeConfigurationChange : .unknown
    }
}
