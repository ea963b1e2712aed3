internal import CPulse
internal import PulseSupport
#if canImport(Glibc)
import Glibc
#endif

/// What the engine's libpulse clients share beyond PulseSupport's mainloop and context: the
/// proplists they give the server (from the engine's stream identity), and libpulse's error
/// text for a raw context pointer.
enum PulseClient {
    /// libpulse's text for the context's last error.
    static func error(_ context: OpaquePointer?) -> String { PulseContext.errorText(of: context) }

    /// The proplist for a context (`mediaName` nil: the application's keys) or a stream (the
    /// application's keys, which a stream's own list wins over, plus its role and `mediaName`).
    /// The caller frees it.
    static func properties(_ identity: AudioEngine.StreamIdentity, mediaName: String?) -> OpaquePointer {
        let list = pa_proplist_new()!
        func set(_ key: String, _ value: String?) {
            guard let value, !value.isEmpty else { return }
            _ = pa_proplist_sets(list, key, value)
        }
        set(PA_PROP_APPLICATION_NAME, identity.applicationName)
        set(PA_PROP_APPLICATION_ID, identity.applicationID)
        set(PA_PROP_APPLICATION_ICON_NAME, identity.iconName)
        set(PA_PROP_APPLICATION_PROCESS_ID, String(getpid()))
        set(PA_PROP_APPLICATION_PROCESS_BINARY, AudioEngine.StreamIdentity.programName)
        if let mediaName {
            set(PA_PROP_MEDIA_ROLE, identity.role.rawValue)
            set(PA_PROP_MEDIA_NAME, mediaName)
        }
        return list
    }
}
