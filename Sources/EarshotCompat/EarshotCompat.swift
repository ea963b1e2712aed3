// EarshotCompat: Apple's audio names and shapes over Earshot.
//
// An iOS app's audio code ports to Linux by its import block alone:
//
//     #if canImport(AVFoundation)
//     import AVFoundation
//     import MediaPlayer
//     #else
//     import EarshotCompat
//     #endif
//
// The module re-exports Foundation, as AVFoundation does, so that `URL`, `Data`,
// `NSObject` and `NotificationCenter` resolve. It does not re-export Earshot: Earshot's
// unprefixed names (`AudioPlayer`, `AudioSession`, …) stay out of the app's namespace, so
// that an app's own `AudioPlayer` type keeps working. Every type here wraps Earshot's, which
// does the work; where the two differ, the declaration's documentation says how.

@_exported import Foundation
import Dispatch
import Synchronization
internal import Earshot

/// The result code of the C-shaped Audio Toolbox functions (`AudioServices…`): 0 for
/// success, a negative or four-character code otherwise (the Mac OS `OSStatus`).
public typealias OSStatus = Int32

/// A file URL, as the C-shaped Audio Toolbox functions take it. On Linux there is no Core
/// Foundation bridging: `CFURL` is `URL`, so that iOS's `url as CFURL` compiles unchanged.
public typealias CFURL = URL

// MARK: Helpers

/// A value that is only touched under its lock: the compat classes' mutable state (the
/// classes are `NSObject` subclasses, as Apple's are, and `@unchecked Sendable` because
/// every stored `var` they have lives in one of these).
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, under the lock.
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// A value carried across threads that the type system cannot prove safe: a non-`Sendable`
/// closure or object of the app's that is only ever used on the main queue, or once, by
/// the thread that receives it (as iOS calls the app's delegates and handlers).
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Runs `work` on the main queue, where iOS calls delegates and posts the main-thread
/// notifications: at once when already on the main thread, else asynchronously.
func onMainQueue(_ work: @escaping @Sendable () -> Void) {
    if Thread.isMainThread {
        work()
    } else {
        DispatchQueue.main.async(execute: work)
    }
}

/// Runs an `async` Earshot call to its end and returns its result, blocking the calling
/// thread: the synchronous `throws` shape of Apple's methods over Earshot's `async` ones.
///
/// The work runs in a detached task on Swift's global executor; the caller waits on a
/// semaphore. It cannot deadlock on the work itself: Earshot's session calls run on their
/// own path task and the bus's thread, never on the main queue, which the caller may hold
/// (as iOS code calls `setCategory` on the main thread). A caller that is itself a task of
/// the global executor blocks one of its threads for the call's length (a round trip to the
/// arbiter); as long as one thread of the executor stays free, the work completes.
func waitFor<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Locked<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await work())
        } catch {
            outcome = .failure(error)
        }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}

/// A number from a dictionary value as iOS code stores it: `NSNumber`, or a Swift
/// `Double`, `Float`, `Int` or `UInt` (which iOS bridges to `NSNumber`).
func number(_ value: Any?) -> Double? {
    switch value {
    case let value as Double: value
    case let value as Float: Double(value)
    case let value as Int: Double(value)
    case let value as UInt: Double(value)
    case let value as NSNumber: value.doubleValue
    default: nil
    }
}
