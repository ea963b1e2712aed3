internal import CLibraryLoader

/// libasound, loaded at its first use rather than linked (`CLibraryLoader.h` says why), or
/// nil when it cannot be loaded. Without it there are no ALSA cards or inputs to report:
/// ``ALSAJackWatcher`` and ``ALSAInputs`` find none, as on a machine without sound cards.
enum ALSALibrary {
    static let loaded: earshot_alsa? = earshot_alsa_load(nil)?.pointee
}

/// libasound's functions. Only after ``ALSALibrary/loaded`` said yes (a control or PCM
/// handle exists only then): a call without it stops the process saying so.
let alsa: earshot_alsa = {
    var error: UnsafePointer<CChar>?
    guard let table = earshot_alsa_load(&error) else {
        fatalError("ALSA was called without checking that it loaded: \(error.map { String(cString: $0) } ?? "unknown reason")")
    }
    return table.pointee
}()
