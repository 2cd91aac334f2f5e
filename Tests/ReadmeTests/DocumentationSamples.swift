import Foundation
import PeerConnectivity

// The Swift samples of the DocC catalog (Sources/PeerConnectivity/PeerConnectivity.docc), compiled with the
// tests; DocumentationSamplesTests checks that every one of them stands here line for line. Nothing here runs.

// PeerConnectivity.md, the overview.
func landingPageSample() async throws {
    let me = try PeerID(displayName: "alice")
    let session = Session(peer: me)
    let advertiser = try Advertiser(peer: me, serviceType: "chat")
    try await advertiser.start()
    for await invitation in advertiser.invitations {
        try await invitation.accept(into: session)
    }
}

// GettingStarted.md, from "Make a peer and a session" to "Send and receive".
func gettingStartedSample() async throws {
    let me = try PeerID(displayName: "alice")
    let session = Session(peer: me)

    let advertiser = try Advertiser(peer: me, discoveryInfo: ["room": "blue"], serviceType: "chat")
    try await advertiser.start()
    Task {
        for await invitation in advertiser.invitations {
            do {
                try await invitation.accept(into: session)
            } catch {
                print("could not accept \(invitation.peer.displayName): \(error)")
            }
        }
    }

    let browser = try Browser(peer: me, serviceType: "chat")
    try browser.start()
    Task {
        for try await event in browser.events {
            guard case .found(let peer, let info) = event, info["room"] == "blue" else { continue }
            do {
                try await browser.invitePeer(peer, to: session, withContext: Data("hi".utf8), timeout: .seconds(10))
            } catch {
                print("\(peer.displayName) did not join: \(error)")
            }
        }
    }

    for await event in session.events {
        switch event {
        case .peerStateChanged(let peer, .connected, _):
            try await session.send(Data("hello".utf8), toPeers: [peer], mode: .reliable)
        case .peerStateChanged(let peer, .notConnected, let reason):
            print("\(peer.displayName) left: \(reason.map { "\($0)" } ?? "unknown")")
        case .dataReceived(let data, let peer, _):
            print("\(peer.displayName): \(String(decoding: data, as: UTF8.self))")
        default:
            break
        }
    }

    await advertiser.stop()
    browser.stop()
    await session.disconnect()
}

// GettingStarted.md, "Send and receive": typed messages.
func typedMessagesSample(session: Session) async throws {
    struct ChatLine: Codable, Sendable {
        var text: String
    }

    try await session.send(ChatLine(text: "hi"), toPeers: session.connectedPeers)
    for try await (line, peer) in session.messages(of: ChatLine.self) {
        print("\(peer.displayName): \(line.text)")
    }
}

// GettingStarted.md, "Streams and files".
func streamsAndFilesSample(session: Session, peer: PeerID, fileURL: URL) async throws {
    let stream = try session.startStream(withName: "log", toPeer: peer)
    try await stream.write(Data("line 1\n".utf8))
    try stream.finish()

    let transfer = try session.sendResource(at: fileURL, withName: "photo.jpg", toPeer: peer)
    try await transfer.wait()
}

// GettingStarted.md, "Without multicast".
func directConnectionSample(session: Session) async throws -> PeerID {
    let peer = try await session.connectPeer(host: "192.0.2.7", port: 7447)
    return peer
}
