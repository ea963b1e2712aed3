@testable import AudioEngine
import Testing

/// SHA-256 against the FIPS 180-4 examples and padding edges (the test that compares a
/// cached picture's name with `sha256sum` covers a real image).
@Suite("SHA-256")
struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ])
    func fipsExamples(_ message: String, _ expected: String) {
        #expect(SHA256.hexDigest(Array(message.utf8)) == expected)
    }

    @Test func aMillionAs() {
        let digest = SHA256.hexDigest([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
        #expect(digest == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
