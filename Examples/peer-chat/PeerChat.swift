import ArgumentParser
import Foundation
import PeerConnectivity

/// A terminal chat among the peers on the LAN, to read in one sitting: `ChatRoom` is the whole of it.
@main
struct PeerChat: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peer-chat",
        abstract: "Chat with every peer-chat on the LAN: found by DNS-SD, connected all to all, no server.",
        discussion:
            "Type a line to send it to everyone; /send PATH sends a file, /peers shows who is here, /quit leaves."
    )

    @Option(help: "Your name, as the others see it (1-63 bytes).")
    var name = String(ProcessInfo.processInfo.hostName.prefix { $0 != "." }.prefix(63))

    @Option(help: "The service type: only chats with the same one meet.")
    var service = "peer-chat"

    @Option(help: "Where received files go (default: the session's, under the temporary directory).")
    var downloads: String?

    func validate() throws {
        guard (try? PeerID(displayName: name)) != nil else { throw ValidationError("--name must be 1-63 bytes") }
    }

    func run() async throws {
        let room = try await ChatRoom(
            name: name,
            service: service,
            downloads: downloads.map { URL(fileURLWithPath: $0, isDirectory: true) }
        )
        try await room.run(input: StandardInput.lines())
    }
}
