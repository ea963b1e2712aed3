// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Earshot",
    products: [
        // The app-facing surface: the audio session, players, recorder, system sounds, now
        // playing, remote commands and their MPRIS export. It re-exports nothing below it.
        .library(name: "Earshot", targets: ["Earshot"]),
        // The layers below, for code that wants them directly: typed libdbus, the MPRIS
        // export on its own, and the decoding/mixing/output engine.
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "MPRIS", targets: ["MPRIS"]),
        .library(name: "AudioEngine", targets: ["AudioEngine"]),
        // Apple's names and shapes over Earshot (AVAudioSession, AVAudioPlayer,
        // MPRemoteCommandCenter, MPNowPlayingInfoCenter, System Sound Services), so that iOS
        // audio code ports by its import block. Re-exports Foundation, not Earshot.
        .library(name: "EarshotCompat", targets: ["EarshotCompat"]),
        .executable(name: "earshot", targets: ["earshot"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // `swift package generate-documentation --target Earshot` (the DocC catalog).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        // C libraries, found through pkg-config; the apt providers name the Debian packages.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        // ALSA, speexdsp and Rubber Band: their headers only (in the default include path; no
        // pkg-config, whose flags would link them). CLibraryLoader loads them at their first
        // use and is the one way Swift calls them: linked, they would be loaded into every
        // process at start, though most never play through ALSA, resample or stretch.
        .systemLibrary(name: "CALSA", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CSpeexDSP", providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(name: "CRubberBand", providers: [.apt(["librubberband-dev"])]),
        .target(name: "CLibraryLoader", dependencies: ["CALSA", "CSpeexDSP", "CRubberBand"]),
        // FFmpeg's demuxers and decoders, for what libsndfile cannot open (AAC, ALAC in MP4, WMA, …).
        // Its headers only (in the default include path on Debian and Ubuntu; no pkg-config,
        // whose flags would link the libraries): they are loaded at their first use by
        // CFFmpegLoader, whose table of functions is the one way Swift calls FFmpeg (linking
        // them would load ~130 more shared libraries into every process at start).
        .systemLibrary(
            name: "CFFmpeg",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libswresample-dev", "libavutil-dev"])]
        ),
        .target(name: "CFFmpegLoader", dependencies: ["CFFmpeg"]),
        // libpulse's pkg-config flags (-pthread, -D_REENTRANT) are ones SwiftPM refuses; its
        // headers are in the default include path, so the module map alone suffices.
        .systemLibrary(name: "CPulse"),

        // The command's global executor: Swift tasks on libdispatch's overcommit queue, which
        // no 1 s pool monitor watches (see its header). Only the `earshot` command installs it.
        .target(name: "CGlobalExecutor"),
        // The few system services every layer uses: the monotonic clock, named threads, and
        // bounded reads of small files.
        .target(name: "Platform"),
        // libpulse's threaded mainloop and a context on it (make, connect, wait until ready, release),
        // under every libpulse client: the engine's, the route monitors', other apps' stream watcher.
        .target(name: "PulseSupport", dependencies: ["CPulse", "Platform"]),
        // Typed Swift over libdbus. Knows nothing of MPRIS or audio.
        .target(name: "DBus", dependencies: ["CDBus", "Platform"]),
        // The rules of the iOS audio-session model, pure: no I/O, no bus.
        .target(name: "SessionPolicy"),
        // The now-playing store, the remote commands, and their MPRIS export; and the client
        // of other apps' MPRIS players (the arbiter's and `earshot remote`'s).
        .target(name: "MPRIS", dependencies: ["DBus", "Platform"]),
        // Decoding (libsndfile, FFmpeg), resampling, time-stretching, mixing, and output through libpulse or ALSA. Knows nothing of the bus.
        .target(name: "AudioEngine", dependencies: ["CALSA", "CPulse", "PulseSupport", "CSndFile", "CSpeexDSP", "CRubberBand", "CFFmpeg", "CFFmpegLoader", "CLibraryLoader", "Platform"]),
        // The output route (PulseAudio/PipeWire sinks and ports, ALSA jacks) and its changes.
        .target(name: "AudioRoutes", dependencies: ["CPulse", "PulseSupport", "CALSA", "CLibraryLoader", "Platform"]),
        // Other apps' audio: their playback streams on the sound server, the ducking of them
        // (volume arithmetic, the ramp as a reconciler, its reads and sets), and the state
        // file that outlives the arbiter. Knows nothing of sessions.
        .target(name: "OtherApps", dependencies: ["CPulse", "PulseSupport", "Platform"]),
        // org.earshot.AudioSession: SessionPolicy applied across processes over the bus; it
        // decides whom OtherApps ducks.
        .target(name: "Arbiter", dependencies: ["DBus", "MPRIS", "SessionPolicy", "OtherApps", "Platform"]),
        // The public umbrella.
        .target(name: "Earshot", dependencies: ["MPRIS", "DBus", "AudioEngine", "Arbiter", "SessionPolicy", "AudioRoutes", "Platform"]),
        // AVFoundation's and MediaPlayer's names over the umbrella (see the product above).
        .target(name: "EarshotCompat", dependencies: ["Earshot"]),
        // The command-line tool.
        .executableTarget(
            name: "earshot",
            dependencies: [
                "Earshot", "Arbiter", "AudioEngine", "AudioRoutes", "DBus", "MPRIS", "SessionPolicy", "Platform", "CGlobalExecutor",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // The README's Swift snippets, compiled (ReadmeSnippetTests checks they match).
        .executableTarget(name: "earshot-examples", dependencies: ["Earshot"], path: "Examples"),
        // iOS audio code ported by its import block (the seeds' listings), run across processes
        // by EndToEndTests.SessionIOSPortTests.
        // Swift 5 mode, as the iOS code it stands for is written.
        .executableTarget(name: "earshot-ios-ports", dependencies: ["EarshotCompat"], path: "Ports",
                          swiftSettings: [.swiftLanguageMode(.v5)]),

        // In-process audio measurements for the benchmarks in bench/.
        .executableTarget(
            name: "earshot-bench",
            dependencies: ["Earshot", "AudioEngine", "MPRIS", "Platform", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),

        // Test support: a private dbus-daemon and subprocess helpers.
        .target(name: "TestSupport", dependencies: ["DBus"], path: "Tests/TestSupport"),
        .target(name: "ArbiterTestSupport", dependencies: ["Arbiter", "DBus", "TestSupport"], path: "Tests/ArbiterTestSupport"),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestSupport"]),
        .testTarget(name: "MPRISTests", dependencies: ["MPRIS", "DBus", "TestSupport"]),
        // HarnessTests calls ALSA itself (the engine loads it at its first use; see CLibraryLoader).
        .testTarget(
            name: "AudioEngineTests", dependencies: ["AudioEngine", "CPulse", "CALSA", "TestSupport"],
            linkerSettings: [.linkedLibrary("asound")]
        ),
        .testTarget(
            name: "EarshotTests",
            dependencies: ["Earshot", "Arbiter", "ArbiterTestSupport", "AudioEngine", "AudioRoutes", "DBus", "MPRIS", "SessionPolicy", "Platform", "TestSupport"]
        ),
        // EarshotCompat's: the seed documents' iOS listings, ported by their import block alone,
        // and checks of the mapping that need no sound server. Swift 5 mode, as the iOS code
        // they port is written: in Swift 6 mode, NotificationCenter's @Sendable observer blocks
        // refuse the listings' captures of self, on iOS as here.
        .testTarget(
            name: "EarshotCompatTests", dependencies: ["EarshotCompat", "Earshot", "AudioEngine", "TestSupport"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(name: "SessionPolicyTests", dependencies: ["SessionPolicy", "TestSupport"]),
        .testTarget(name: "OtherAppsTests", dependencies: ["OtherApps"]),
        .testTarget(name: "AudioRoutesTests", dependencies: ["AudioRoutes", "TestSupport"]),
        .testTarget(name: "ArbiterTests", dependencies: ["Arbiter", "ArbiterTestSupport", "DBus", "SessionPolicy", "TestSupport"]),
        // earshot-bench: BenchScriptTests runs its --help.
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport", "DBus", "earshot", "earshot-bench"]),
    ]
)

// `import X` is internal unless written `public import X` (SE-0409), in every Swift target:
// what a module exposes of another is said where it is imported.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("InternalImportsByDefault")]
}
