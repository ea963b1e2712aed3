import Arbiter
import DBus
public import SessionPolicy

/// Why an ``AudioSession`` call was refused: by the session itself, by the arbiter
/// (`org.earshot.AudioSession`, whose D-Bus errors are mapped to these cases), or because
/// the bus or the arbiter could not be reached.
public enum AudioSessionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `setActive(false)` while players of the process are running: the
    /// `AVAudioSession.ErrorCode.isBusy` analog. Nothing changed; pause or stop them
    /// first.
    case isBusy(runningPlayers: Int)
    /// `setCategory` with an option the category does not accept (such as `duckOthers`
    /// with `soloAmbient`): the option's name and the category. Nothing changed.
    case optionNotAllowed(option: String, category: AudioSession.Category)
    /// The session bus or the arbiter could not be reached, or did not answer: the
    /// bus's reason. Nothing changed.
    case arbiterUnreachable(reason: String)
    /// The arbiter has no room for another session (`LimitsExceeded`: at most 8 per
    /// process, 256 in all): its reason.
    case limitsExceeded(reason: String)
    /// The arbiter refused the call (`Rejected`, `NotRegistered`, `InvalidArgs`): its reason.
    case rejected(reason: String)
    /// A preference outside what the session accepts: the setting, the value asked for
    /// and the range allowed.
    case outOfRange(setting: String, value: Double, allowed: String)

    /// A sentence naming the refusal and what to do about it.
    public var description: String {
        switch self {
        case let .isBusy(count):
            "the audio session is busy: \(count) player\(count == 1 ? "" : "s") of this process \(count == 1 ? "is" : "are") "
                + "running; pause or stop \(count == 1 ? "it" : "them") before deactivating the session"
        case let .optionNotAllowed(option, category):
            "\(option) is not allowed with \(category.rawValue): the category refuses the option; nothing changed"
        case let .arbiterUnreachable(reason):
            "the audio-session arbiter (\(ArbiterName.bus)) cannot be reached: \(reason)"
        case let .limitsExceeded(reason):
            "the audio-session arbiter has no room for another session: \(reason)"
        case let .rejected(reason):
            "the audio-session arbiter refused the call: \(reason)"
        case let .outOfRange(setting, value, allowed):
            "a \(setting) of \(value) is out of range (\(allowed))"
        }
    }

    /// The case for an error of the bus or a refusal of the arbiter.
    init(_ error: DBusError) {
        switch error.name {
        case ArbiterName.Error.limitsExceeded: self = .limitsExceeded(reason: error.message)
        case ArbiterName.Error.rejected, ArbiterName.Error.notRegistered, DBusError.Name.invalidArgs:
            self = .rejected(reason: error.message)
        default: self = .arbiterUnreachable(reason: error.description)
        }
    }

    /// Runs `body`, turning the bus's errors and the arbiter's refusals into ``AudioSessionError``s.
    static func mapping<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as DBusError {
            throw AudioSessionError(error)
        }
    }
}
