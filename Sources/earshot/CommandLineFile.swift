import Dispatch
import FoundationEssentials
import Glibc
#if canImport(Glibc)
import Glibc
#endif

/// A file named on the command line, opened by the bytes given.
///
/// Swift's `CommandLine.arguments` (and so every argument ArgumentParser hands over)
/// repairs bytes that are not UTF-8 into U+FFFD, which names another file or none. For
/// such an argument the original bytes are found in `CommandLine.unsafeArgv`, the file
/// is opened with them, and it is then reached as `/proc/self/fd/N`: a path Swift can
/// hold that opens that same file again, as often as the players need (each open of it
/// is a new open file with its own offset).
struct CommandLineFile {
    /// A path that opens the file: the argument itself, or `/proc/self/fd/N`.
    let path: String
    /// The name as given, for titles: the argument itself (non-UTF-8 bytes repaired).
    let title: String
    /// The name as given, escaped for printing (``TerminalText``).
    let displayName: String

    /// Resolves an argument; exits with status 1 and a message naming the file when the
    /// bytes name nothing that can be opened.
    init(_ argument: String, command: String) {
        guard let bytes = CommandLineFile.rawBytes(of: argument) else {
            (path, title, displayName) = (argument, argument, TerminalText.escaped(argument))
            return
        }
        let name = TerminalText.escaped(bytes: bytes)
        let fd = (bytes + [0]).withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                // O_NONBLOCK: opening a FIFO must not wait for a writer (the reader then
                // refuses it as not a regular file); reads go through the reopened path.
                open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            }
        }
        guard fd >= 0 else {
            let code = errno
            let reason = code == ENOENT ? "no such file" : String(cString: strerror(code))
            fail("earshot \(command): cannot open \(name): \(reason)", escaped: true)
        }
        // The descriptor stays open for the life of the process: the path below is it.
        path = "/proc/self/fd/\(fd)"
        title = argument
        displayName = name
        CommandLineFile.substitutions.update { $0.append((path, name)) }
    }

    /// The bytes of the argument that Swift repaired into `argument`, when it is not
    /// valid UTF-8 (nil when it is, or when no argument repairs to it).
    static func rawBytes(of argument: String) -> [UInt8]? {
        for index in 1..<Int(CommandLine.argc) {
            guard let pointer = CommandLine.unsafeArgv[index] else { continue }
            let bytes = Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer))).map { UInt8(bitPattern: $0) }
            guard String(validating: bytes, as: UTF8.self) == nil else { continue }
            if String(decoding: bytes, as: UTF8.self) == argument { return bytes }
        }
        return nil
    }

    /// `/proc/self/fd/N` paths and the escaped names they stand for, longest path first.
    private static let substitutions = Locked<[(path: String, name: String)]>([])

    /// `line` (already escaped) with each `/proc/self/fd/N` of a command-line file
    /// replaced by the file's escaped name, so that messages name the file as given.
    static func naming(_ line: String) -> String {
        let all = substitutions.get()
        guard !all.isEmpty, line.contains("/proc/self/fd/") else { return line }
        var out = line
        for (path, name) in all.sorted(by: { $0.path.count > $1.path.count }) {
            out = out.replacing(path, with: name)
        }
        return out
    }
}
