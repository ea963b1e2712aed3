import SessionPolicy
import Testing

@Suite("Rejections")
struct RejectionTests {
    static let eventsForAStranger: [Event] = [
        .vanished(stranger), .setCategory(stranger, .playback), .activate(stranger),
        .deactivate(stranger, notifyOthers: true), .soundStarted(stranger, tick: 1),
        .soundStopped(stranger, tick: 1), .remoteCommandsChanged(stranger, anyEnabled: true),
        .silenceTimeout(stranger),
    ]

    @Test(arguments: eventsForAStranger)
    func eventsForUnknownSessionsAreRejectedWithoutStateChange(event: Event) {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true, remote: true)
        let before = policy
        #expect(policy.apply(event) == [.rejected(stranger, reason: .unknownSession)])
        #expect(policy == before)
    }

    @Test func registeringAnExistingSessionIsRejected() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        let before = policy
        #expect(policy.apply(.register(music, appName: "impostor", tick: 9))
            == [.rejected(music, reason: .alreadyRegistered)])
        #expect(policy == before)
    }

    @Test func aVanishedSessionIsUnknownAndMayRegisterAgain() {
        var policy = SessionPolicy()
        policy.add(music, .playback, playing: true)
        policy.run(.vanished(music))
        #expect(policy[music] == nil)
        #expect(policy.apply(.activate(music)) == [.rejected(music, reason: .unknownSession)])
        #expect(policy.apply(.register(music, appName: "music", tick: 5)).isEmpty)
    }

    @Test func everyRejectionHasAMessage() {
        for rejection in SessionPolicy.Rejection.allCases {
            #expect(!rejection.message.isEmpty)
        }
    }
}
