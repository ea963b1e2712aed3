internal import CLibraryLoader

/// A C library that is loaded at its first use rather than linked (`CLibraryLoader.h` says
/// why), and could not be loaded: `reason` names the library and what was wrong,
/// e.g. "libspeexdsp.so.1 cannot be loaded: libspeexdsp.so.1: cannot open shared object file: …".
struct LibraryUnavailable: Error, Sendable, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

/// libasound, librubberband and libspeexdsp, each loaded once, by whichever thread asks
/// first. Code that calls one first checks it here (or throws the ``LibraryUnavailable``),
/// then calls through ``alsa``, ``rubberBand`` or ``speexDSP``.
enum LoadedLibraries {
    static let alsa = load(earshot_alsa_load)
    static let rubberBand = load(earshot_rubberband_load)
    static let speexDSP = load(earshot_speexdsp_load)

    private static func load<Table>(
        _ loader: (UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> UnsafePointer<Table>?
    ) -> Result<Table, LibraryUnavailable> {
        var error: UnsafePointer<CChar>?
        if let table = loader(&error) { return .success(table.pointee) }
        return .failure(LibraryUnavailable(reason: error.map { String(cString: $0) } ?? "unknown reason"))
    }

    /// What loading libspeexdsp's table from `soname` instead gives, uncached: for tests of
    /// the failure texts (a missing library, a library without the functions).
    static func speexDSP(from soname: String) -> Result<earshot_speexdsp, LibraryUnavailable> {
        // The table has no empty value (its pointers are non-null): C fills it in place.
        let table = UnsafeMutablePointer<earshot_speexdsp>.allocate(capacity: 1)
        defer { table.deallocate() }
        var error = [CChar](repeating: 0, count: 512)
        guard earshot_speexdsp_load_from(soname, table, &error, error.count) == 0 else { return .success(table.pointee) }
        return .failure(LibraryUnavailable(reason: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
    }

    /// Stops the process for a call through a table that was not checked first.
    fileprivate static func table<Table>(_ result: Result<Table, LibraryUnavailable>) -> Table {
        switch result {
        case .success(let table): return table
        case .failure(let error): fatalError("called without checking that the library loaded: \(error)")
        }
    }
}

/// libasound's functions. Only after ``LoadedLibraries/alsa`` loaded (a PCM or control
/// handle exists only then): a call without it stops the process saying so.
let alsa: earshot_alsa = LoadedLibraries.table(LoadedLibraries.alsa)
/// librubberband's functions, under the same rule.
let rubberBand: earshot_rubberband = LoadedLibraries.table(LoadedLibraries.rubberBand)
/// libspeexdsp's functions, under the same rule.
let speexDSP: earshot_speexdsp = LoadedLibraries.table(LoadedLibraries.speexDSP)
