import Foundation
import NIOCore
import NIOPosix
import PeerConnectivityCore
import Synchronization

/// Where a local peer's I/O runs: one event loop of NIO's shared group (or of the group an app passes in),
/// the same one for every session, advertiser and socket of that peer. A task on that loop's
/// ``EventLoopTaskExecutor`` then reads the peer's events and sends on its connections without a hop
/// between threads.
///
/// Local peers take the loops in turn, so that two peers in one process (an app's tests, a benchmark, a
/// simulator of several devices) do their I/O on different threads when there are several. Before, the
/// loop came from the peer's id alone: two peers shared one thread half of the time, and a transfer
/// between them then ran on one core, at half the speed or less.
package enum PeerEventLoop {
    private static let loops: [any EventLoop] = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())

    /// Peers given a turn (entries are never removed, so the next turn is the table's count); a peer's loop
    /// is its turn modulo the group's loops.
    /// Past ``assignmentLimit`` peers, a new peer's loop comes from its id, so that the table stays
    /// bounded in a process that makes peers without end.
    private static let assignments = Mutex<[UUID: Int]>([:])

    /// How many local peers get their loop in turn; further peers get theirs from their id.
    package static let assignmentLimit = 1024

    /// The event loop of `peer`'s I/O: for one group, the same one for every caller, all the process's life.
    ///
    /// - Parameters:
    ///   - peer: a local peer.
    ///   - group: the group to take it from; nil for NIO's shared group.
    /// - Returns: its event loop.
    package static func loop(for peer: PeerID, in group: (any EventLoopGroup)? = nil) -> any EventLoop {
        let turn = assignments.withLock { table -> Int in
            if let turn = table[peer.id] { return turn }
            guard table.count < assignmentLimit else { return Int(peer.id.uuid.15) }
            let turn = table.count
            table[peer.id] = turn
            return turn
        }
        let loops = group.map { Array($0.makeIterator()) } ?? Self.loops
        return loops[turn % loops.count]
    }
}
