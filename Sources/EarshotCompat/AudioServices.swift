internal import Earshot

// System Sound Services: Audio Toolbox's C functions over Earshot's SystemSound.

/// A system sound: one made from a file with ``AudioServicesCreateSystemSoundID(_:_:)``,
/// or one of iOS's built-in sounds by its well-known number (1000 new mail, 1003 message
/// received, 1104 keyboard click, …), which plays the freedesktop sound theme's sound for
/// the same event.
public typealias SystemSoundID = UInt32

/// The vibration "sound": silent on a desktop, which has no vibrator (a completion is
/// still called).
public let kSystemSoundID_Vibrate: SystemSoundID = 0x0000_0FFF
/// The user's preferred alert sound: the sound theme's `bell`.
public let kSystemSoundID_UserPreferredAlert: SystemSoundID = 0x0000_1000

/// Success.
public let kAudioServicesNoError: OSStatus = 0
/// The sound could not be made: the file is missing, unreadable or not audio.
public let kAudioServicesSystemSoundUnspecifiedError: OSStatus = -1500
/// The sound server did not answer in time.
public let kAudioServicesSystemSoundClientTimedOutError: OSStatus = -1501
/// The file is too long to be a system sound.
public let kAudioServicesSystemSoundExceededMaximumDurationError: OSStatus = -1502
/// A sound ID that is not known (never made, or disposed).
public let kAudioServicesBadSpecifierSizeError: OSStatus = 0x2173_7063

/// A sound completion routine, as ``AudioServicesAddSystemSoundCompletion(_:_:_:_:_:)``
/// takes it: called with the sound and the client data given.
public typealias AudioServicesSystemSoundCompletionProc = @convention(c) (SystemSoundID, UnsafeMutableRawPointer?) -> Void

/// The sounds made from files, their completion routines, and the built-in sounds decoded
/// so far.
package final class SystemSounds: @unchecked Sendable {
    static let shared = SystemSounds()

    struct Completion {
        let routine: AudioServicesSystemSoundCompletionProc
        /// The client data's address (a pointer is not `Sendable`; it is given back as it came).
        let clientData: UInt
    }

    struct State {
        var sounds: [SystemSoundID: SystemSound] = [:]
        var completions: [SystemSoundID: Completion] = [:]
        var builtIn: [String: SystemSound] = [:]
        var nextID: SystemSoundID = 0x0000_1001
    }

    let state = Locked(State())

    /// The sound an ID names: one made from a file, or a built-in one (decoded at its first play).
    func sound(for id: SystemSoundID) -> SystemSound? {
        if let sound = state.withLock({ $0.sounds[id] }) { return sound }
        for name in SystemSounds.themeNames(for: id) {
            if let sound = state.withLock({ $0.builtIn[name] }) { return sound }
            if let sound = try? SystemSound(named: name) {
                state.withLock { $0.builtIn[name] = sound }
                return sound
            }
        }
        return nil
    }

    /// Plays `id`, then runs its completion routine, and `completion`, on the main queue.
    func play(_ id: SystemSoundID, completion: Unchecked<(() -> Void)?>) {
        let routine = state.withLock { $0.completions[id] }
        let finished: @Sendable () -> Void = {
            onMainQueue {
                if let routine { routine.routine(id, UnsafeMutableRawPointer(bitPattern: routine.clientData)) }
                completion.value?()
            }
        }
        guard id != kSystemSoundID_Vibrate, let sound = sound(for: id) else { return finished() }
        do {
            try sound.play(completion: finished)
        } catch {
            finished()
        }
    }

    /// The freedesktop sound-theme names for one of iOS's built-in sound IDs, in the order
    /// tried; empty for IDs that name no built-in sound (`package`: the package's tests
    /// check the table).
    package static func themeNames(for id: SystemSoundID) -> [String] {
        switch id {
        case 1000, 1302: ["message-new-email"]
        case 1001, 1303: ["message-sent-email"]
        case 1002, 1003, 1007...1013, 1020...1036, 1300, 1301, 1307...1313, 1320...1336: ["message-new-instant"]
        case 1004, 1016: ["message-sent-instant"]
        case 1005, 1304: ["alarm-clock-elapsed"]
        case 1006: ["battery-low", "dialog-warning"]
        case 1057, 1103: ["dialog-information"]
        case 1070, 1071: ["phone-outgoing-busy"]
        case 1073: ["dialog-error"]
        case 1104, 1105, 1306: ["button-pressed", "audio-volume-change"]
        case 1106: ["power-plug"]
        case 1107: ["audio-volume-change"]
        case 1108: ["camera-shutter", "screen-capture"]
        case 1150: ["complete"]
        case 1151, 1153, 1154: ["phone-incoming-call"]
        case 1152: ["phone-hangup", "service-logout"]
        case 1254...1259, kSystemSoundID_UserPreferredAlert: ["bell"]
        default: []
        }
    }
}

