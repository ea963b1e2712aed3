// The README's Swift snippets, compiled: each README block appears verbatim (indentation
// aside) in one of these files, which `ReadmeSnippetTests` checks. Run as
// `earshot-examples session|remote|sound FILE…` (or `record`, into memo.flac) against a session
// bus and a sound server.
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
case "record":
    try await recordingExample()
default:
    print("usage: earshot-examples session FILE | remote FILE | sound FILE… | record")
}
