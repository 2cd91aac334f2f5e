import Foundation
import PeerConnectivityTesting
import Testing

/// The example chat: two `peer-chat` processes on this host, typed into through pipes, through the
/// real avahi-daemon.
@Suite("peer-chat", .serialized, .avahiTimeLimit, .avahi)
struct PeerChatTests {
    @Test("two chats find each other, connect once, exchange lines and a file, and see each other leave")
    func twoChats() async throws {
        let service = uniqueServiceType("chat")
        let scratch = try ScratchDirectory("chat")
        defer { scratch.remove() }
        let downloads = scratch.url.appendingPathComponent("downloads").path
        let ann = try DemoProcess(["--name", "ann", "--service", service], executable: "peer-chat")
        let ben = try DemoProcess(
            ["--name", "ben", "--service", service, "--downloads", downloads],
            executable: "peer-chat"
        )
        defer {
            ann.closeInput()
            ben.closeInput()
        }
        try #require(try await ann.waitForLine(containing: "* ben joined") != nil)
        try #require(try await ben.waitForLine(containing: "* ann joined") != nil)

        ann.type("hello ben")
        try await ben.waitForLine(containing: "[ann] hello ben")
        ben.type("hi ann")
        try await ann.waitForLine(containing: "[ben] hi ann")

        let file = scratch.url.appendingPathComponent("notes.txt")
        try Data("the notes".utf8).write(to: file)
        ann.type("/send \(file.path)")
        try await ann.waitForLine(containing: "* sent notes.txt to ben")
        let received = try #require(try await ben.waitForLine(containing: "* received notes.txt from ann: "))
        let path = String(received[received.range(of: ": ")!.upperBound...])
        #expect(path.hasPrefix(downloads))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("the notes".utf8))

        ann.type("/peers")
        try await ann.waitForLine(containing: "* here: ben")

        ann.type("/quit")
        #expect(try await ann.waitForExit(timeout: waitLimit) == 0)
        try await ben.waitForLine(containing: "* ann left (the peer disconnected")
        ben.closeInput()  // the end of the input leaves too
        #expect(try await ben.waitForExit(timeout: waitLimit) == 0)
        #expect(ann.count("joined") == 1 && ben.count("joined") == 1, "one connection: \(ann.output) \(ben.output)")
    }
}
