internal import CPulse
#if canImport(Glibc)
import Glibc
#endif

/// What ``PulseInput`` and ``PulseOutput`` share of their libpulse set-up: the error text of
/// a context, the proplists they give the server, the question of the server's name, and
/// letting go of a context and its threaded mainloop. Each keeps its own stream callbacks.
enum PulseClient {
    /// libpulse's text for the context's last error.
    static func error(_ context: OpaquePointer?) -> String {
        guard let context else { return "unknown error" }
        return pa_strerror(pa_context_errno(context)).map { String(cString: $0) } ?? "unknown error"
    }

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
        /// The answer, written by the callback under the mainloop's lock, read after it.
        final class Query {
            let mainloop: OpaquePointer
            var answer: String?
            init(mainloop: OpaquePointer) { self.mainloop = mainloop }
        }
        let query = Query(mainloop: mainloop)
        let userdata = Unmanaged.passUnretained(query).toOpaque()
        guard let operation = pa_context_get_server_info(context, { _, info, userdata in
            guard let userdata else { return }
            let query = Unmanaged<Query>.fromOpaque(userdata).takeUnretainedValue()
            if let info = info?.pointee {
                let name = info.server_name.map { String(cString: $0) } ?? "unknown server"
                let version = info.server_version.map { String(cString: $0) } ?? "?"
                query.answer = "\(name) \(version)"
            }
            pa_threaded_mainloop_signal(query.mainloop, 0)
        }, userdata) else { return nil }
        while pa_operation_get_state(operation) == PA_OPERATION_RUNNING, !timedOut(), pa_context_get_state(context) == PA_CONTEXT_READY {
            pa_threaded_mainloop_wait(mainloop)
        }
        // Not answered: the callback must not run later, on a query gone by then.
        if pa_operation_get_state(operation) == PA_OPERATION_RUNNING { pa_operation_cancel(operation) }
        pa_operation_unref(operation)
        return withExtendedLifetime(query) { query.answer }
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
