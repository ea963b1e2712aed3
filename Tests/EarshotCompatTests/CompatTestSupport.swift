// What the checks need from Earshot itself: events a bus and a sound server would cause,
// private centers, sessions on a private bus. Not a ported listing: it imports Earshot, and
// the listing files, which import only EarshotCompat, still see none of Earshot's names.

import AudioEngine
import Earshot
import EarshotCompat
import Foundation
import Synchronization
import Testing
import TestSupport

enum CompatTest {
    /// How many times the compat centers asked for the app to be published on MPRIS (the
    /// action counts instead of making the shared session, which publishes on the real
    /// session bus).
    static let publications = Atomic<Int>(0)

    /// Replaces the MPRIS publication before any check triggers it; once per process.
    private static let preparation: Void = {
        EarshotCompat.RemoteControlPublication.setPublishAction { publications.add(1, ordering: .relaxed) }
    }()

    /// Call first in every check that touches a compat center or session.
    static func prepare() { _ = preparation }

    /// Posts `notification` as the process's Earshot session would (an interruption, a route
    /// change, …), without a bus or a sound server.
    static func simulate(_ notification: Earshot.AudioSession.Notification) {
        Earshot.AudioSession.shared.post(notification)
    }

    /// An interruption of the process's session begins (the screen locked).
    static func interruptionBegins() { simulate(.interruption(.began(reason: .screenLocked))) }
    /// The output the session played to went away: an interruption begins for that reason.
    static func routeDisconnectionInterrupts() { simulate(.interruption(.began(reason: .routeDisconnected))) }
    /// The interruption ends, with or without `shouldResume`.
    static func interruptionEnds(shouldResume: Bool) { simulate(.interruption(.ended(shouldResume: shouldResume))) }
    /// Headphones were unplugged: the route went from headphones to speakers.
    static func headphonesUnplugged() {
        simulate(.routeChange(Earshot.AudioSession.RouteChange(reason: .oldDeviceUnavailable, previousRoute: route(.headphones, name: "Headphones"),
                                          currentRoute: route(.speaker, name: "Speakers"))))
    }
    /// Another app started (true) or stopped (false) audio that secondary audio gives way to.
    static func secondaryHint(_ shouldSilence: Bool) { simulate(.silenceSecondaryAudioHint(shouldSilence: shouldSilence)) }
    /// The arbiter changed hosts, or the sound server came back.
    static func mediaServicesReset() { simulate(.mediaServicesWereReset) }

    /// A route with one output of `type`.
    static func route(_ type: AudioPort.PortType, name: String) -> AudioRoute {
        AudioRoute(outputs: [AudioPort(name: "sink.\(name)", portName: name, type: type, channels: 2)])
    }

    /// A compat session over an Earshot session on `address`, with an engine of its own
    /// (whose threads sleep: nothing plays).
    static func session(on address: String, name: String) -> (AVAudioSession, Earshot.AudioSession) {
        let session = Earshot.AudioSession(appName: name, bus: .address(address), engine: AudioEngine())
        return (AVAudioSession(session: session), session)
    }

    /// A compat command center over an Earshot center of its own.
    static func commandCenter() -> (MPRemoteCommandCenter, RemoteCommandCenter) {
        let commands = RemoteCommandCenter()
        return (MPRemoteCommandCenter(commands: commands), commands)
    }

    /// A compat now-playing center over an Earshot center of its own.
    static func nowPlayingCenter() -> (MPNowPlayingInfoCenter, NowPlayingInfoCenter) {
        let center = NowPlayingInfoCenter()
        return (MPNowPlayingInfoCenter(center: center), center)
    }

    /// Runs `body` on a thread of its own, as an app calls `AVAudioSession`'s setters from
    /// its main thread: their blocking wait is then not on a thread of Swift's cooperative
    /// pool, whose threads (two on a 2-core machine) Earshot's session work needs. A test
    /// task blocking there could leave that work no thread while other tests block too.
    static func onAppThread<T>(_ body: @escaping () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// Runs `body` on a thread that is not the main thread (as MPRIS delivers commands), and
    /// returns its result.
    static func offMain<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: body()) }
        }
    }
}

/// A value the checks fill from handlers on other threads.
final class Collected<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
    func modify(_ body: (inout Value) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        body(&stored)
    }
}
