import Testing

@testable import PeerConnectivity

/// The file names made from the names peers send (in memory).
@Suite("ResourceFileName")
struct ResourceFileNameTests {
    @Test(
        "hostile names become one harmless path component",
        arguments: [
            ("photo.jpg", "photo.jpg"),
            ("../escape", "_escape"),
            ("/etc/passwd", "_etc_passwd"),
            ("a/b/c.txt", "a_b_c.txt"),
            ("..", "resource"),
            (".", "resource"),
            (".hidden", "hidden"),
            ("nul\u{0}byte", "nul_byte"),
            ("back\\slash", "back_slash"),
            ("   ", "resource"),
            ("tab\tand\nnewline", "tab_and_newline"),
            ("日本語.txt", "日本語.txt"),
        ]
    )
    func sanitized(name: String, expected: String) {
        #expect(ResourceFileName.sanitized(Array(name.utf8)) == expected)
    }

    @Test("invalid UTF-8 is repaired, long names are cut at a character boundary")
    func repairAndLength() {
        #expect(ResourceFileName.sanitized([0xFF, 0x61, 0x2F, 0x62]) == "\u{FFFD}a_b")
        let long = ResourceFileName.sanitized(Array(String(repeating: "é", count: 10_000).utf8))
        #expect(long.utf8.count == ResourceFileName.maximumLength)
        #expect(long.allSatisfy { $0 == "é" })
    }

    @Test("candidates number the copies before the extension")
    func candidates() {
        let names = ResourceFileName.candidates(for: "photo.jpg")
        #expect(Array(names.prefix(3)) == ["photo.jpg", "photo (2).jpg", "photo (3).jpg"])
        #expect(names.last == "photo (999).jpg")
        #expect(ResourceFileName.candidates(for: "README").dropFirst().first == "README (2)")
        #expect(names.count == 999)
    }
}
