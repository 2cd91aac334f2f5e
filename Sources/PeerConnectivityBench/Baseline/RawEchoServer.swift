import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The baseline's server: an echo of length-prefixed frames over plain TCP or TLS. It reads each frame
/// whole and writes it back with one call, as the reflector echoes each message whole.
///
/// A plain connection is served by a thread of its own with blocking sockets: no event loop, no task
/// switch. A connection whose first byte starts a TLS handshake is handed to a SwiftNIO channel with
/// swift-nio-ssl (``BaselineTLS``), as a session's TLS is.
public final class RawEchoServer: Sendable {
    /// The longest frame accepted; a longer length closes the connection.
    public static let maximumFrameLength = 64 << 20

    private struct State {
        var connections: Set<Int32> = []
        var tlsChannels: [ObjectIdentifier: any Channel] = [:]
        var stopped = false
    }

    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    private let log: @Sendable (String) -> Void
    private let state = Mutex(State())

    /// Binds the listening socket; nothing is accepted until ``start()``.
    ///
    /// - Parameters:
    ///   - host: the IPv4 address to bind, every interface by default.
    ///   - port: the port, 0 for an ephemeral one.
    ///   - log: where connections and their ends are reported.
    /// - Throws: ``BenchError/socket(_:errno:)`` when the port cannot be bound.
    public init(host: String = "0.0.0.0", port: Int = 0, log: @escaping @Sendable (String) -> Void) throws(BenchError) {
        (listener, self.port) = try TCPSocket.listen(host: host, port: port)
        self.log = log
    }

    /// Accepts connections on a thread until ``stop()``.
    public func start() {
        let thread = Thread { [self] in
            while true {
                let fd = accept(listener, nil, nil)
                if fd < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    break
                }
                let admitted = state.withLock { state in
                    guard !state.stopped else { return false }
                    state.connections.insert(fd)
                    return true
                }
                guard admitted else {
                    close(fd)
                    break
                }
                TCPSocket.noDelay(fd)
                serve(fd)
            }
            close(listener)
        }
        thread.start()
    }

    /// Stops accepting and ends every connection.
    public func stop() {
        let (connections, channels) = state.withLock { state in
            state.stopped = true
            return (state.connections, state.tlsChannels.values)
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for fd in connections {
            shutdown(fd, Int32(SHUT_RDWR))
        }
        for channel in channels {
            channel.close(promise: nil)
        }
    }

    private func serve(_ fd: Int32) {
        let thread = Thread { [self] in
            var first: UInt8 = 0
            if recv(fd, &first, 1, Int32(MSG_PEEK)) == 1, first == BaselineTLS.handshakeRecordType {
                serveTLS(fd)
                return
            }
            log("raw connection opened (fd \(fd))")
            var frames = 0
            var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 8)
            defer {
                buffer.deallocate()
                state.withLock { _ = $0.connections.remove(fd) }
                close(fd)
                log("raw connection closed (fd \(fd)) after \(frames) frames")
            }
            while let length = TCPSocket.readFrameLength(fd), length <= Self.maximumFrameLength {
                let total = TCPSocket.frameHeaderBytes + length
                if total > buffer.count {
                    buffer.deallocate()
                    buffer = .allocate(byteCount: total, alignment: 8)
                }
                let frame = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<total])
                TCPSocket.writeFrameLength(length, into: frame)
                guard
                    TCPSocket.readExactly(
                        fd,
                        UnsafeMutableRawBufferPointer(rebasing: frame[TCPSocket.frameHeaderBytes...])
                    ),
                    TCPSocket.writeAll(fd, UnsafeRawBufferPointer(frame))
                else { return }
                frames += 1
            }
        }
        thread.start()
    }

    /// Hands a connection that starts with a TLS handshake to a channel that echoes its frames.
    private func serveTLS(_ fd: Int32) {
        state.withLock { _ = $0.connections.remove(fd) }
        let context: NIOSSLContext
        do {
            context = try BaselineTLS.serverContext.get()
        } catch {
            log("raw TLS connection refused: no TLS context: \(error)")
            close(fd)
            return
        }
        let log = self.log
        let adopted = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        NIOSSLServerHandler(context: context),
                        ByteToMessageHandler(FrameLengthDecoder(maximumLength: Self.maximumFrameLength)),
                        FrameEchoHandler(log: log)
                    )
                }
            }
            .withConnectedSocket(fd)
        adopted.whenSuccess { [self] channel in
            log("raw TLS connection opened (fd \(fd))")
            let key = ObjectIdentifier(channel)
            let stopped = state.withLock { state in
                if !state.stopped { state.tlsChannels[key] = channel }
                return state.stopped
            }
            if stopped { channel.close(promise: nil) }
            channel.closeFuture.whenComplete { [self] _ in
                state.withLock { _ = $0.tlsChannels.removeValue(forKey: key) }
            }
        }
        // The bootstrap owns the descriptor from here, and closes it when adopting it fails.
        adopted.whenFailure { error in
            log("raw TLS connection refused: \(error)")
        }
    }
}
