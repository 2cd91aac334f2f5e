import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The baseline's server: a plain TCP echo of length-prefixed frames, a thread per connection, blocking
/// sockets. It reads each frame whole and writes it back with one call, as the reflector echoes each
/// message whole.
public final class RawEchoServer: Sendable {
    /// The longest frame accepted; a longer length closes the connection.
    public static let maximumFrameLength = 64 << 20

    private struct State {
        var connections: Set<Int32> = []
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
        let connections = state.withLock { state in
            state.stopped = true
            return state.connections
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for fd in connections {
            shutdown(fd, Int32(SHUT_RDWR))
        }
    }

    private func serve(_ fd: Int32) {
        let thread = Thread { [self] in
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
}
