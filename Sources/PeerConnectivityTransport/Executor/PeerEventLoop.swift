import NIOCore
import NIOPosix
import PeerConnectivityCore

/// Where a local peer's I/O runs: one event loop of NIO's shared group, the same one for every session,
/// advertiser and socket of that peer. A task on that loop's ``EventLoopTaskExecutor`` then reads the
/// peer's events and sends on its connections without a hop between threads.
package enum PeerEventLoop {
    private static let loops: [any EventLoop] = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())

    /// The event loop of `peer`'s I/O, chosen from its id so that every caller gets the same one.
    ///
    /// - Parameter peer: a local peer.
    /// - Returns: its event loop.
    package static func loop(for peer: PeerID) -> any EventLoop {
        let index = peer.id.uuid.15
        return loops[Int(index) % loops.count]
    }
}
