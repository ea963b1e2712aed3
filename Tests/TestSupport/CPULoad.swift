import Foundation
import Synchronization

/// Threads that spin until stopped, to load the machine the way a busy desktop does.
public final class CPULoad: Sendable {
    private let running = Atomic<Bool>(true)

    public init(threads: Int) {
        for _ in 0..<threads {
            let thread = Thread { [self] in
                var x: UInt64 = 1
                while running.load(ordering: .relaxed) {
                    for _ in 0..<10_000 { x = x &* 6364136223846793005 &+ 1 }
                }
                if x == 0 { print(x) }  // keeps the loop from being optimized away
            }
            thread.start()
        }
    }

    /// Ends the threads (each holds the load until then).
    public func stop() { running.store(false, ordering: .relaxed) }
}
