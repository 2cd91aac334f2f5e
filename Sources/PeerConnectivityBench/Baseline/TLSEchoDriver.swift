import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// The raw-tcp test's driver when the run is encrypted: the same length-prefixed frames as
/// ``RawEchoDriver``, over TLS 1.3 from swift-nio-ssl on a SwiftNIO channel (the stack a session's TLS
/// runs on), with no session framing. A sender thread per phase writes; the channel's handler hands
/// each echo to the phase.
final class TLSEchoDriver: EchoDriver {
    private let channel: any Channel
    private let pattern: PayloadPattern
    private let phase: CurrentPhase
    /// How the link was secured: "TLS 1.3, TLS_AES_128_GCM_SHA256".
    let linkSecurity: String

    private init(channel: any Channel, pattern: PayloadPattern, phase: CurrentPhase, linkSecurity: String) {
        self.channel = channel
        self.pattern = pattern
        self.phase = phase
        self.linkSecurity = linkSecurity
    }

    /// Connects to the raw echo server and completes the TLS handshake.
    ///
    /// - Throws: ``BenchError`` when the connection or the handshake fails or takes longer than `timeout`.
    static func connect(
        host: String,
        port: Int,
        pattern: PayloadPattern,
        timeout: Duration,
        family: AddressFamily = .any,
        localAddress: String? = nil
    ) async throws -> TLSEchoDriver {
        let context: NIOSSLContext
        do {
            context = try BaselineTLS.clientContext.get()
        } catch {
            throw BenchError.disconnected("the raw baseline's TLS context could not be made: \(error)")
        }
        let phase = CurrentPhase()
        let cipher = Mutex<String?>(nil)
        let handshake = Mutex<EventLoopFuture<Void>?>(nil)
        let channel: any Channel
        do {
            var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .connectTimeout(.nanoseconds(Int64(timeout.seconds * 1e9)))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let receiver = TLSEchoReceiver(phase: phase, pattern: pattern, eventLoop: channel.eventLoop)
                        handshake.withLock { $0 = receiver.handshakeCompleted }
                        try channel.pipeline.syncOperations.addHandlers(
                            ServerHelloObserver(isClient: true) { suite in
                                cipher.withLock { $0 = suite.map(TLSServerHello.name(ofCipherSuite:)) }
                            },
                            try NIOSSLClientHandler(context: context, serverHostname: nil),
                            ByteToMessageHandler(FrameLengthDecoder(maximumLength: max(pattern.maximumSize, 1))),
                            receiver
                        )
                    }
                }
            // The address of the family asked, or of the local address's, resolved here: NIO's takes both.
            var address = host
            if let localAddress {
                let local = try SocketAddress(ipAddress: localAddress, port: 0)
                bootstrap = bootstrap.bind(to: local)
                let localFamily: AddressFamily = local.protocol == .inet6 ? .ipv6 : .ipv4
                address = try TCPSocket.addresses(of: host, family: localFamily).first ?? host
            } else if family != .any {
                address = try TCPSocket.addresses(of: host, family: family).first ?? host
            }
            channel = try await bootstrap.connect(host: address, port: port).get()
        } catch {
            throw BenchError.disconnected("the raw echo server at \(host):\(port) could not be reached: \(error)")
        }
        let timedOut = Atomic(false)
        let timer = channel.eventLoop.scheduleTask(in: .nanoseconds(Int64(timeout.seconds * 1e9))) {
            timedOut.store(true, ordering: .relaxed)
            channel.close(promise: nil)
        }
        do {
            try await handshake.withLock { $0 }?.get()
            timer.cancel()
        } catch {
            timer.cancel()
            channel.close(promise: nil)
            if timedOut.load(ordering: .relaxed) {
                throw BenchError.disconnected("the raw baseline's TLS handshake took longer than \(timeout)")
            }
            throw error as? BenchError ?? BenchError.disconnected("the raw baseline's TLS handshake failed: \(error)")
        }
        let version = try? await channel.pipeline.handler(type: NIOSSLClientHandler.self).flatMap {
            $0.tlsVersion.map { channel.eventLoop.makeSucceededFuture($0) }
                ?? channel.eventLoop.makeSucceededFuture(nil)
        }.get()
        let summary = [BaselineTLS.name(of: version ?? nil), cipher.withLock { $0 }].compactMap { $0 }
            .joined(separator: ", ")
        return TLSEchoDriver(channel: channel, pattern: pattern, phase: phase, linkSecurity: summary)
    }

    func run(_ controller: LoadController, size: Int) async throws {
        try await phase.during(controller, size: size, onThread: { [self] in try send(controller, size: size) })
    }

    func close() async {
        try? await channel.close()
    }

    private func send(_ controller: LoadController, size: Int) throws {
        let allocator = channel.allocator
        try controller.sendBlocking { sequence in
            var frame = allocator.buffer(capacity: TCPSocket.frameHeaderBytes + size)
            frame.writeInteger(UInt32(size))
            frame.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { bytes in
                pattern.write(sequence: sequence, into: UnsafeMutableRawBufferPointer(rebasing: bytes[0..<size]))
                return size
            }
            guard channel.isActive else {
                let error = BenchError.disconnected("the raw TLS echo connection failed while sending")
                controller.fail(error)
                throw error
            }
            channel.writeAndFlush(frame, promise: nil)
        }
    }
}
