// Compiled examples of the library. Each Swift block of the README appears verbatim
// (indentation aside) in one of these files, which `ReadmeSnippetTests` checks. Run as
// `earshot-examples session|remote|sound FILE…` (or `library`, playing song.flac, or `record`,
// into memo.flac) against a session bus and a sound server.
import Earshot
import FoundationEssentials

let arguments = Array(CommandLine.arguments.dropFirst())
let files = arguments.dropFirst().map { URL(fileURLWithPath: $0) }
switch arguments.first {
case "session" where files.count == 1:
    try await sessionExample(playing: files[0])
case "remote" where files.count == 1:
    try await remoteControlExample(playing: files[0])
case "sound" where files.count >= 1:
    try await soundExample(urls: files)
case "library":
    try await libraryExample()
case "record":
    try await recordingExample()
default:
    print("usage: earshot-examples session FILE | remote FILE | sound FILE… | library | record")
}
