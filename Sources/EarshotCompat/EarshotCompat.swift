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

/// Marks the main queue, so that code can tell it runs there even when the queue is not
/// drained by the main thread (after `dispatchMain()`, as Swift's `async` main and the test
/// runner call it, a pool thread drains it).
private let mainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

/// Whether the caller runs on the main thread or in a block of the main queue (`package`:
/// the package's tests check where delegates and handlers run).
package var isOnMainQueue: Bool {
    Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == true
}

/// Runs `work` on the main queue, where iOS calls delegates and handlers: at once when
/// already there, else asynchronously.
func onMainQueue(_ work: @escaping @Sendable () -> Void) {
    if isOnMainQueue {
        work()
    } else {
        DispatchQueue.main.async(execute: work)
    }
}

/// Where notifications are posted when the main queue is drained by a thread other than
/// the main thread (see ``postFromMainQueue(_:)``).
private let notificationQueue = DispatchQueue(label: "EarshotCompat.notifications")

/// Posts a notification as iOS posts its main-thread ones. From the main thread where it
/// drains the main queue (a run loop): observers without a queue run there, and those
/// registered with `queue: .main` run inline. Where a pool thread drains it instead
/// (`dispatchMain()`), Foundation's `NotificationCenter` would deadlock posting from it to
/// an observer registered with `queue: .main` (it adds the block to `OperationQueue.main`
/// and waits for it); the post is made from a serial queue of its own then, after the
/// events before it, and such observers still run on the main queue.
func postFromMainQueue(_ post: @escaping @Sendable () -> Void) {
    DispatchQueue.main.async {
        if Thread.isMainThread {
            post()
        } else {
            notificationQueue.async(execute: post)
        }
    }
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
