import Foundation
import Testing
import TestSupport

@testable import AudioRoutes

/// Route changes collected from a monitor's callback.
final class ChangeRecorder: Sendable {
    private let changes = Locked<[RouteChange]>([])

    func record(_ change: RouteChange) {
        changes.withLock { $0.append(change) }
    }

    var all: [RouteChange] { changes.value }
    var reasons: [RouteChangeReason] { all.map(\.reason) }

    /// Waits until at least `count` changes arrived and returns them all.
    @discardableResult
    func wait(for count: Int, timeout: Double = 5) async throws -> [RouteChange] {
        try await eventually("\(count) route change(s)", timeout: timeout) { self.all.count >= count }
        return all
    }
}

/// Runs `body` with a private server whose main sink is `routes_main`, then checks that the
/// daemon is gone.
func withRouteServer(_ body: (PulseAudioServer) async throws -> Void) async throws {
    var server: PulseAudioServer? = try PulseAudioServer(sinkName: "routes_main")
    let pid = server!.pid
    try await body(server!)
    server = nil
    #expect(kill(pid, 0) != 0, "pulseaudio \(pid) is still running")
}

/// Closes `monitor` and checks that it took less than `limit` seconds.
func closeQuickly(_ monitor: RouteMonitor, limit: Double = 1) {
    let start = ContinuousClock.now
    monitor.close()
    let elapsed = ContinuousClock.now - start
    #expect(elapsed < .milliseconds(Int(limit * 1000)), "close took \(elapsed)")
}

