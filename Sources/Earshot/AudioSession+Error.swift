/// Why an ``AudioSession`` call was refused by the session itself (the arbiter's
/// refusals come as `DBusError`s named `org.earshot.AudioSession.Error.*`).
public enum AudioSessionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `setActive(false)` while players of the process are running: the
    /// `AVAudioSession.ErrorCode.isBusy` analog. Nothing changed; pause or stop them
    /// first.
    case isBusy(runningPlayers: Int)

    /// A sentence naming the refusal and what to do about it.
    public var description: String {
        switch self {
        case let .isBusy(count):
            "the audio session is busy: \(count) player\(count == 1 ? "" : "s") of this process \(count == 1 ? "is" : "are") "
                + "running; pause or stop \(count == 1 ? "it" : "them") before deactivating the session"
        }
    }
}
