import PeerConnectivityCore
import Testing

/// The path a received resource or folder is placed at, from its sender's name (in memory).
@Suite("ResourcePath")
struct ResourcePathTests {
    @Test(
        "a folder name that makes no path lands in a folder of its own, never at the receive directory's root",
        arguments: ["", ".", "..", "/", "//", "../..", "/..", "./.", "/./../"]
    )
    func noPath(name: String) throws {
        #expect(try ResourcePath(Array(name.utf8)).components == ["resource"])
    }

    @Test(
        "a folder name that is a path keeps its safe components",
        arguments: [
            ("album", ["album"]), ("../album", ["album"]), ("/trips/2026", ["trips", "2026"]),
            (".git", ["git"]), ("a/../b", ["a", "b"]),
        ]
    )
    func path(name: String, expected: [String]) throws {
        #expect(try ResourcePath(Array(name.utf8)).components == expected)
    }

    @Test("a path past 32 components or 1,024 bytes is refused, saying which")
    func limits() {
        let deep = Array(Array(repeating: "d", count: 33).joined(separator: "/").utf8)
        let error = #expect(throws: ResourcePath.Refusal.self) { try ResourcePath(deep) }
        #expect(error?.description.contains("33 components") == true)
        let long = Array(Array(repeating: String(repeating: "x", count: 200), count: 6).joined(separator: "/").utf8)
        let tooLong = #expect(throws: ResourcePath.Refusal.self) { try ResourcePath(long) }
        #expect(tooLong?.description.contains("1205 bytes") == true)
        #expect(throws: Never.self) {
            try ResourcePath(Array(Array(repeating: "d", count: 32).joined(separator: "/").utf8))
        }
    }
}
