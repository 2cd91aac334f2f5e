import NIOCore
import NIOPosix
import PeerConnectivityCore
import PeerConnectivityTransport
import Testing

/// `PeerEventLoop` gives each local peer one event loop for good, and spreads peers over the loops.
@Suite("Peer event loops")
struct PeerEventLoopTests {
    @Test("a peer keeps its loop; peers made one after another do not all share one loop")
    func spread() throws {
        let loopCount = Array(MultiThreadedEventLoopGroup.singleton.makeIterator()).count
        let peers = try (0..<8).map { try PeerID(displayName: "loop-\($0)") }
        let first = peers.map { ObjectIdentifier(PeerEventLoop.loop(for: $0)) }
        let again = peers.map { ObjectIdentifier(PeerEventLoop.loop(for: $0)) }
        #expect(first == again)
        // Taken in turn (other tests may take turns in between): with two loops or more, eight peers
        // in a row land on at least two. From their ids alone, two peers shared a loop half of the time.
        if loopCount > 1 {
            #expect(Set(first).count >= 2)
        }
    }
}
