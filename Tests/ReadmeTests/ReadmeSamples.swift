import Foundation
import PeerConnectivity

// The README's Swift samples, compiled with the tests; ReadmeSamplesTests checks that every one of them
// stands here line for line (indentation aside), and that its Package.swift sample is a valid manifest.
// Nothing here runs.

// README, "Use".
func useSample() async throws {
    let me = try PeerID(displayName: "alice")  // Codable: persist it to keep your identity
    let session = Session(peer: me)  // encryption required by default, as MPC's
    let advertiser = try Advertiser(peer: me, discoveryInfo: ["room": "blue"], serviceType: "chat")
    try await advertiser.start()  // DiscoveryError.daemonNotRunning if Avahi is down
    Task {  // accept every invitation
        for await invitation in advertiser.invitations {
            try await invitation.accept(into: session)  // or invitation.decline()
        }
    }
    let browser = try Browser(peer: me, serviceType: "chat")
    try browser.start()
    Task {  // invite the peers of room blue
        for try await event in browser.events {
            if case .found(let peer, let info) = event, info["room"] == "blue" {
                try await browser.invitePeer(peer, to: session, withContext: Data("hi".utf8), timeout: .seconds(5))
            }
        }
    }
    for await event in session.events {  // everything that happens in the session, in order
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
