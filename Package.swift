// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Earshot",
    products: [
        .library(name: "Earshot", targets: ["Earshot"]),
        .library(name: "DBus", targets: ["DBus"]),
        .executable(name: "earshot", targets: ["earshot"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // C libraries, found through pkg-config; the apt providers name the Debian packages.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CSampleRate", pkgConfig: "samplerate", providers: [.apt(["libsamplerate0-dev"])]),
        .systemLibrary(name: "CRubberBand", pkgConfig: "rubberband", providers: [.apt(["librubberband-dev"])]),

        // Typed Swift over libdbus. Knows nothing of MPRIS or audio.
        .target(name: "DBus", dependencies: ["CDBus"]),
        // The now-playing store, the remote commands, and their MPRIS export.
        .target(name: "MPRIS", dependencies: ["DBus"]),
        // Decoding, resampling, time-stretching, mixing and ALSA output. Knows nothing of the bus.
        .target(name: "AudioEngine", dependencies: ["CALSA", "CSndFile", "CSampleRate", "CRubberBand"]),
        // The public umbrella.
        .target(name: "Earshot", dependencies: ["MPRIS", "DBus", "AudioEngine"]),
        // The command-line tool.
        .executableTarget(
            name: "earshot",
            dependencies: ["Earshot", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),

        // In-process audio measurements for bench/audio.
        .executableTarget(name: "earshot-bench", dependencies: ["Earshot"]),

        // Test support: a private dbus-daemon and subprocess helpers.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestSupport"]),
        .testTarget(name: "MPRISTests", dependencies: ["MPRIS", "DBus", "TestSupport"]),
        .testTarget(name: "AudioEngineTests", dependencies: ["AudioEngine", "TestSupport"]),
        .testTarget(name: "EarshotTests", dependencies: ["Earshot", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport", "DBus", "earshot"]),
    ]
)
