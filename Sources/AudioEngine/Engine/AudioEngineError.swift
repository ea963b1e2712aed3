/// Why the engine cannot play.
public enum AudioEngineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The output device could not be opened (`snd_pcm_open` or its configuration failed).
    case deviceUnavailable(device: String, reason: String)
    /// The output device failed while playing (for example it was unplugged).
    case deviceLost(device: String, reason: String)
    /// The sound server the engine played through went away (it exited or restarted).
    /// What played is paused; the next play connects again.
    case soundServerLost(server: String, reason: String)
    /// Too many sources play at once.
    case tooManySources(limit: Int)

    public var description: String {
        switch self {
        case .deviceUnavailable(let device, let reason): "cannot open audio device “\(device)”: \(reason)"
        case .deviceLost(let device, let reason): "audio device “\(device)” failed: \(reason)"
        case .soundServerLost(let server, let reason): "the sound server “\(server)” went away: \(reason)"
        case .tooManySources(let limit): "cannot play more than \(limit) sources at once"
        }
    }
}
