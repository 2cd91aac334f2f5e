import ArgumentParser

/// An example of PeerConnectivity between two processes: one advertises and echoes, the other
/// browses, invites and exchanges messages. The integration tests drive it as the second process.
@main
struct PeerDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peer-demo",
        abstract: "Advertise, browse, invite, connect and exchange messages with PeerConnectivity.",
        subcommands: [AdvertiseCommand.self, BrowseCommand.self, MeshCommand.self]
    )
}

/// What the advertiser does with invitations.
enum InvitationAnswer: String, ExpressibleByArgument, CaseIterable {
    case accept
    case decline
    case ignore
}
