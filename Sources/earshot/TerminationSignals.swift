import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// Calls `handler` (on a Dispatch queue) when one of `signals` arrives, instead of letting
/// it end the process, so that a command can stop cleanly: restore the terminal, release
/// its bus names, flush. Keep the returned sources for as long as the handler should run;
/// cancel them (or drop them) to stop watching.
///
/// Returns once every source is registered with the kernel, so call it before a command
/// says it is ready ("serving …", "published …"): a source registers asynchronously, and
/// until it has, the signal is ignored (`SIG_IGN`, which its registration replaces) and a
/// SIGTERM sent in between is lost. `earshot daemon` announced itself first, and a SIGTERM
/// sent right after the announcement was lost once in a loaded CI run: the daemon ran on.
/// A registration that does not come within `registrationTimeout` seconds (it came at once
/// in every run here) is said on standard error, and the command goes on rather than hang.
func onTerminationSignals(
    _ signals: [Int32] = [SIGINT, SIGTERM], registrationTimeout: Double = 2, _ handler: @escaping @Sendable () -> Void
) async -> [DispatchSourceSignal] {
    let sources = signals.map { DispatchSource.makeSignalSource(signal: $0) }
    for (signo, source) in zip(signals, sources) {
        signal(signo, SIG_IGN)
        source.setEventHandler(handler: handler)
        // Resumed once: by the registration or by the timeout, whichever comes first. The
        // timeout is a timer source, cancelled at the registration: unlike `asyncAfter`, a
        // cancelled source never fires, so a command that started well wakes for nothing.
        let waiting = Mutex<CheckedContinuation<Bool, Never>?>(nil)
        let registered = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            waiting.withLock { $0 = continuation }
            let timeout = DispatchSource.makeTimerSource()
            timeout.setEventHandler { waiting.withLock { $0.take() }?.resume(returning: false) }
            timeout.schedule(deadline: .now() + registrationTimeout)
            source.setRegistrationHandler {
                timeout.cancel()
                waiting.withLock { $0.take() }?.resume(returning: true)
            }
            timeout.resume()
            source.resume()
        }
        if !registered {
            let name = strsignal(signo).map { String(cString: $0) } ?? "signal \(signo)"
            note("earshot: \(name) (\(signo)) is not watched after \(registrationTimeout) s (Dispatch has not registered its "
                 + "source); until it is, that signal is ignored")
        }
    }
    return sources
}