/// The route monitor against real PulseAudio servers, one per test. One at a time: each
/// test is short, and the new-device window (1 s) is about timing.
@Suite(.serialized) struct RouteMonitorPulseTests {
    @Test func theInitialRouteIsTheNullSink() async throws {
        try await withRouteServer { server in
            let recorder = ChangeRecorder()
            let monitor = try RouteMonitor(server: server.address) { recorder.record($0) }
            #expect(monitor.backend == .pulseAudio("pulseaudio"))
            #expect(monitor.lastError == nil)
            #expect(monitor.currentRoute.outputs == [
                AudioPort(name: "routes_main", portName: "Null Output", type: .virtual, channels: 2)
            ])
            try await Task.sleep(for: .milliseconds(100))
            #expect(recorder.all.isEmpty)
            closeQuickly(monitor)
            #expect(monitor.backend == .none)
        }
    }

    @Test func aNewSinkMadeTheDefaultAtOnceIsANewDevice() async throws {
        try await withRouteServer { server in
            let recorder = ChangeRecorder()
            let monitor = try RouteMonitor(server: server.address) { recorder.record($0) }
            _ = try server.loadNullSink(name: "routes_usb", channels: 6)
            try server.setDefaultSink("routes_usb")
            let changes = try await recorder.wait(for: 1)
            try await Task.sleep(for: .milliseconds(100))
            #expect(recorder.all.count == 1)
            #expect(changes[0].reason == .newDeviceAvailable)
            #expect(changes[0].previousRoute.outputs.map(\.name) == ["routes_main"])
            #expect(changes[0].currentRoute.outputs == [
                AudioPort(name: "routes_usb", portName: "Null Output", type: .virtual, channels: 6)
            ])
            #expect(monitor.currentRoute == changes[0].currentRoute)
            closeQuickly(monitor)
        }
    }

    @Test func aSinkAddedThatDoesNotBecomeTheDefaultSendsNothing() async throws {
        try await withRouteServer { server in
            let recorder = ChangeRecorder()
            let monitor = try RouteMonitor(server: server.address) { recorder.record($0) }
            let module = try server.loadNullSink(name: "routes_spare")
            try await eventually("the monitor sees routes_spare") { monitor.knownOutputDevices.contains("routes_spare") }
            try server.unloadModule(module)
            try await eventually("the monitor sees routes_spare go") { !monitor.knownOutputDevices.contains("routes_spare") }
            try await Task.sleep(for: .milliseconds(100))
            #expect(recorder.all.isEmpty)
            #expect(monitor.currentRoute.outputs.map(\.name) == ["routes_main"])
            closeQuickly(monitor)
        }
    }

    @Test func switchingBetweenExistingSinksIsAnOverride() async throws {
        try await withRouteServer { server in
            let recorder = ChangeRecorder()
            let monitor = try RouteMonitor(server: server.address) { recorder.record($0) }
            _ = try server.loadNullSink(name: "routes_other")
            try await eventually("the monitor sees routes_other") { monitor.knownOutputDevices.contains("routes_other") }
            // Older than the new-device window (1 s): a choice, not a new device.
            try await Task.sleep(for: .milliseconds(1200))
            #expect(recorder.all.isEmpty)

            try server.setDefaultSink("routes_other")
            var changes = try await recorder.wait(for: 1)
            #expect(changes[0].reason == .override)
            #expect(changes[0].previousRoute.outputs.map(\.name) == ["routes_main"])
            #expect(changes[0].currentRoute.outputs.map(\.name) == ["routes_other"])

            try server.setDefaultSink("routes_main")
            changes = try await recorder.wait(for: 2)
            #expect(changes[1].reason == .override)
            #expect(changes[1].currentRoute.outputs.map(\.name) == ["routes_main"])
            try await Task.sleep(for: .milliseconds(100))
            #expect(recorder.all.count == 2)
            closeQuickly(monitor)
        }
    }

    @Test func unloadingTheDefaultSinkIsAnOldDeviceUnavailable() async throws {
        try await withRouteServer { server in
            let recorder = ChangeRecorder()
            let monitor = try RouteMonitor(server: server.address) { recorder.record($0) }
            let module = try server.loadNullSink(name: "routes_headset")
            try server.setDefaultSink("routes_headset")
            try await recorder.wait(for: 1)
            #expect(recorder.reasons == [.newDeviceAvailable])

            try server.unloadModule(module)
            let changes = try await recorder.wait(for: 2)
            #expect(changes[1].reason == .oldDeviceUnavailable)
            #expect(changes[1].previousRoute.outputs.map(\.name) == ["routes_headset"])
            #expect(changes[1].currentRoute.outputs == [
                AudioPort(name: "routes_main", portName: "Null Output", type: .virtual, channels: 2)
            ])
            try await Task.sleep(for: .milliseconds(100))
            #expect(recorder.all.count == 2)
            closeQuickly(monitor)
        }
    }

    @Test func theServerKilledEmptiesTheRoute() async throws {
        try await withRouteServer { server in
            let recorder = ChangeRecorder()
            let monitor = try RouteMonitor(server: server.address) { recorder.record($0) }
            #expect(kill(server.pid, SIGKILL) == 0)
            let changes = try await recorder.wait(for: 1)
            #expect(changes[0].reason == .oldDeviceUnavailable)
            #expect(changes[0].previousRoute.outputs.map(\.name) == ["routes_main"])
            #expect(changes[0].currentRoute == .empty)
            #expect(monitor.currentRoute == .empty)
            #expect(monitor.backend == .none)  // no sound card on the test machines
            guard case .connectionLost(let location, let reason) = monitor.lastError else {
                Issue.record("lastError is \(String(describing: monitor.lastError))")
                return
            }
            #expect(location == server.address)
            #expect(!reason.isEmpty)
            // Reconnection attempts go on in the background (and fail: the lost connection
            // stays the reason); closing stops them at once.
            try await Task.sleep(for: .milliseconds(500))
            #expect(recorder.all.count == 1)
            #expect(monitor.lastError == .connectionLost(server: location, reason: reason))
            closeQuickly(monitor)
        }
    }

    @Test func theServerRestartedIsANewDevice() async throws {
        try await withRouteServer { server in
            let recorder = ChangeRecorder()
            let monitor = try RouteMonitor(server: server.address) { recorder.record($0) }
            #expect(kill(server.pid, SIGKILL) == 0)
            try await recorder.wait(for: 1)

            // A new daemon on the same socket, as systemd would restart it.
            let daemon = try Child(
                "pulseaudio",
                [
                    "-n", "--daemonize=no", "--use-pid-file=no", "--system=no", "--exit-idle-time=-1",
                    "--disallow-exit", "--realtime=no", "--high-priority=no", "--log-target=stderr",
                    "--log-level=error", "--load=module-null-sink sink_name=routes_main rate=48000 channels=2 norewinds=1",
                    "--load=module-native-protocol-unix auth-anonymous=1",
                ],
                environment: [
                    "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
                    "HOME": server.directory, "XDG_RUNTIME_DIR": server.directory, "LANG": "C",
                ])
            defer {
                daemon.kill(SIGKILL)
            }
            let changes = try await recorder.wait(for: 2, timeout: 8)
            #expect(changes[1].reason == .newDeviceAvailable)
            #expect(changes[1].previousRoute == .empty)
            #expect(changes[1].currentRoute.outputs.map(\.name) == ["routes_main"])
            #expect(monitor.backend == .pulseAudio("pulseaudio"))
            #expect(monitor.lastError == nil)
            closeQuickly(monitor)
            daemon.kill(SIGKILL)
            try await daemon.wait(timeout: 5)
            #expect(kill(daemon.pid, 0) != 0)
        }
    }

    @Test func aServerThatNeverAnswersTimesOut() async throws {
        try await withRouteServer { server in
            // The socket accepts (the kernel does), the daemon never answers.
            #expect(kill(server.pid, SIGSTOP) == 0)
            defer { kill(server.pid, SIGCONT) }
            let start = ContinuousClock.now
            let monitor = try RouteMonitor(server: server.address, connectTimeout: .milliseconds(300)) { _ in }
            #expect(ContinuousClock.now - start < .seconds(2))
            #expect(monitor.backend == .none)
            #expect(monitor.currentRoute == .empty)
            #expect(monitor.lastError == .serverUnreachable(server: server.address, reason: "no answer within 0.3 s"))
            closeQuickly(monitor)
        }
    }

    @Test func aCategoryChangeKeepsTheRoute() async throws {
        try await withRouteServer { server in
            let recorder = ChangeRecorder()
            let monitor = try RouteMonitor(server: server.address) { recorder.record($0) }
            monitor.reportCategoryChange()
            let changes = try await recorder.wait(for: 1)
            #expect(changes[0].reason == .categoryChange)
            #expect(changes[0].previousRoute == changes[0].currentRoute)
            #expect(changes[0].currentRoute.outputs.map(\.name) == ["routes_main"])
            closeQuickly(monitor)
        }
    }

    @Test func closingFromInsideTheCallbackDoesNotHang() async throws {
        try await withRouteServer { server in
            let holder = Locked<RouteMonitor?>(nil)
            let closed = Locked(false)
            let monitor = try RouteMonitor(server: server.address) { _ in
                holder.value?.close()
                closed.withLock { $0 = true }
            }
            holder.withLock { $0 = monitor }
            monitor.reportCategoryChange()
            try await eventually("the callback closed the monitor") { closed.value }
            #expect(monitor.backend == .none)
            holder.withLock { $0 = nil }
        }
    }
}

