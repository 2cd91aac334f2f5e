import PeerConnectivityCore
import Testing

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

    @Test("the shortcut for plain ASCII names gives what the scalar pass gives, on 5,000 random names")
    func shortcutAgreesWithScalarPass() {
        var random = SystemRandomNumberGenerator()
        // Bytes that matter at the edges: space, dot, slash, backslash, control, DEL, and a multi-byte start.
        let edges: [UInt8] = [0x20, 0x2E, 0x2F, 0x5C, 0x09, 0x00, 0x7F, 0xC3, 0xA9]
        var shortcuts = 0
        for _ in 0..<5_000 {
            let length = Int.random(in: 0...(ResourceFileName.maximumLength + 2), using: &random)
            let name = (0..<length).map { _ -> UInt8 in
                Int.random(in: 0..<4, using: &random) == 0
                    ? edges.randomElement(using: &random)! : UInt8.random(in: 0x21...0x7E, using: &random)
            }
            if ResourceFileName.isSafeAsSent(name) { shortcuts += 1 }
            #expect(ResourceFileName.sanitized(name) == ResourceFileName.sanitizedScalars(name), "\(name)")
        }
        #expect(shortcuts > 0, "some names took the shortcut")
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
