import Foundation
import PeerConnectivity

// The README's Swift samples, compiled with the tests; ReadmeSamplesTests checks that every one of them
// stands here line for line (indentation aside), and that its Package.swift sample is a valid manifest.
// Nothing here runs.

// README, "Use".
func useSample() async throws {
    let me = try PeerID(displayName: "alice")  // Codable: persist it to keep your identity
    let session = Session(peer: me)  // encryption required by default, as MPC's

    // Be discoverable and accept invitations.
    let advertiser = try Advertiser(peer: me, discoveryInfo: ["room": "blue"], serviceType: "chat")
    try await advertiser.start()  // DiscoveryError.daemonNotRunning if Avahi is down
    Task {
        for await invitation in advertiser.invitations {
            try await invitation.accept(into: session)  // or invitation.decline()
        }
    }

    // Find peers and invite them.
    let browser = try Browser(peer: me, serviceType: "chat")
    try browser.start()
    Task {
        for try await event in browser.events {
            if case .found(let peer, let info) = event, info["room"] == "blue" {
                try await browser.invitePeer(peer, to: session, withContext: Data("hi".utf8), timeout: .seconds(5))
            }
        }
    }

    // Everything that happens in the session, in order.
    for await event in session.events {
        switch event {
        case .peerStateChanged(let peer, .connected, _):
            try await session.send(Data("hello".utf8), toPeers: [peer], mode: .reliable)
        case .peerStateChanged(let peer, .notConnected, let reason?):
            print("\(peer) left: \(reason)")  // declined, timedOut, livenessTimeout, ...
        case .dataReceived(let data, let peer, _):
            print("\(data.count) bytes from \(peer)")
        default:
            break
        }
    }
}

// README, "Use": porting from MPC.
@MainActor
final class Chat: SessionDelegate {
    func session(_ session: Session, peer peerID: PeerID, didChange state: PeerState) {
        print("\(peerID.displayName) is \(state)")
    }
    func session(_ session: Session, didReceive data: Data, fromPeer peerID: PeerID) {
        print("\(data.count) bytes from \(peerID.displayName)")
    }
    func session(
        _ session: Session,
        didReceive stream: IncomingStream,
        withName streamName: String,
        fromPeer peerID: PeerID
    ) {
        stream.cancel()
    }
    func session(
        _ session: Session,
        didStartReceivingResourceWithName resourceName: String,
        fromPeer peerID: PeerID,
        with progress: Progress
    ) {}
    func session(
        _ session: Session,
        didFinishReceivingResourceWithName resourceName: String,
        fromPeer peerID: PeerID,
        at localURL: URL?,
        withError error: TransferError?
    ) {}
}
// session.delegate = chat   // held weakly, as MPC's
