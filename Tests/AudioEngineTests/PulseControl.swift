import CPulse
import Foundation
import TestSupport

/// What `pactl` 16 cannot do and `pacmd` cannot reach (it needs the daemon's pid file, which
/// the harness's server does not write): kill a sink input, as a desktop's volume control or
/// a policy module does, through libpulse's own call.
enum PulseControl {
    /// Asks the server `PULSE_SERVER` names to remove sink input `index`; throws with the
    /// server's reason.
    static func killSinkInput(_ index: UInt32) throws {
        guard let mainloop = pa_mainloop_new() else { throw TestFailure("pa_mainloop_new failed") }
        defer { pa_mainloop_free(mainloop) }
        guard let context = pa_context_new(pa_mainloop_get_api(mainloop), "earshot-tests") else {
            throw TestFailure("pa_context_new failed")
        }
        defer {
            pa_context_disconnect(context)
            pa_context_unref(context)
        }
        guard pa_context_connect(context, nil, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0 else {
            throw TestFailure("cannot connect: \(String(cString: pa_strerror(pa_context_errno(context))))")
        }
        let deadline = Date().addingTimeInterval(5)
        func iterate(until done: () -> Bool) throws {
            while !done() {
                guard Date() < deadline else { throw TestFailure("the server did not answer") }
                let state = pa_context_get_state(context)
                if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED {
                    throw TestFailure("connection failed: \(String(cString: pa_strerror(pa_context_errno(context))))")
                }
                pa_mainloop_iterate(mainloop, 1, nil)
            }
        }
        try iterate { pa_context_get_state(context) == PA_CONTEXT_READY }
        let result = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        defer { result.deallocate() }
        result.pointee = -1
        guard let operation = pa_context_kill_sink_input(context, index, { _, success, userdata in
            userdata?.assumingMemoryBound(to: Int32.self).pointee = success
        }, result) else { throw TestFailure("pa_context_kill_sink_input failed") }
        defer { pa_operation_unref(operation) }
        try iterate { pa_operation_get_state(operation) != PA_OPERATION_RUNNING }
        guard result.pointee == 1 else {
            throw TestFailure("the server refused to kill sink input \(index): \(String(cString: pa_strerror(pa_context_errno(context))))")
        }
    }
}