/// Makes a system sound from an audio file (anything Earshot decodes, not only AIFF, WAV
/// and CAF) and writes its ID to `outSystemSoundID`.
///
/// - Returns: ``kAudioServicesNoError``; ``kAudioServicesSystemSoundExceededMaximumDurationError``
///   for a file too long to be a system sound; ``kAudioServicesSystemSoundUnspecifiedError``
///   for one that cannot be read or played.
@discardableResult
public func AudioServicesCreateSystemSoundID(_ inFileURL: CFURL, _ outSystemSoundID: UnsafeMutablePointer<SystemSoundID>) -> OSStatus {
    let sound: SystemSound
    do {
        sound = try SystemSound(contentsOf: inFileURL)
    } catch let error as SystemSoundError {
        if case .tooLong = error.reason { return kAudioServicesSystemSoundExceededMaximumDurationError }
        return kAudioServicesSystemSoundUnspecifiedError
    } catch {
        return kAudioServicesSystemSoundUnspecifiedError
    }
    outSystemSoundID.pointee = SystemSounds.shared.state.withLock { s in
        let id = s.nextID
        s.nextID += 1
        s.sounds[id] = sound
        return id
    }
    return kAudioServicesNoError
}

/// Disposes of a sound made from a file: a play still sounding stops (as on iOS, disposing
/// right after playing gives silence).
///
/// - Returns: ``kAudioServicesNoError``, or ``kAudioServicesBadSpecifierSizeError`` for an
///   unknown ID.
@discardableResult
public func AudioServicesDisposeSystemSoundID(_ inSystemSoundID: SystemSoundID) -> OSStatus {
    guard let sound = SystemSounds.shared.state.withLock({ s in
        s.completions[inSystemSoundID] = nil
        return s.sounds.removeValue(forKey: inSystemSoundID)
    }) else { return kAudioServicesBadSpecifierSizeError }
    sound.dispose()
    return kAudioServicesNoError
}

/// Plays a system sound; returns at once. An unknown ID plays nothing.
public func AudioServicesPlaySystemSound(_ inSystemSoundID: SystemSoundID) {
    SystemSounds.shared.play(inSystemSoundID, completion: Unchecked(nil))
}

/// Plays a system sound as an alert: the same as ``AudioServicesPlaySystemSound(_:)`` (a
/// desktop does not vibrate).
public func AudioServicesPlayAlertSound(_ inSystemSoundID: SystemSoundID) {
    SystemSounds.shared.play(inSystemSoundID, completion: Unchecked(nil))
}

/// Plays a system sound and calls `inCompletionBlock` on the main queue once it has been
/// heard (at once for a sound that plays nothing).
public func AudioServicesPlaySystemSoundWithCompletion(_ inSystemSoundID: SystemSoundID, _ inCompletionBlock: (() -> Void)?) {
    SystemSounds.shared.play(inSystemSoundID, completion: Unchecked(inCompletionBlock))
}

/// Plays a system sound as an alert and calls `inCompletionBlock` on the main queue once it
/// has been heard.
public func AudioServicesPlayAlertSoundWithCompletion(_ inSystemSoundID: SystemSoundID, _ inCompletionBlock: (() -> Void)?) {
    SystemSounds.shared.play(inSystemSoundID, completion: Unchecked(inCompletionBlock))
}

/// Registers a routine called after every play of `inSystemSoundID` has been heard, with
/// the sound and `inClientData`, on the main queue (iOS's default, the main run loop; the
/// run loop and mode given are ignored).
///
/// - Returns: ``kAudioServicesNoError``.
@discardableResult
public func AudioServicesAddSystemSoundCompletion(
    _ inSystemSoundID: SystemSoundID, _ inRunLoop: RunLoop?, _ inRunLoopMode: String?,
    _ inCompletionRoutine: AudioServicesSystemSoundCompletionProc, _ inClientData: UnsafeMutableRawPointer?
) -> OSStatus {
    let completion = SystemSounds.Completion(routine: inCompletionRoutine, clientData: UInt(bitPattern: inClientData))
    SystemSounds.shared.state.withLock { $0.completions[inSystemSoundID] = completion }
    return kAudioServicesNoError
}

/// Removes the completion routine of `inSystemSoundID`.
public func AudioServicesRemoveSystemSoundCompletion(_ inSystemSoundID: SystemSoundID) {
    SystemSounds.shared.state.withLock { $0.completions[inSystemSoundID] = nil }
}
