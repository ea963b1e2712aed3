@testable import AudioEngine
import Testing

/// libasound, librubberband and libspeexdsp are loaded at their first use, not linked
/// (CLibraryLoader.h). The tables load from the installed libraries; a library that cannot
/// be loaded, or one without the functions, is named with the reason, never a crash.
@Suite("C libraries loaded at their first use")
struct LoadedLibrariesTests {
    @Test("libasound, librubberband and libspeexdsp load and resolve every function")
    func installedLibrariesLoad() {
        if case .failure(let error) = LoadedLibraries.alsa { Issue.record("\(error)") }
        if case .failure(let error) = LoadedLibraries.rubberBand { Issue.record("\(error)") }
        if case .failure(let error) = LoadedLibraries.speexDSP { Issue.record("\(error)") }
    }

    @Test("a library that is not there is named, with the dynamic loader's reason")
    func missingLibrary() throws {
        let soname = "libspeexdsp.so.1-earshot-missing"
        guard case .failure(let error) = LoadedLibraries.speexDSP(from: soname) else {
            Issue.record("\(soname) loaded")
            return
        }
        #expect(error.description == "\(soname) cannot be loaded: \(soname): cannot open shared object file: No such file or directory")
    }

    @Test("a library without the functions is named with the first one missing")
    func wrongLibrary() {
        // libasound is a library, but not speexdsp.
        guard case .failure(let error) = LoadedLibraries.speexDSP(from: "libasound.so.2") else {
            Issue.record("libasound.so.2 passed for libspeexdsp")
            return
        }
        #expect(error.description == "libasound.so.2 has no function speex_resampler_destroy")
    }
}
