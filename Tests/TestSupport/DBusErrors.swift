import DBus

/// The D-Bus error name `body` throws, or nil when it succeeds; a non-D-Bus error comes
/// back as its description, so an unexpected kind of failure shows in the expectation.
public func dbusErrorName(_ body: () async throws -> Void) async -> String? {
    do {
        try await body()
        return nil
    } catch let error as DBusError {
        return error.name
    } catch {
        return "\(error)"
    }
}
