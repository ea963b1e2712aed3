import AudioEngine
import SessionPolicy

// What the recording categories do to the session: recording needs one of them, active;
// `record` silences the process's own playback (as iOS's Record category does); the
// voiceChat mode tags the process's streams `media.role=phone`.

extension AudioSession {
    /// Whether the session's category records (`record` or `playAndRecord`).
    public var categoryAllowsRecording: Bool { [.record, .playAndRecord].contains(category) }

    /// Throws unless the session is active in `record` or `playAndRecord`.
    ///
    /// - Throws: ``AudioRecorderError/sessionDoesNotRecord(category:active:)``.
    public func checkRecordingAllowed() throws(AudioRecorderError) {
        let (category, active) = state.withLock { ($0.category, $0.client.active) }
        guard [.record, .playAndRecord].contains(category), active else {
            throw .sessionDoesNotRecord(category: category.rawValue, active: active)
        }
    }

    /// The process gain the session wants: 0 while active in `record` (playback is
    /// silenced), else the arbiter's duck gain.
    var wantedProcessGain: Float {
        state.withLock { s in s.category == .record && s.client.active ? 0 : Float(s.duckGain) }
    }

    /// Applies the category's effects on the engine: the process gain (`record` silences
    /// playback) and the streams' role (`phone` in the voiceChat mode). Called when the
    /// category, the mode, the activation or the duck gain change.
    func applyRecordingCategory() {
        engine.setProcessGain(wantedProcessGain, rampDuration: 0.05)
        let (mode, category) = state.withLock { ($0.mode, $0.category) }
        var identity = engine.streamIdentity
        let phone = mode == .voiceChat && (category == .playAndRecord || category == .record)
        if phone, identity.role != .phone {
            identity.role = .phone
            engine.streamIdentity = identity
        } else if !phone, identity.role == .phone {
            identity.role = .music
            engine.streamIdentity = identity
        }
    }

    /// A recorder of this process started or continued recording: the session is in use, as
    /// when it sounds (the arbiter then ends an interruption of it with shouldResume).
    func recorderStarted(_ recorder: AudioRecorder) {
        state.withLock { s in
            if s.recorders.insert(ObjectIdentifier(recorder)).inserted && s.recorders.count == 1 { feed(.recording(true), &s) }
        }
    }

    /// A recorder of this process paused, stopped or ended.
    func recorderStopped(_ recorder: AudioRecorder) {
        state.withLock { s in
            if s.recorders.remove(ObjectIdentifier(recorder)) != nil && s.recorders.isEmpty { feed(.recording(false), &s) }
        }
    }
}
