public import DBus

/// What a session needs to know right after registering: the situation `Register`
/// returns, keyed by the properties' names.
public struct ArbiterSituation: Sendable, Hashable {
    /// Whether another session, or another app, is playing.
    public var otherAudioPlaying = false
    /// The hint to silence secondary audio.
    public var secondaryAudioShouldBeSilenced = false
    /// Whether the session is interrupted.
    public var interrupted = false
    /// The session's gain, below 1 when ducked.
    public var duckGain = 1.0
    /// The unique name of the remote-control target, "" when none.
    public var target = ""

    /// The situation of a session nothing has happened to.
    public init() {}

    private enum Key: String { case otherAudioPlaying, secondaryAudioShouldBeSilenced, interrupted, duckGain, target }

    /// The `a{sv}` dictionary `Register` returns.
    public var encoded: DBusValue {
        .vardict([
            Key.otherAudioPlaying.rawValue: .boolean(otherAudioPlaying),
            Key.secondaryAudioShouldBeSilenced.rawValue: .boolean(secondaryAudioShouldBeSilenced),
            Key.interrupted.rawValue: .boolean(interrupted),
            Key.duckGain.rawValue: .double(duckGain),
            Key.target.rawValue: .string(target),
        ])
    }

    /// Reads `Register`'s reply; a key that is missing or of another type keeps its
    /// default (an older arbiter may not send it).
    ///
    /// - Throws: `InvalidArgs` when the reply is not one `a{sv}` dictionary.
    public init(decoding reply: [DBusValue]) throws(DBusError) {
        guard reply.count == 1, let situation = reply[0].stringKeyedDictionary else {
            throw .invalidArgs("Register's reply must be one dictionary a{sv}, not “\(reply.map(\.type.signature).joined())”")
        }
        otherAudioPlaying = situation[Key.otherAudioPlaying.rawValue]?.bool ?? false
        secondaryAudioShouldBeSilenced = situation[Key.secondaryAudioShouldBeSilenced.rawValue]?.bool ?? false
        interrupted = situation[Key.interrupted.rawValue]?.bool ?? false
        duckGain = situation[Key.duckGain.rawValue]?.double ?? 1
        target = situation[Key.target.rawValue]?.string ?? ""
    }
}
