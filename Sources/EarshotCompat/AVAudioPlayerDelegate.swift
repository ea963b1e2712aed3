/// Receives an ``AVAudioPlayer``'s events, as iOS declares the protocol.
///
/// Every method is optional: a protocol extension gives each an empty default, as Swift
/// without the Objective-C runtime can (iOS's methods are `@objc optional`). Conforming
/// types are not required to be `Sendable`: the player calls its delegate on the main queue
/// (`DispatchQueue.main`), as iOS does, so the app's main-thread state is safe to touch.
///
/// An implementation whose signature differs from these (`withOptions flags: UInt`, a
/// non-optional `Error`) is not one of them and is never called; the compiler warns that it
/// "nearly matches" the requirement. As with any protocol-extension default, a method that
/// a subclass adds is called only if the class that declares the conformance implements it
/// too.
public protocol AVAudioPlayerDelegate: NSObjectProtocol {
    /// Playback reached the end (after the loops), or stopped on a decode error
    /// (`successfully` false). Not called when the player is stopped.
    func audioPlayerDidFinishPlaying(_ player: AVAudioPlayer, successfully flag: Bool)
    /// The file could not be decoded past some point.
    func audioPlayerDecodeErrorDidOccur(_ player: AVAudioPlayer, error: Error?)
    /// The audio session was interrupted while the player played: it is paused.
    func audioPlayerBeginInterruption(_ player: AVAudioPlayer)
    /// The interruption that paused the player ended. `flags` holds
    /// `AVAudioSession.InterruptionOptions.shouldResume` (1) when the app may play again;
    /// the player does not resume by itself (as on iOS): call `play()` here.
    func audioPlayerEndInterruption(_ player: AVAudioPlayer, withOptions flags: Int)
}

extension AVAudioPlayerDelegate {
    /// Does nothing.
    public func audioPlayerDidFinishPlaying(_ player: AVAudioPlayer, successfully flag: Bool) {}
    /// Does nothing.
    public func audioPlayerDecodeErrorDidOccur(_ player: AVAudioPlayer, error: Error?) {}
    /// Does nothing.
    public func audioPlayerBeginInterruption(_ player: AVAudioPlayer) {}
    /// Does nothing.
    public func audioPlayerEndInterruption(_ player: AVAudioPlayer, withOptions flags: Int) {}
}
