import Foundation
import PeerConnectivity

/// Peers whose ids order as named, for the machines' tie-breaks: `low` wins every one, `high` none.
enum OrderedPeers {
    static let low = try! PeerID(id: UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!, displayName: "low")
    static let middle = try! PeerID(
        id: UUID(uuidString: "80000000-0000-0000-0000-00000000000C")!,
        displayName: "middle"
    )
    static let high = try! PeerID(id: UUID(uuidString: "F0000000-0000-0000-0000-00000000000B")!, displayName: "high")
}
