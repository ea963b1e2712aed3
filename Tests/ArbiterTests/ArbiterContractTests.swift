import Arbiter
import DBus
import SessionPolicy
import Testing

/// The typed contract (ArbiterCall, ArbiterSignal and the structs they carry) against the
/// documented interface: every case encodes to the documented arguments, and a call
/// decodes back to itself.
@Suite("org.earshot.AudioSession: the typed contract is the documented one")
struct ArbiterContractTests {
    static let calls: [ArbiterCall] = {
        var state = ArbiterRegistration()
        (state.category, state.options, state.mode, state.active) = (.playback, [.duckOthers, .allowAirPlay], .spokenAudio, true)
        (state.producingSound, state.remoteCommands) = (true, true)
        (state.interruptedBy, state.wasPlaying) = (SessionID(":1.42"), true)
        state.output = ArbiterRegistration.Output(.soundServer, name: "pulseaudio 16.1")
        var silenced = ArbiterRegistration()
        (silenced.silencedBy, silenced.wasPlaying, silenced.output) = (.screenLocked, false, ArbiterRegistration.Output.none)
        return [
            .register(appName: "music", state: state), .register(appName: "quiet", state: silenced),
            .register(appName: "bare", state: ArbiterRegistration()), .unregister,
            .setCategory(.playAndRecord, options: [.mixWithOthers, .defaultToSpeaker], mode: .voiceChat),
            .setActive(false, notifyOthersOnDeactivation: true), .reportSound(producing: true),
            .setRemoteCommandsEnabled(true), .setOutput(ArbiterRegistration.Output(.alsa, name: "hw:0")),
        ]
    }()

    static let signals: [ArbiterSignal] = [
        .deactivated(reason: .silenceTimeout), .interruptionBegan(.sessionActivated(SessionID(":1.7"))),
        .interruptionBegan(.screenLocked), .interruptionEnded(shouldResume: true), .duckGainChanged(0.25),
        .otherAudioPlayingChanged(true), .secondaryAudioShouldBeSilencedChanged(false), .sessionsAvailable,
    ]

    func documented(_ kind: InterfaceMember.Kind, _ name: String) throws -> [InterfaceMember.Argument] {
        try #require(try InterfaceDocumentTests.documented().first { $0.kind == kind && $0.name == name }, "\(name) is documented").arguments
    }

    @Test("every call encodes to its documented arguments and decodes back to itself")
    func callsRoundTrip() throws {
        #expect(Set(Self.calls.map(\.method)) == Set(ArbiterProtocol.Method.allCases))
        for call in Self.calls {
            let args = try documented(.method, call.method.rawValue)
            let declared = ArbiterCall.inputs(of: call.method).map { InterfaceMember.Argument(name: $0.name, type: $0.type.signature, direction: "in") }
                + ArbiterCall.outputs(of: call.method).map { InterfaceMember.Argument(name: $0.name, type: $0.type.signature, direction: "out") }
            #expect(declared == args, "\(call.method)")
            #expect(call.arguments.map(\.type.signature) == declared.filter { $0.direction == "in" }.map(\.type), "\(call)")
            #expect(try ArbiterCall(call.method, call.arguments) == call)
        }
    }

    @Test("a call of the wrong shape is InvalidArgs naming what is wrong")
    func wrongShapes() {
        func refusal(_ method: ArbiterProtocol.Method, _ args: [DBusValue]) -> DBusError? {
            do { _ = try ArbiterCall(method, args); return nil } catch { return error }
        }
        #expect(refusal(.setActive, [.string("true")])?.name == DBusError.Name.invalidArgs)
        #expect(refusal(.setCategory, [.string("loud"), .strings([]), .string("default")])?.message.contains("loud") == true)
        #expect(refusal(.register, [.string(""), ArbiterRegistration().encoded])?.message.contains("app_name") == true)
        #expect(refusal(.setOutput, [.string("alsa"), .string("")])?.message.contains("needs a name") == true)
    }

    @Test("every signal carries its documented arguments")
    func signalsMatchDocument() throws {
        #expect(Set(Self.signals.map(\.member)) == Set(ArbiterProtocol.Signal.allCases))
        for signal in Self.signals {
            let args = try documented(.signal, signal.member.rawValue)
            #expect(ArbiterSignal.arguments(of: signal.member).map { InterfaceMember.Argument(name: $0.name, type: $0.type.signature, direction: "out") } == args)
            #expect(signal.arguments.map(\.type.signature) == args.map(\.type), "\(signal)")
        }
    }

    @Test("the situation and the status summaries decode what they encode")
    func structsRoundTrip() throws {
        var situation = ArbiterSituation()
        (situation.otherAudioPlaying, situation.interrupted, situation.duckGain, situation.target) = (true, true, 0.3, ":1.9")
        #expect(try ArbiterSituation(decoding: [situation.encoded]) == situation)
        var session = ArbiterSessionSummary()
        (session.id, session.app, session.category, session.options, session.mode) = (":1.3", "music", "playback", ["duckOthers"], "default")
        (session.active, session.lastSound, session.target, session.outputKind, session.outputName) = (true, 12, true, .alsa, "default")
        #expect(ArbiterSessionSummary(decoding: session.encoded) == session)
        var other = ArbiterOtherSummary()
        (other.player, other.app, other.pid, other.status, other.duckedBy) = (":1.5", "mpv", 4242, "Playing", [":1.3"])
        #expect(ArbiterOtherSummary(decoding: other.encoded) == other)
        #expect(ArbiterRegistration.Output(.soundServer, name: String(repeating: "x", count: 300)).name.utf8.count
                == ArbiterProtocol.maximumOutputNameBytes)
    }
}
