import Dispatch
import FoundationEssentials
import Glibc

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
func onTerminationSignals(
    _ signals: [Int32] = [SIGINT, SIGTERM], _ handler: @escaping @Sendable () -> Void
) async -> [DispatchSourceSignal] {
    let sources = signals.map { DispatchSource.makeSignalSource(signal: $0) }
    for (signo, source) in zip(signals, sources) {
        signal(signo, SIG_IGN)
        source.setEventHandler(handler: handler)
        await withCheckedContinuation { (registered: CheckedContinuation<Void, Never>) in
            source.setRegistrationHandler { registered.resume() }
            source.resume()
        }
    }
    return sources
}