/// Without a server.
@Suite struct RouteMonitorFallbackTests {
    static let noCards = ALSAJackWatcher.cardIndices().isEmpty
    let nowhere = "unix:/nonexistent/earshot-routes/native"

    @Test(.enabled(if: noCards, "this machine has sound cards"))
    func noServerAndNoCardsIsNoBackendAndAnEmptyRoute() throws {
        let recorder = ChangeRecorder()
        let start = ContinuousClock.now
        let monitor = try RouteMonitor(server: nowhere) { recorder.record($0) }
        #expect(ContinuousClock.now - start < .seconds(1))
        #expect(monitor.backend == .none)
        #expect(monitor.currentRoute == .empty)
        #expect(monitor.lastError == .serverUnreachable(server: nowhere, reason: "Connection refused"))
        #expect(monitor.lastError?.description.contains(nowhere) == true)
        closeQuickly(monitor)
        #expect(recorder.all.isEmpty)
    }

    @Test func withoutFallbackAnUnreachableServerThrows() {
        #expect(throws: RouteError.serverUnreachable(server: nowhere, reason: "Connection refused")) {
            _ = try RouteMonitor(server: nowhere, fallbackToALSA: false) { _ in }
        }
    }

    @Test func anEmptyServerStringThrows() {
        #expect(throws: RouteError.invalidServer("")) {
            _ = try RouteMonitor(server: "") { _ in }
        }
    }
}
