import NIOCore
import NIOPosix
import PeerConnectivityCore

/// A session's UDP socket for unreliable messages: best effort, apart from the TCP connections so
/// that it never delays reliable traffic.
///
/// `send` drops a datagram rather than queue it when the socket's buffer is full, so memory never
/// grows; received datagrams go to a closure on the socket's event loop.
package final class DatagramEndpoint: Sendable {
    private let channel: any Channel
    /// The bound UDP port.
    package let port: Int
    /// Whether the socket is an IPv6 one (bound to "::"), which sends to IPv4 peers at their IPv4-mapped address.
    private let isIPv6: Bool

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
        self.isIPv6 = channel.localAddress?.protocol == .inet6
    }

    /// Binds a UDP socket on the first free port of `ports`, or on an ephemeral port.
    ///
    /// No SO_REUSEADDR: two UDP sockets with it may share a port, and then only one of them receives.
    ///
    /// - Parameters:
    ///   - host: the address to bind ("::": every interface, IPv6 and IPv4, see ``DualStack``;
    ///     "0.0.0.0": every IPv4 interface).
    ///   - ports: the ports to try in order (for a firewall rule); nil for an ephemeral one.
    ///   - group: the event loops to run on.
    ///   - receive: called on the event loop with each datagram and its sender.
    /// - Returns: a future for the endpoint; it fails when no port of `ports` is free.
    package static func bind(
        host: String,
        ports: ClosedRange<Int>? = nil,
        group: any EventLoopGroup,
        receive: @escaping @Sendable (ByteBuffer, SocketAddress) -> Void
    ) -> EventLoopFuture<DatagramEndpoint> {
        guard let ports else { return bind(host: host, port: 0, group: group, receive: receive) }
        @Sendable func attempt(_ port: Int) -> EventLoopFuture<DatagramEndpoint> {
            bind(host: host, port: port, group: group, receive: receive).flatMapError { error in
                guard port < ports.upperBound else {
                    return group.next().makeFailedFuture(PortsInUse(ports: ports, lastError: "\(error)"))
                }
                return attempt(port + 1)
            }
        }
        return attempt(ports.lowerBound)
    }

    private static func bind(
        host: String,
        port: Int,
        group: any EventLoopGroup,
        receive: @escaping @Sendable (ByteBuffer, SocketAddress) -> Void
    ) -> EventLoopFuture<DatagramEndpoint> {
        @Sendable func attempt(_ addresses: ArraySlice<String>) -> EventLoopFuture<DatagramEndpoint> {
            guard let address = addresses.first else {
                return group.next().makeFailedFuture(ChannelError.unknownLocalAddress)
            }
            var bootstrap = DatagramBootstrap(group: group)
                .channelOption(.socketOption(.so_rcvbuf), value: 4 << 20)
                // Datagrams up to the largest unreliable message must not be cut: NIO's default is 2 KiB.
                .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 1 << 16))
            if address == DualStack.anyAddress {
                bootstrap = bootstrap.channelOption(DualStack.ipv6OnlyOption, value: 0)
            }
            return bootstrap.channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(DatagramReceiveHandler(receive: receive))
                }
            }
            .bind(host: address, port: port)
            .flatMapThrowing { channel in
                DatagramEndpoint(channel: channel, port: channel.localAddress?.port ?? 0)
            }
            .flatMapError { error in
                // "::" where the system has no IPv6: "0.0.0.0" next; any other failure is the caller's.
                addresses.count > 1 ? attempt(addresses.dropFirst()) : group.next().makeFailedFuture(error)
            }
        }
        return attempt(DualStack.bindAddresses(for: host)[...])
    }

    /// No port of a range could be bound.
    package struct PortsInUse: Error, CustomStringConvertible {
        /// The range tried.
        package let ports: ClosedRange<Int>
        /// Why the last one failed.
        package let lastError: String

        package var description: String {
            "no UDP port of \(ports.lowerBound)-\(ports.upperBound) could be bound (the last: \(lastError))"
        }
    }

    /// Sends one datagram, or drops it when the socket cannot take more now.
    ///
    /// - Parameters:
    ///   - datagram: the bytes.
    ///   - address: where to (an IPv4 address goes out in its IPv4-mapped form from an IPv6 socket).
    /// - Returns: whether it was handed to the socket.
    @discardableResult
    package func send(_ datagram: ByteBuffer, to address: SocketAddress) -> Bool {
        guard channel.isActive, channel.isWritable else { return false }
        let address = isIPv6 ? Platform.ipv4Mapped(address) : address
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: datagram), promise: nil)
        return true
    }

    /// Closes the socket.
    package func close() {
        channel.close(promise: nil)
    }
}

/// Hands each datagram to the endpoint's closure.
private final class DatagramReceiveHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let receive: @Sendable (ByteBuffer, SocketAddress) -> Void

    init(receive: @escaping @Sendable (ByteBuffer, SocketAddress) -> Void) {
        self.receive = receive
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        receive(envelope.data, envelope.remoteAddress)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A datagram socket reports ICMP errors (port unreachable) here; best effort ignores them.
    }
}
