import Dispatch
import FoundationEssentials
import Glibc

/// Calls `handler` (on a Dispatch queue) when one of `signals` arrives, instead of letting
/// it end the process, so that a command can stop cleanly: restore the terminal, release
/// its bus names, flush. Keep the returned sources for as long as the handler should run;
/// cancel them (or drop them) to stop watching.
func onTerminationSignals(
    _ signals: [Int32] = [SIGINT, SIGTERM], _ handler: @escaping @Sendable () -> Void
) -> [DispatchSourceSignal] {
    signals.map { signo in
        signal(signo, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signo)
        source.setEventHandler(handler: handler)
        source.resume()
        return source
    }
}
