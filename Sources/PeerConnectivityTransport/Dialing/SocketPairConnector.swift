import NIOCore
import NIOPosix
import PeerConnectivityCore

/// Joins two sides of one process over a connected pair of local sockets: no address, no port, no
/// network in between, yet each end a real channel with the real ``ConnectionHandler`` (handshake,
/// encryption, frames, timers), as over TCP. For tests, of the library and of apps.
package enum SocketPairConnector {
    /// One end of the pair: who it is, its role in the handshake and who hears its events.
    package struct End: Sendable {
        /// This end's identity, sent in HELLO.
        package var localPeer: PeerID
        /// `.inviter` on one end, `.invitee` on the other.
        package var role: ConnectionStateMachine.Role
        /// Limits, timers and security of this end.
        package var configuration: ConnectionConfiguration
        /// The event loop this end runs on.
        package var eventLoop: any EventLoop
        /// Receives this end's events.
        package var delegate: any ConnectionDelegate

        /// Describes one end.
        ///
        /// - Parameters:
        ///   - localPeer: this end's identity.
        ///   - role: its role in the handshake.
        ///   - configuration: its limits, timers and security.
        ///   - eventLoop: the event loop it runs on.
        ///   - delegate: receives its events.
        package init(
            localPeer: PeerID,
            role: ConnectionStateMachine.Role,
            configuration: ConnectionConfiguration,
            eventLoop: any EventLoop,
            delegate: any ConnectionDelegate
        ) {
            self.localPeer = localPeer
            self.role = role
            self.configuration = configuration
            self.eventLoop = eventLoop
            self.delegate = delegate
        }
    }

    /// Makes the pair and starts the handshake on both ends (the inviter's HELLO and INVITE go out at once).
    ///
    /// - Parameters:
    ///   - first: one end.
    ///   - second: the other end.
    /// - Returns: the two connections, handshake under way.
    /// - Throws: ``SystemCallError`` when the system gives no socket pair, or what setting up a channel throws.
    package static func connect(_ first: End, _ second: End) async throws -> (Connection, Connection) {
        let (one, other) = try Platform.makeSocketPair()
        let firstConnection: Connection
        do {
            firstConnection = try await start(first, on: one)
        } catch {
            Platform.close(other)
            throw error
        }
        do {
            return (firstConnection, try await start(second, on: other))
        } catch {
            firstConnection.close(.localDisconnect.with(detail: "the other end of the socket pair failed: \(error)"))
            throw error
        }
    }

    /// Takes over `descriptor` as a channel on the end's event loop, with the connection's handler in it
    /// before the first byte is read.
    private static func start(_ end: End, on descriptor: Int32) async throws -> Connection {
        try await ClientBootstrap(group: end.eventLoop)
            .channelOption(.writeBufferWaterMark, value: .init(low: 1 << 20, high: 4 << 20))
            .channelOption(.recvAllocator, value: ConnectionConfiguration.receiveAllocator)
            .withConnectedSocket(descriptor) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try ConnectionHandler.install(
                        on: channel,
                        localPeer: end.localPeer,
                        role: end.role,
                        configuration: end.configuration,
                        delegate: end.delegate
                    )
                }
            }
    }
}
