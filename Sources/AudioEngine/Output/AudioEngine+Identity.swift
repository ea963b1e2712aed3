#if canImport(Glibc)
import Glibc
#endif

extension AudioEngine {
    /// What kind of sound a stream carries, as sound servers' role policies know it
    /// (`media.role`: ducking or corking music for a call, the event-sounds volume).
    public enum MediaRole: String, Sendable, Hashable, CaseIterable {
        case music, video, game, event, phone, animation, production, a11y, test
    }

    /// How the engine's stream presents itself to the sound server (and so in
    /// `pactl list sink-inputs`, GNOME Settings, KDE and pavucontrol).
    public struct StreamIdentity: Sendable, Hashable {
        /// `application.name`: the app's name as people see it (for example the MPRIS identity).
        public var applicationName: String
        /// `application.id`: a reverse-DNS or desktop-file id.
        public var applicationID: String?
        /// `application.icon_name`: an icon from the icon theme (usually the desktop entry's).
        public var iconName: String?
        /// `media.role`.
        public var role: MediaRole
        /// `media.name`: what plays now (a track title); the application name when nil.
        public var mediaName: String?

        /// An identity named after the running program, with role `music`.
        public init(applicationName: String? = nil, applicationID: String? = nil, iconName: String? = nil,
                    role: MediaRole = .music, mediaName: String? = nil) {
            self.applicationName = applicationName ?? StreamIdentity.programName
            self.applicationID = applicationID
            self.iconName = iconName
            self.role = role
            self.mediaName = mediaName
        }

        /// The running program's file name.
        static var programName: String {
            let path = CommandLine.arguments.first ?? "earshot"
            return path.split(separator: "/").last.map(String.init) ?? "earshot"
        }
    }

    /// Where the engine chooses to play.
    public enum OutputChoice: Sendable, Hashable {
        /// Through the sound server when a PulseAudio-protocol server (PulseAudio, or
        /// PipeWire's pipewire-pulse) answers; otherwise through the ALSA device.
        case automatic
        /// Only through the sound server.
        case soundServer
        /// Only through the ALSA device (``Configuration/device``).
        case alsa
    }

    /// The output the engine opened.
    public enum OutputKind: Sendable, Hashable, CustomStringConvertible {
        /// A stream on a sound server, through libpulse; `server` is its name and version
        /// (“pulseaudio 16.1”, “PulseAudio (on PipeWire 0.3.65) 15.0.0”).
        case soundServer(server: String)
        /// An ALSA PCM.
        case alsa(device: String)

        public var description: String {
            switch self {
            case .soundServer(let server): "sound server (\(server)) through libpulse"
            case .alsa(let device): "ALSA device “\(device)”"
            }
        }
    }

    /// How the engine's stream presents itself now. Applies to the next stream at once, and
    /// to an open one where the server allows it (`media.name` follows at once).
    public var streamIdentity: StreamIdentity {
        get { identity.withLock { $0 } }
        set {
            identity.withLock { $0 = newValue }
            // Under the lock, so that the render thread cannot close the output meanwhile.
            openOutput.withLock { $0?.update(identity: newValue) }
        }
    }

    /// The output the engine plays through now, or last played through; nil before the first.
    public var outputKind: OutputKind? { lastOutputKind.withLock { $0 } }

    /// Logs the output choice (on standard error) when it is made or changes.
    func noteOutput(_ kind: OutputKind, reason: String?) {
        let changed = lastOutputKind.withLock { last -> Bool in
            defer { last = kind }
            return last != kind
        }
        guard changed, configuration.logsOutputChoice else { return }
        let line = "earshot: audio output: \(kind)" + (reason.map { " (\($0))" } ?? "") + "\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }
}

extension AudioEngine {
    /// Opens the output ``Configuration/output`` asks for: the sound server when one answers
    /// (for ``OutputChoice/automatic``), else the ALSA device.
    /// The output is asked for `request` (by default, ``outputRequest()``).
    func openOutputStream(_ request: OutputRequest? = nil) throws(AudioEngineError) -> any AudioOutput {
        let request = request ?? outputRequest()
        var fallbackReason: String?
        if configuration.output != .alsa {
            do {
                let output = try PulseOutput(server: configuration.soundServer, identity: streamIdentity, request: request, wake: renderWake)
                noteOutput(output.kind, reason: nil)
                noteSinkSampleRate(of: output)
                return output
            } catch {
                switch error {
                case .noServer(let reason):
                    guard configuration.output == .automatic else {
                        throw .deviceUnavailable(device: "sound server", reason: "no server answered: \(reason)")
                    }
                    fallbackReason = "no sound server answered: \(reason)"
                case .failed(let server, let reason):
                    throw .deviceUnavailable(device: server, reason: reason)
                }
            }
        }
        let output: PCMOutput
        do {
            // A preferred period on ALSA keeps at least 512 frames (see `minimumALSAPeriodFrames`).
            let period = preferredPeriod.value > 0 ? max(request.periodFrames, AudioEngine.minimumALSAPeriodFrames) : request.periodFrames
            output = try PCMOutput(device: configuration.device, request: request, channels: 2,
                                   periodFrames: period, periods: max(1, configuration.periods))
        } catch {
            // Neither: say both, the ALSA reason first (the device is what was opened last).
            guard case .deviceUnavailable(let device, let reason) = error, let fallbackReason else { throw error }
            throw .deviceUnavailable(device: device, reason: "\(reason) (and \(fallbackReason))")
        }
        noteOutput(output.kind, reason: fallbackReason ?? (configuration.output == .alsa ? "named ALSA device" : nil))
        return output
    }

    /// Calls `handler` on the engine's event thread when the sound server the engine played
    /// through went away (it exited or restarted): what was playing is paused where it was
    /// heard, and the next play connects again. The audio session reports it as
    /// `mediaServicesWereReset`.
    @discardableResult
    public func onOutputReset(_ handler: @escaping @Sendable () -> Void) -> UInt64 {
        let id = nextObserver.add(1, ordering: .relaxed).oldValue
        resetObservers.withLock { $0[id] = handler }
        return id
    }

    /// Removes a handler added with ``onOutputReset(_:)``.
    public func removeOutputResetObserver(_ id: UInt64) {
        _ = resetObservers.withLock { $0.removeValue(forKey: id) }
    }
}
