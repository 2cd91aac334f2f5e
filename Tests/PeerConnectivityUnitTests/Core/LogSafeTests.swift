import PeerConnectivityCore
import Testing

@Suite("Text from peers made safe for a log line")
struct LogSafeTests {
    @Test("newlines, carriage returns, tabs, ESC, NUL, DEL, C1, separators and bidi overrides are escaped")
    func escapes() {
        #expect(LogSafe.escaped("a\nb") == "a\\nb")
        #expect(LogSafe.escaped("a\r\nforged") == "a\\r\\nforged")
        #expect(LogSafe.escaped("\t") == "\\t")
        #expect(LogSafe.escaped("\u{1B}[31mred") == "\\u{1B}[31mred")
        #expect(LogSafe.escaped("nul\u{0}") == "nul\\u{0}")
        #expect(LogSafe.escaped("\u{7F}\u{85}") == "\\u{7F}\\u{85}")
        #expect(LogSafe.escaped("a\u{2028}b\u{2029}") == "a\\u{2028}b\\u{2029}")
        #expect(LogSafe.escaped("\u{202E}txt.exe") == "\\u{202E}txt.exe")
        for scalar in (0..<0x20).compactMap(Unicode.Scalar.init) {
            let escaped = LogSafe.escaped(String(scalar))
            #expect(!escaped.unicodeScalars.contains { $0.value < 0x20 }, "U+\(scalar.value) left raw")
        }
    }

    @Test("printable text, accents and emoji pass unchanged")
    func printable() {
        for text in ["alice", "Zoë's iPhone", "東京", "peer 🛰️ #2", "back\\slash"] {
            #expect(LogSafe.escaped(text) == text)
            #expect(LogSafe.isClean(text))
        }
        #expect(!LogSafe.isClean("a\nb"))
    }

    @Test("text over the limit is cut, saying how much was left out")
    func capped() {
        let long = String(repeating: "x", count: 1000)
        #expect(LogSafe.escaped(long, limit: 10) == "xxxxxxxxxx…(990 more characters)")
        #expect(LogSafe.escaped(long).count < 300)
        #expect(!LogSafe.isClean(long))
        #expect(LogSafe.escaped("short", limit: 5) == "short")
    }

    @Test("a display name in a PeerID's description and a reason's detail are escaped")
    func descriptions() throws {
        let peer = try PeerID(displayName: "evil\nforged")
        #expect(!"\(peer)".contains("\n"))
        #expect("\(peer)".hasPrefix("evil\\nforged ("))
        let reason = DisconnectReason.protocolViolation.with(detail: "name \u{1B}]0;x\u{7}")
        #expect(!"\(reason)".unicodeScalars.contains { $0.value < 0x20 })
    }
}
