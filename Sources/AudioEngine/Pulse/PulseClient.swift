internal import CPulse
internal import PulseSupport
#if canImport(Glibc)
import Glibc
#endif

/// What the engine's libpulse clients share beyond PulseSupport's mainloop and context: the
/// proplists they give the server (from the engine's stream identity), and, for
/// ``PulseOutput``, which holds raw libpulse pointers, PulseSupport's error text and server
/// name for those, and letting go of a context and its threaded mainloop.
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

    /// “pulseaudio 16.1” or “PulseAudio (on PipeWire 0.3.65) 15.0.0”, asked of the server; nil
    /// when it does not answer before `timedOut` says so or the context fails. With the
    /// mainloop's lock held, once the context is ready (the wait releases the lock).
    static func serverName(_ context: OpaquePointer, mainloop: OpaquePointer, timedOut: () -> Bool) -> String? {
        PulseContext.serverName(context, mainloop: mainloop, timedOut: timedOut)
    }

    /// The default sink's format (see `PulseContext.defaultSinkFormat`), or nil.
    static func defaultSinkFormat(_ context: OpaquePointer, mainloop: OpaquePointer, timedOut: () -> Bool) -> SinkFormat? {
        PulseContext.defaultSinkFormat(context, mainloop: mainloop, timedOut: timedOut)
    }

    /// With the mainloop's lock held, after the stream (if any) was released: disconnects and
    /// releases `context`, unlocks, stops libpulse's thread and frees the mainloop.
    static func release(context: OpaquePointer, mainloop: OpaquePointer) {
        pa_context_set_state_callback(context, nil, nil)
        pa_context_disconnect(context)
        pa_context_unref(context)
        pa_threaded_mainloop_unlock(mainloop)
        pa_threaded_mainloop_stop(mainloop)
        pa_threaded_mainloop_free(mainloop)
    }
}
