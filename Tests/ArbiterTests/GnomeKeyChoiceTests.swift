@testable import Arbiter
import Testing

/// The arbiter's estimate of gsd-media-keys 43's choice (`mpris-controller.c`).
@Suite("gsd-media-keys' choice of player, as the arbiter follows it")
struct GnomeKeyChoiceTests {
    @Test("a player that appears takes the keys unless the current one is Playing")
    func appearing() {
        var choice = GnomeKeyChoice()
        choice.appeared("a", currentPlaying: false)
        #expect(choice.current == "a")
        choice.appeared("b", currentPlaying: true)
        #expect(choice.current == "a" && choice.setAside == ["b"])
        choice.appeared("c", currentPlaying: false)
        #expect(choice.current == "c" && choice.setAside == ["a", "b"])
    }

    @Test("a Playing player's signal takes the keys only from a current one that is not Playing; an unchanged status counts")
    func signalling() {
        var choice = GnomeKeyChoice()
        choice.appeared("a", currentPlaying: false)
        choice.appeared("b", currentPlaying: true)
        choice.signalled("b", playing: true, currentPlaying: true)
        #expect(choice.current == "a")
        choice.signalled("b", playing: false, currentPlaying: false)
        #expect(choice.current == "a")
        choice.signalled("b", playing: true, currentPlaying: false)
        #expect(choice.current == "b" && choice.setAside == ["a"])
    }

    @Test("when the current one goes, the one set aside last takes over; others just leave")
    func vanishing() {
        var choice = GnomeKeyChoice()
        choice.appeared("a", currentPlaying: false)
        choice.appeared("b", currentPlaying: false)
        choice.appeared("c", currentPlaying: false)
        choice.vanished("a")
        #expect(choice.current == "c" && choice.setAside == ["b"])
        choice.vanished("c")
        #expect(choice.current == "b" && choice.setAside.isEmpty)
        choice.vanished("b")
        #expect(choice.current == nil)
    }
}
