/// An open input stream that fills a ``CaptureBuffer``: a record stream on the sound server
/// (``PulseInput``) or an ALSA capture device (``PCMInput``).
protocol CaptureInput: AnyObject, Sendable {
    var kind: AudioEngine.InputKind { get }
    /// Stops capturing and releases the stream; any thread, once (later calls do nothing).
    func close()
    /// Calls `handler` with the gap in seconds each time the input resumes after its sound
    /// server went away and came back (inputs that cannot do that never call it).
    func onResumed(_ handler: @escaping @Sendable (Double) -> Void)
    /// Starts capturing if the input was opened idle (a prepared recording does not keep the
    /// process awake); inputs that capture from the start ignore it.
    func resume()
}

extension CaptureInput {
    func onResumed(_ handler: @escaping @Sendable (Double) -> Void) {}
    func resume() {}
}

extension AudioEngine {
    /// The input a recording captures from.
    public enum InputKind: Sendable, Hashable, CustomStringConvertible {
        /// A record stream on a sound server, through libpulse: `server` is its name and
        /// version, `source` the source it records.
        case soundServer(server: String, source: String)
        /// An ALSA capture PCM.
        case alsa(device: String)

        /// “source earshot_test.monitor on pulseaudio 16.1 (libpulse)” or “ALSA capture device “default””.
        public var description: String {
            switch self {
            case .soundServer(let server, let source): "source \(source) on \(server) (libpulse)"
            case .alsa(let device): "ALSA capture device “\(device)”"
            }
        }
    }

    /// Where an input is opened: the sound server's default source, or a named one, or an
    /// ALSA capture device.
    public struct InputChoice: Sendable, Hashable {
        /// A source name on the sound server, or an ALSA device name when the server does not
        /// answer (or ``alsaOnly`` is set); nil for the default.
        public var device: String?
        /// Skip the sound server and open ALSA (`device`, or `default`).
        public var alsaOnly: Bool
        /// The sound server to connect to, or nil for libpulse's default.
        public var soundServer: String?
        /// How long a record stream waits for its sound server to come back after it went
        /// away (restarted) before the recording fails; 0 fails at once.
        public var reconnectTimeout: Double

        /// The default input: the sound server's default source, or ALSA's `default`.
        public init(device: String? = nil, alsaOnly: Bool = false, soundServer: String? = nil, reconnectTimeout: Double = 5) {
            self.device = device
            self.alsaOnly = alsaOnly
            self.soundServer = soundServer
            self.reconnectTimeout = reconnectTimeout
        }
    }

    /// Opens an input on the sound server when one answers, else on ALSA, feeding `buffer`.
    func openInput(_ choice: InputChoice, identity: StreamIdentity, buffer: CaptureBuffer) throws(AudioEngineError) -> any CaptureInput {
        let fragment = max(256, buffer.sampleRate / 50)
        var fallback: String?
        if !choice.alsaOnly {
            do {
                return try ReconnectingPulseInput(server: choice.soundServer ?? configuration.soundServer, device: choice.device,
                                                  identity: identity, buffer: buffer, fragmentFrames: fragment,
                                                  reconnectTimeout: choice.reconnectTimeout)
            } catch {
                guard case .deviceUnavailable(let device, let reason) = error, device == "sound server" else { throw error }
                fallback = reason
            }
        }
        do {
            return try PCMInput(device: choice.device ?? "default", buffer: buffer, periodFrames: fragment)
        } catch {
            guard case .deviceUnavailable(let device, let reason) = error, let fallback else { throw error }
            throw .deviceUnavailable(device: device, reason: "\(reason) (and the sound server: \(fallback))")
        }
    }
}
